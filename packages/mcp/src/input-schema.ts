import { cleanPageText, compileInputSchema, fenceUntrusted, WebMcpHelpersError } from "@browser-service/webmcp-helpers";

/** What an MCP client is shown as a tool's `inputSchema`. */
export interface McpInputSchema {
  /** An object schema (`type: "object"`), as MCP requires. */
  schema: { type: "object"; [keyword: string]: unknown };
  /** Why the page's own schema is not shown, when it is not; `undefined` when it is. */
  withheld: string | undefined;
}

/** Caps on the page's strings in a shown schema, in UTF-16 units. */
export const schemaCaps = {
  /** A `description` keyword, fenced on one line. */
  description: 300,
  /**
   * A string a client must send back as it is, so it cannot be fenced: a property name,
   * a `required` entry, an `enum` or `const` string (keys of object values included), a
   * `pattern` or `patternProperties` key.
   */
  verbatim: 100,
} as const;

/** Stands in for a page schema that is not shown: any object; the safe validator checks the page's schema at call time. */
const permissive = (): McpInputSchema["schema"] => ({ type: "object", additionalProperties: true });

/** The format names of JSON Schema 2020-12: a page's `format` is shown only when it is one of these words. */
const formats = new Set([
  "date-time",
  "date",
  "time",
  "duration",
  "email",
  "idn-email",
  "hostname",
  "idn-hostname",
  "ipv4",
  "ipv6",
  "uri",
  "uri-reference",
  "iri",
  "iri-reference",
  "uuid",
  "uri-template",
  "json-pointer",
  "relative-json-pointer",
  "regex",
]);

/** Keywords whose value the helpers' validator has already checked to be a number, a count or a list of type names. */
const checkedValueKeywords = [
  "type",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "minProperties",
  "maxProperties",
  "minItems",
  "maxItems",
] as const;
const schemaKeywords = ["additionalProperties", "not", "if", "then", "else"] as const;
const schemaListKeywords = ["allOf", "anyOf", "oneOf"] as const;

/** A page string that would have to be shown unfenced and cannot be. */
class NotVerbatim extends Error {}

/** `text`, when it may be shown as it is: short, one line, nothing the cleaning would remove, no fence tag. */
function verbatim(text: string): string {
  if (text.length > schemaCaps.verbatim || cleanPageText(text, { maxLength: schemaCaps.verbatim }) !== text) throw new NotVerbatim();
  return text;
}

/** An `enum` option or the `const`: every string in it, keys included, must be verbatim. */
function verbatimValue(value: unknown): unknown {
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === "string") verbatim(node);
    else if (Array.isArray(node)) stack.push(...node);
    else if (typeof node === "object" && node !== null) {
      for (const [key, child] of Object.entries(node)) {
        verbatim(key);
        stack.push(child);
      }
    }
  }
  return value;
}

/** `Object.fromEntries` rather than assignment, so that a property named `__proto__` stays a property. */
const mapEntries = (object: object, key: (name: string) => string, value: (child: unknown) => unknown) =>
  Object.fromEntries(Object.entries(object).map(([name, child]) => [key(name), value(child)]));

/**
 * The schema rebuilt from what a client needs to build input, for a schema the helpers'
 * validator compiled (so keywords it knows have the right types, and nesting is
 * bounded): its validation keywords, with every page string either fenced
 * (`description`), dropped (`title`, `default`, `examples`, unknown keywords, a `format`
 * that is not a standard name), or kept only when short and plain (see
 * {@link schemaCaps}.verbatim; else {@link NotVerbatim}).
 */
