import { banner, listOperations } from "./document.mjs";
import { compileModule } from "./validators-compile.mjs";
import { collectHints } from "./validators-hints.mjs";
import { escapeSegment, referencedComponent, resolvePointer } from "./validators-schema.mjs";
import { validatorsModule } from "./validators-wrappers.mjs";

/** Parameter locations, and the key each has in an operation's validators. */
const parameterLocations = [
  ["path", "path"],
  ["query", "query"],
  ["header", "headers"],
];

/** A node and its location, following the `$ref` of a shared one (`#/components/responses/X`). */
const located = (document, node, path) => (node.$ref ? { node: resolvePointer(document, node.$ref), path: node.$ref } : { node, path });

/**
 * The body of a request or response: its media type (the first listed), whether it is
 * required, where its schema is, and the component that schema merely refers to, if so.
 */
function bodyOf(document, raw, rawPath) {
  const { node, path } = located(document, raw, rawPath);
  const [mediaType] = Object.keys(node.content ?? {});
  if (mediaType === undefined) return undefined;
  const schema = node.content[mediaType].schema;
  return {
    mediaType,
    required: node.required === true,
    path: `${path}/content/${escapeSegment(mediaType)}/schema`,
    component: referencedComponent(schema),
  };
}

/** Whether a parameter is serialized as the form style's repeated key (OpenAPI's default for the query). */
const isRepeatedForm = (p) => (p.style ?? "form") === "form" && p.explode !== false;

/** Whether an item schema is a string or integer, possibly by `$ref` to one (enums and patterns included). */
const isScalar = (items) => items !== undefined && (items.$ref !== undefined || ["string", "integer", "boolean"].includes(items.type));

/**
 * The object schema of one location's parameters, as a server sees them after parsing a
 * request: one property per parameter (header names lowercased, since HTTP header names
 * are case-insensitive and Node lowercases them), `required` from each parameter's
 * `required`. Headers admit any other header; path and query admit nothing else.
 */
function parametersSchema(op, location, parameters) {
  const key = (p) => (location === "header" ? p.name.toLowerCase() : p.name);
  for (const p of parameters) {
    if (!p.schema) throw new Error(`validators: parameter ${p.name} of ${op.id} has no schema (content is not supported)`);
    const types = [p.schema.type].flat();
    // A query array is the form style's repeated parameter (`?a=x&a=y`): a server's parser
    // gives an array for a repeated one and a string for one given once, which the
    // coercion makes an array of one. Nothing else of an array or object is readable.
    const repeatable = location === "query" && types.length === 1 && types[0] === "array" && isRepeatedForm(p) && isScalar(p.schema.items);
    if (!repeatable && types.some((t) => t === "array" || t === "object")) {
      throw new Error(`validators: parameter ${p.name} of ${op.id} is not a scalar; its serialization is not supported`);
    }
  }
  return {
    type: "object",
    properties: Object.fromEntries(parameters.map((p) => [key(p), p.schema])),
    required: parameters.filter((p) => p.required).map(key),
    additionalProperties: location === "header",
  };
}

/** What the generator needs of one operation: its inputs and response bodies, each compiled or a component's. */
function describeOperation(document, op) {
  const base = `#/paths/${escapeSegment(op.path)}/${op.method}`;
  // An operation's parameter overrides the path item's of the same name and location.
  const parameters = [...new Map(op.parameters.map((p) => [`${p.in} ${p.name}`, p])).values()];
  const inputs = parameterLocations
    .map(([location, key]) => ({ location, key, parameters: parameters.filter((p) => p.in === location) }))
    .filter((input) => input.parameters.length > 0)
    .map(({ location, key, parameters: list }) => ({ key, schema: parametersSchema(op, location, list) }));
  const body = op.operation.requestBody && bodyOf(document, op.operation.requestBody, `${base}/requestBody`);
  const responses = Object.entries(op.operation.responses)
    .map(([status, response]) => ({ status, body: bodyOf(document, response, `${base}/responses/${escapeSegment(status)}`) }))
    // Bytes (an archive) have no schema to check; only JSON bodies get a validator.
    .filter((response) => response.body?.mediaType === "application/json")
    .map(({ status, body: b }) => ({ status, ...b, exportName: `operation$${op.id}$response${status}` }));
  return { ...op, inputs, body: body && { ...body, exportName: `operation$${op.id}$body` }, responses };
}

