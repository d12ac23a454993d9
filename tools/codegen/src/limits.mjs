import { banner } from "./document.mjs";

/** The JSON Schema keywords that carry a number the API promises, copied as they are. */
const NUMERIC_KEYWORDS = [
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "default",
];

const positiveInteger = (value) => Number.isSafeInteger(value) && value > 0;
const positiveNumber = (value) => Number.isFinite(value) && value > 0;
const regularExpression = (value) => {
  if (typeof value !== "string") return false;
  try {
    new RegExp(value, "u");
    return true;
  } catch {
    return false;
  }
};

/**
 * The spec's extensions for rules JSON Schema cannot say (spec/CONVENTIONS.md), with the
 * names they are emitted as and what their value must be: the most bytes of a value's
 * JSON, how deep it may nest, the pattern of every property name in it, what the
 * service keeps of a list that pages add to, the bounds of an uploaded archive, and how
 * old a value read from a browser may be.
 */
const EXTENSIONS = {
  "x-max-bytes": { name: "maxBytes", valid: positiveInteger, expected: "a positive integer" },
  "x-max-depth": { name: "maxDepth", valid: positiveInteger, expected: "a positive integer" },
  "x-property-name-pattern": { name: "propertyNamePattern", valid: regularExpression, expected: "a regular expression (with the u flag)" },
  "x-max-items-per-document": { name: "maxItemsPerDocument", valid: positiveInteger, expected: "a positive integer" },
  "x-max-items-per-tab": { name: "maxItemsPerTab", valid: positiveInteger, expected: "a positive integer" },
  "x-max-definition-bytes": { name: "maxDefinitionBytes", valid: positiveInteger, expected: "a positive integer" },
  "x-max-entries": { name: "maxEntries", valid: positiveInteger, expected: "a positive integer" },
  "x-max-entry-name-bytes": { name: "maxEntryNameBytes", valid: positiveInteger, expected: "a positive integer" },
  "x-max-unpacked-bytes": { name: "maxUnpackedBytes", valid: positiveInteger, expected: "a positive integer" },
  "x-max-compression-ratio": { name: "maxCompressionRatio", valid: positiveNumber, expected: "a positive number" },
  "x-max-age-ms": { name: "maxAgeMs", valid: positiveInteger, expected: "a positive integer" },
};

/** The spec's extension keywords: annotations that validators leave to the server. */
export const EXTENSION_KEYWORDS = Object.keys(EXTENSIONS);

/** Where a schema that is a component itself sits. */
const COMPONENT_SCHEMA = /^#\/components\/schemas\/[^/]+$/;

/** Keywords whose value is a list of alternative or combined subschemas. */
const LIST_KEYWORDS = ["allOf", "anyOf", "oneOf", "prefixItems"];

const isObject = (node) => node !== null && typeof node === "object" && !Array.isArray(node);

/**
 * The numeric rules of one schema and of its inline subschemas (properties by name,
 * `items`, and the alternatives of `oneOf`/`anyOf`/`allOf`, by position), without
 * following `$ref`: a referenced component has its own entry. `undefined` when it has none.
 */
function rulesOf(schema, where) {
  if (!isObject(schema)) return undefined;
  const rules = {};
  const put = (key, value) => {
    if (key in rules) throw new Error(`codegen limits: ${where} has both a property and a rule named "${key}"; rename the property.`);
    rules[key] = value;
  };
  for (const keyword of NUMERIC_KEYWORDS) {
    if (typeof schema[keyword] === "number") put(keyword, schema[keyword]);
  }
  // A component that is a list of names (TelemetryCdpMethod, Region): code that must act
  // on exactly those names reads them here rather than writing the list again.
  if (COMPONENT_SCHEMA.test(where) && Array.isArray(schema.enum) && schema.enum.every((value) => typeof value === "string")) put("enum", schema.enum);
  for (const [extension, { name, valid, expected }] of Object.entries(EXTENSIONS)) {
    if (!(extension in schema)) continue;
    const value = schema[extension];
    if (!valid(value)) throw new Error(`codegen limits: ${where}/${extension} must be ${expected}, found ${JSON.stringify(value)}.`);
    put(name, value);
  }
  if (isObject(schema.properties)) {
    for (const [name, property] of Object.entries(schema.properties)) {
      const nested = rulesOf(property, `${where}/properties/${name}`);
      if (nested) put(name, nested);
    }
  }
  const items = rulesOf(schema.items, `${where}/items`);
  if (items) put("items", items);
  for (const keyword of LIST_KEYWORDS) {
    if (!Array.isArray(schema[keyword])) continue;
    const alternatives = schema[keyword].map((sub, i) => rulesOf(sub, `${where}/${keyword}/${i}`));
    if (alternatives.some(Boolean))
      put(
        keyword,
        alternatives.map((rule) => rule ?? {}),
      );
  }
  return Object.keys(rules).length > 0 ? rules : undefined;
}