function rebuild(schema: unknown): unknown {
  if (typeof schema === "boolean") return schema;
  // Only where the validator ignores the keyword (`additionalItems` without an `items` list): it means nothing.
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return true;
  const raw = schema as Record<string, unknown>;
  const has = (keyword: string) => Object.hasOwn(raw, keyword);
  const list = (value: unknown) => (Array.isArray(value) ? value : []);
  const object = (value: unknown) => (typeof value === "object" && value !== null && !Array.isArray(value) ? value : {});
  const shown: [string, unknown][] = [];
  // Only a local reference to a root definition reaches here (foreignDollarKey).
  if (typeof raw.$ref === "string") shown.push(["$ref", raw.$ref]);
  for (const keyword of checkedValueKeywords) if (has(keyword)) shown.push([keyword, raw[keyword]]);
  if (has("enum")) shown.push(["enum", list(raw.enum).map(verbatimValue)]);
  if (has("const")) shown.push(["const", verbatimValue(raw.const)]);
  if (typeof raw.pattern === "string") shown.push(["pattern", verbatim(raw.pattern)]);
  if (has("required")) shown.push(["required", list(raw.required).map((name) => verbatim(String(name)))]);
  if (has("properties")) shown.push(["properties", mapEntries(object(raw.properties), verbatim, rebuild)]);
  if (has("patternProperties")) shown.push(["patternProperties", mapEntries(object(raw.patternProperties), verbatim, rebuild)]);
  // As the validator reads them: an `items` list with `additionalItems` (drafts before 2020-12), or `prefixItems` with `items`.
  if (Array.isArray(raw.items)) {
    shown.push(["items", raw.items.map(rebuild)]);
    if (has("additionalItems")) shown.push(["additionalItems", rebuild(raw.additionalItems)]);
  } else {
    if (has("prefixItems")) shown.push(["prefixItems", list(raw.prefixItems).map(rebuild)]);
    if (has("items")) shown.push(["items", rebuild(raw.items)]);
  }
  for (const keyword of schemaListKeywords) if (has(keyword)) shown.push([keyword, list(raw[keyword]).map(rebuild)]);
  for (const keyword of schemaKeywords) if (has(keyword)) shown.push([keyword, rebuild(raw[keyword])]);
  // Keywords the validator ignores: shown when their values are plain numbers, booleans or standard words.
  if (typeof raw.multipleOf === "number" && raw.multipleOf > 0) shown.push(["multipleOf", raw.multipleOf]);
  if (typeof raw.uniqueItems === "boolean") shown.push(["uniqueItems", raw.uniqueItems]);
  if (typeof raw.format === "string" && formats.has(raw.format)) shown.push(["format", raw.format]);
  if (typeof raw.description === "string") shown.push(["description", fenceUntrusted(raw.description, { maxLength: schemaCaps.description })]);
  return Object.fromEntries(shown);
}

/** The meta-schemas a `$schema` may name: JSON Schema's own, which a client knows without fetching. */
const metaSchemas = new Set([
  "https://json-schema.org/draft/2020-12/schema",
  "https://json-schema.org/draft/2019-09/schema",
  "http://json-schema.org/draft-07/schema#",
  "http://json-schema.org/draft-07/schema",
  "http://json-schema.org/draft-06/schema#",
  "http://json-schema.org/draft-04/schema#",
]);
/** The `$` keywords of JSON Schema, which a reason may name; any other `$` key is page text. */
const schemaDollarKeywords = new Set([
  "$ref",
  "$id",
  "$schema",
  "$anchor",
  "$dynamicRef",
  "$dynamicAnchor",
  "$recursiveRef",
  "$recursiveAnchor",
  "$defs",
  "$vocabulary",
  "$comment",
]);
/** Where a root keeps the schemas its references name: `$defs` (2019-09 on) or `definitions` (before). */
const definitionKeywords = ["$defs", "definitions"] as const;
/** A local reference to one of the root's definitions, by a plain name (no JSON Pointer escapes). */
const LOCAL_REF = /^#\/(\$defs|definitions)\/([A-Za-z0-9_.-]{1,100})$/;

/**
 * The first `$`-key in the schema a client might resolve outside it, if any. A `$schema`
 * at the root naming a standard meta-schema, the root's `$defs`/`definitions`, and a
 * `$ref` to one of them (`#/$defs/<name>`) stay inside the schema and are shown; a
 * `$comment` is dropped. Anything else that starts with `$` (`$id`, `$anchor`,
 * `$dynamicRef`, a `$ref` to a URL or to a definition that is not there, a `$schema`
 * a page chose, definitions below the root, even a property named so) keeps the schema
 * back: a client may fetch a reference or a meta-schema from an address a page chose.
 */