/**
 * Gives each operation input the export name of its compiled validator, one per distinct
 * schema (most operations share their headers), and returns those schemas as units.
 */
function shareParameterSchemas(operations) {
  const units = new Map();
  for (const op of operations) {
    for (const input of op.inputs) {
      const json = JSON.stringify(input.schema);
      if (!units.has(json)) {
        const n = [...units.values()].filter((unit) => unit.key === input.key).length;
        // The path is made up: the document has no object schema for an operation's parameters.
        units.set(json, { key: input.key, exportName: `${input.key}$${n}`, path: `#/x-parameters/${input.key}/${n}`, schema: input.schema });
      }
      input.exportName = units.get(json).exportName;
    }
  }
  return [...units.values()];
}

// Ajv coerces any string that JavaScript's `+` reads as a whole number, so `0x10`, `+5`,
// ` 5`, `1e3` and `05` pass as integers. On the wire an integer parameter is plain
// decimal (the spec's "Lists" section says so): `0`, or digits without a leading zero, with
// `-` for a negative value. Anything else fails the parameter's `type` rule, and so do
// digits past any double (309 and more), which would read as Infinity: Ajv skips
// `maximum` for a value that is not finite, and the value would be serialized as null.
const laxIntegerString = /\(dataType(\d+) === "string" && data\1 && data\1 == \+data\1 && !\(data\1 % 1\)\)/g;
const laxNumberString = /\(dataType(\d+) === "string" && data\1 && data\1 == \+data\1\)/;

/** Parameter validators whose string-to-integer coercion takes plain decimal only. */
function strictIntegerStrings(compiled, units) {
  const integers = units.flatMap((unit) => Object.values(unit.schema.properties)).filter((schema) => [schema.type].flat().includes("integer"));
  const body = compiled.body.replace(
    laxIntegerString,
    (_match, n) => `(dataType${n} === "string" && /^(?:0|-?[1-9][0-9]*)$/.test(data${n}) && isFinite(+data${n}))`,
  );
  // A changed Ajv would silently bring the lax coercion back; fail the build instead.
  if (integers.length > 0 && body === compiled.body)
    throw new Error("validators: Ajv's integer coercion was not found; update strictIntegerStrings for this Ajv version");
  if (laxNumberString.test(body))
    throw new Error("validators: a number parameter would be coerced from any numeric string; number parameters are not supported");
  return { ...compiled, body };
}

/** The generated module holding the hints, as TypeScript. */
function hintsModule(hints) {
  const entries = [...hints].map(([path, hint]) => `  ${JSON.stringify(path)}: ${JSON.stringify(hint)},`);
  return `${banner("validators")}import type { Hint } from "../hints.js";

/** How to describe each \`oneOf\`, \`anyOf\`, \`if\` and \`not\` of the compiled schemas, by schema path. */
export const hints: Readonly<Record<string, Hint>> = {
${entries.join("\n")}
};
`;
}

/** Ajv's standalone code as a TypeScript module: it is plain JavaScript, so it is not type-checked. */
const compiledModule = ({ imports, body }) => `// @ts-nocheck\n${banner("validators")}${imports.join("\n")}\n${body}`;

/**
 * Generates `@browser-service/validators`: Ajv standalone code for every component
 * schema and every operation's inline bodies (`schemas.ts`) and parameters, coerced from
 * strings (`parameters.ts`); the hints that turn Ajv's errors into sentences
 * (`hints.ts`); and the typed API around them (`validators.ts`).
 */
export function generateValidators(document) {
  const components = Object.keys(document.components.schemas);
  const operations = listOperations(document)
    .map((op) => describeOperation(document, op))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  const schemaUnits = [
    ...components.map((name) => ({ exportName: `schema$${name}`, path: `#/components/schemas/${escapeSegment(name)}` })),
    ...operations.flatMap((op) => [op.body, ...op.responses].filter((b) => b && !b.component)),
  ];
  const parameterUnits = shareParameterSchemas(operations);
  const schemas = compileModule(document, schemaUnits);
  const parameters = strictIntegerStrings(compileModule(document, parameterUnits, { coerceTypes: "array" }), parameterUnits);
  const hints = collectHints(schemas.document, [...schemas.schemas, ...parameters.schemas]);
  return {
    "schemas.ts": compiledModule(schemas),
    "parameters.ts": compiledModule(parameters),
    "hints.ts": hintsModule(hints),
    "validators.ts": validatorsModule(document, operations),
  };
}
