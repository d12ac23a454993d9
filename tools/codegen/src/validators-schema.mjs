// Walking JSON Schema 2020-12 schemas the way Ajv does, so that the paths computed here
// are the `schemaPath`s Ajv writes into its errors.

import { EXTENSION_KEYWORDS } from "./limits.mjs";

/** Keywords whose value is one subschema. */
const subschemaKeywords = [
  "additionalProperties",
  "contains",
  "contentSchema",
  "else",
  "if",
  "items",
  "not",
  "propertyNames",
  "then",
  "unevaluatedItems",
  "unevaluatedProperties",
];
/** Keywords whose value is a list of subschemas. */
const subschemaListKeywords = ["allOf", "anyOf", "oneOf", "prefixItems"];
/** Keywords whose value maps names to subschemas. */
const subschemaMapKeywords = ["$defs", "dependentSchemas", "patternProperties", "properties"];

/**
 * The annotation keywords of JSON Schema 2020-12: they never change whether a value is
 * valid, and Ajv's standalone code embeds every compiled schema object, so they are
 * dropped before compiling (the spec's prose would otherwise be shipped in the bundle).
 * So are the spec's extension keywords (`x-max-bytes`, `x-max-depth`, ...,
 * spec/CONVENTIONS.md): rules the server enforces, which validators leave to it and
 * `@browser-service/types` exports.
 */
const annotationKeywords = ["$comment", "default", "deprecated", "description", "examples", "readOnly", "title", "writeOnly", ...EXTENSION_KEYWORDS];

const isSchemaObject = (node) => node !== null && typeof node === "object" && !Array.isArray(node);

/** One segment of a schema path, escaped as Ajv escapes it (JSON pointer, then URI fragment). */
export const escapeSegment = (segment) => encodeURIComponent(String(segment).replaceAll("~", "~0").replaceAll("/", "~1"));

/** One segment of a data pointer (JSON pointer escaping only), as Ajv writes `instancePath`. */
export const escapePointerSegment = (segment) => String(segment).replaceAll("~", "~0").replaceAll("/", "~1");

/**
 * Calls `visit(node, path)` for a schema and each of its subschemas (not following
 * `$ref`), `path` being where the node sits as Ajv writes it in an error's `schemaPath`.
 */
export function walkSchema(schema, path, visit) {
  if (!isSchemaObject(schema)) return;
  visit(schema, path);
  for (const keyword of subschemaKeywords) {
    if (keyword in schema) walkSchema(schema[keyword], `${path}/${keyword}`, visit);
  }
  for (const keyword of subschemaListKeywords) {
    if (Array.isArray(schema[keyword])) schema[keyword].forEach((sub, i) => walkSchema(sub, `${path}/${keyword}/${i}`, visit));
  }
  for (const keyword of subschemaMapKeywords) {
    if (!isSchemaObject(schema[keyword])) continue;
    for (const [name, sub] of Object.entries(schema[keyword])) walkSchema(sub, `${path}/${keyword}/${escapeSegment(name)}`, visit);
  }
}

/** Removes the annotation keywords from a schema and its subschemas, in place. */
export function stripAnnotations(schema) {
  walkSchema(schema, "#", (node) => {
    for (const keyword of annotationKeywords) delete node[keyword];
  });
}

/** The component a schema merely refers to (`{ $ref: "#/components/schemas/X" }`, annotations aside), if it does. */
export function referencedComponent(schema) {
  const keys = Object.keys(schema).filter((key) => !annotationKeywords.includes(key));
  const match = /^#\/components\/schemas\/([^/]+)$/.exec(schema.$ref ?? "");
  return keys.length === 1 && match ? decodeURIComponent(match[1]) : undefined;
}

/** Every `$ref` in a schema and its subschemas, in the order found. */
export function refsIn(schema) {
  const refs = new Set();
  walkSchema(schema, "#", (node) => {
    if (typeof node.$ref !== "string") return;
    if (!node.$ref.startsWith("#/")) throw new Error(`validators: only local $refs are supported, found ${node.$ref}`);
    refs.add(node.$ref);
  });
  return [...refs];
}

/** The schema paths that a subschema's errors can carry: its own and those of every schema it refers to, transitively. */
export function reachablePaths(document, schema, path) {
  const paths = new Set([path]);
  const pending = refsIn(schema);
  while (pending.length > 0) {
    const ref = pending.shift();
    if (paths.has(ref)) continue;
    paths.add(ref);
    pending.push(...refsIn(resolvePointer(document, ref)));
  }
  return [...paths];
}

/** The node that a local reference (`#/components/schemas/X`) points to. */
export function resolvePointer(document, ref) {
  const segments = ref
    .slice(2)
    .split("/")
    .map((s) => decodeURIComponent(s).replaceAll("~1", "/").replaceAll("~0", "~"));
  const node = segments.reduce((at, key) => (at === undefined ? undefined : at[key]), document);
  if (node === undefined) throw new Error(`validators: ${ref} does not resolve in the document`);
  return node;
}

/** Whether any schema of the document uses one of these keywords (a plain scan: keywords only appear in schemas). */
export function usesKeyword(document, keywords) {
  const found = (node) => node !== null && typeof node === "object" && Object.entries(node).some(([key, value]) => keywords.includes(key) || found(value));
  return found(document);
}