function foreignDollarKey(root: Record<string, unknown>): string | undefined {
  const defined = (keyword: string, name: string) => {
    const definitions = root[keyword];
    return typeof definitions === "object" && definitions !== null && !Array.isArray(definitions) && Object.hasOwn(definitions, name);
  };
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node !== "object" || node === null) continue;
    if (Array.isArray(node)) {
      stack.push(...node);
      continue;
    }
    for (const [key, child] of Object.entries(node)) {
      stack.push(child);
      if (!key.startsWith("$")) continue;
      if (key === "$comment" && typeof child === "string") continue;
      if (node === root && key === "$schema" && typeof child === "string" && metaSchemas.has(child)) continue;
      if (node === root && key === "$defs") continue;
      const local = key === "$ref" && typeof child === "string" ? LOCAL_REF.exec(child) : null;
      if (local !== null && defined(local[1] as string, local[2] as string)) continue;
      return key;
    }
  }
  return undefined;
}

/**
 * The root rebuilt: its keywords as {@link rebuild} shows them, with its standard
 * `$schema` first and its definitions (each rebuilt, under a verbatim name) last, so
 * that the local `$ref`s in it resolve in the client as they do in the page.
 */
function rebuildRoot(root: Record<string, unknown>): McpInputSchema["schema"] {
  const shown = rebuild(root) as Record<string, unknown>;
  const head: [string, unknown][] = typeof root.$schema === "string" ? [["$schema", root.$schema]] : [];
  const tail: [string, unknown][] = [];
  for (const keyword of definitionKeywords) {
    const definitions = root[keyword];
    if (typeof definitions === "object" && definitions !== null && !Array.isArray(definitions))
      tail.push([keyword, mapEntries(definitions, verbatim, rebuild)]);
  }
  return Object.fromEntries([...head, ...Object.entries(shown), ...tail]) as McpInputSchema["schema"];
}

/**
 * The `inputSchema` to show for a page's `input_schema`. A safe object schema (an object
 * whose `type` is `"object"`, which the helpers' safe validator accepts within its
 * default budgets, with no `$`-keyword a client might resolve elsewhere) is shown rebuilt
 * so that no page string reaches the client unfenced but the ones it must send back as
 * they are:
 *
 * - a root `$schema` naming a standard meta-schema, the root's `$defs`/`definitions`
 *   (rebuilt as the rest) and local `$ref`s to them (`#/$defs/<name>`) are kept, so a
 *   schema as zod and most generators emit it reaches the client whole; any other
 *   `$`-key withholds the schema;
 * - `description` keywords are fenced (`<untrusted-page-text>…</untrusted-page-text>`),
 *   cleaned and cut to {@link schemaCaps}.description;
 * - `title`, `default`, `examples`, `$comment`-like annotations, a `format` other than
 *   a standard format name, and every keyword the validator does not know are dropped;
 * - property names, `required` entries, `enum`/`const` strings and patterns are shown as
 *   they are only when at most {@link schemaCaps}.verbatim characters of plain text (one
 *   line, no control or invisible character, no fence tag); one that is not withholds
 *   the schema.
 *
 * A schema that is not shown becomes a permissive object schema, with the reason (and
 * the description then shows the page's schema as fenced text). Either way `invokeTool`
 * checks the input against the page's own schema with the safe validator before anything
 * is sent.
 */
export function mcpInputSchema(pageSchema: unknown): McpInputSchema {
  if (typeof pageSchema !== "object" || pageSchema === null || Array.isArray(pageSchema)) {
    return { schema: permissive(), withheld: "it is not a JSON object" };
  }
  const root = pageSchema as Record<string, unknown>;
  if (root.type !== "object") return { schema: permissive(), withheld: 'its root is not `"type": "object"`' };
  const dollar = foreignDollarKey(root);
  if (dollar !== undefined) {
    // Named only when it is a keyword of JSON Schema: any other key is the page's text, shown here outside a fence.
    const named = schemaDollarKeywords.has(dollar) ? `\`${dollar}\` keyword` : "`$` key";
    return { schema: permissive(), withheld: `it holds a ${named} that a client might resolve from elsewhere` };
  }
  try {
    compileInputSchema(root);
  } catch (error) {
    if (!(error instanceof WebMcpHelpersError)) throw error;
    return { schema: permissive(), withheld: `the safe validator refuses it (${error.code})` };
  }
  try {
    return { schema: rebuildRoot(root), withheld: undefined };
  } catch (error) {
    if (!(error instanceof NotVerbatim)) throw error;
    return {
      schema: permissive(),
      withheld: `a property name, required entry, enum or const value, or pattern in it is over ${schemaCaps.verbatim} characters or not plain one-line text, and would reach the client unfenced`,
    };
  }
}