/**
 * Every numeric rule of the document's components, by component kind and name:
 * `schemas.X` from the schema itself, `parameters.X` and `headers.X` from their `schema`.
 * Kinds and components without rules are left out; names keep the document's order.
 */
export function collectLimits(document) {
  const components = document.components ?? {};
  const limits = {};
  for (const [kind, schemaOf] of [
    ["schemas", (component) => component],
    ["parameters", (component) => component.schema],
    ["headers", (component) => component.schema],
  ]) {
    const entries = Object.entries(components[kind] ?? {})
      .map(([name, component]) => [name, rulesOf(schemaOf(component), `#/components/${kind}/${name}`)])
      .filter(([, rules]) => rules !== undefined);
    if (entries.length > 0) limits[kind] = Object.fromEntries(entries);
  }
  return limits;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

const keySource = (key) => (IDENTIFIER.test(key) ? key : JSON.stringify(key));

/** A value of {@link collectLimits} as TypeScript source: one rule set per line, the rest one key per line. */
function source(value, indent, comment) {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return JSON.stringify(value);
  const entries = Object.entries(value);
  if (!Array.isArray(value) && !comment && entries.every(([, item]) => typeof item === "number" || typeof item === "string")) {
    return entries.length === 0 ? "{}" : `{ ${entries.map(([key, item]) => `${keySource(key)}: ${source(item, indent + 1)}`).join(", ")} }`;
  }
  const pad = "  ".repeat(indent + 1);
  if (Array.isArray(value)) return `[\n${value.map((item) => `${pad}${source(item, indent + 1)},\n`).join("")}${"  ".repeat(indent)}]`;
  const lines = entries.map(([key, item]) => {
    const doc = comment?.(key);
    return `${doc ? `${pad}/** ${doc} */\n` : ""}${pad}${keySource(key)}: ${source(item, indent + 1)},\n`;
  });
  return `{\n${lines.join("")}${"  ".repeat(indent)}}`;
}

/**
 * `limits.ts` of `@browser-service/types`: the `limits` constant, every numeric rule of
 * the spec and its extensions (`x-max-bytes`, `x-max-depth`, ...), so that no package
 * writes one of them again.
 */
export function generateLimits(document) {
  const limits = collectLimits(document);
  const kinds = Object.entries(limits).map(([kind, components]) => {
    const byName = source(components, 1, (name) => `\`#/components/${kind}/${name}\``);
    return `  ${kind}: ${byName},\n`;
  });
  return `${banner("types")}
/**
 * Every numeric rule of the API, as the OpenAPI document states it, by component:
 * \`limits.schemas.<Schema>\` (and \`.<property>\`, \`.items\`, \`.oneOf[i]\` below it),
 * \`limits.parameters.<Parameter>\` and \`limits.headers.<Header>\`. Each rule keeps its
 * JSON Schema name (\`minimum\`, \`maximum\`, \`minLength\`, \`maxLength\`, \`default\`, ...);
 * \`maxBytes\` is the spec's \`x-max-bytes\`: the most bytes of a request body as sent, of a
 * response body as the server sends it, of a binary part of a form as sent, or of a
 * property's value serialized as compact JSON in UTF-8; \`maxDepth\` is its
 * \`x-max-depth\`: how many levels of objects and arrays a value may nest (\`{}\` is one);
 * \`propertyNamePattern\` is its \`x-property-name-pattern\`: what every property name of
 * a value, at any depth, matches (a regular expression for the \`u\` flag);
 * \`maxItemsPerDocument\`, \`maxItemsPerTab\` and \`maxDefinitionBytes\` are what the
 * service keeps of a list that pages add to;
 * \`maxEntries\`, \`maxEntryNameBytes\`, \`maxUnpackedBytes\` and \`maxCompressionRatio\` bound
 * an uploaded archive: its entries, the UTF-8 bytes of each entry's name, the bytes its
 * contents unpack to, and the largest ratio of those bytes to the archive's size
 * \`maxAgeMs\` is its \`x-max-age-ms\`: a value the service reports from a browser was
 * read less than that many milliseconds before the request arrived (spec/CONVENTIONS.md);
 * \`enum\` is the list of values of a component schema that is a string enum.
 *
 * @example
 * \`\`\`ts
 * import { limits } from "@browser-service/types";
 * const { minimum, maximum } = limits.schemas.WebMcpInvokeRequest.timeout_sec; // 1, 120
 * \`\`\`
 */
export const limits = {
${kinds.join("")}} as const;
`;
}
