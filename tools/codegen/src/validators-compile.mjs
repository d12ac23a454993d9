import { _ } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import { compileSchema, SchemaEnv } from "ajv/dist/compile/index.js";
import standaloneCode from "ajv/dist/standalone/index.js";
import { refsIn, resolvePointer, stripAnnotations, usesKeyword } from "./validators-schema.mjs";

/** The key the document is added to Ajv under; `$ref`s resolve against it. */
const documentId = "openapi.json";

/** OpenAPI's own schema keywords: annotations as far as validation goes. */
const openApiKeywords = ["discriminator", "example", "externalDocs", "xml"];

/** The document's top-level fields, which Ajv meets because the whole document is added as one schema. */
const documentFields = ["components", "info", "jsonSchemaDialect", "openapi", "paths", "security", "servers", "tags", "webhooks"];

/**
 * The formats that the package's runtime implements (`src/runtime/formats.ts`), by the
 * name it exports each under. A format the spec uses that is missing here fails the
 * build: Ajv's strict mode rejects unknown formats.
 */
const runtimeFormats = { "date-time": "dateTime", uri: "uri" };

/** Ajv's runtime helpers that its standalone code `require`s, and the package's own versions. */
const runtimeHelpers = [
  { code: 'require("ajv/dist/runtime/ucs2length").default', name: "ucs2length", from: "../runtime/ucs2length.js" },
  { code: 'require("ajv/dist/runtime/equal").default', name: "equal", from: "../runtime/equal.js" },
];

/** Stands in for a format at generation, where Ajv only needs to know that it exists; the emitted code calls the runtime's. */
const formatPlaceholder = () => {
  throw new Error("validators: formats are not evaluated at generation");
};

/**
 * An Ajv 2020-12 instance holding the whole document, in which every schema compiles to
 * one function whatever refers to it, and errors carry absolute schema paths
 * (`#/components/schemas/X/oneOf`) so that the runtime can tell which rule of which
 * schema failed. `coerceTypes` is for parameters, which arrive as strings.
 */
function createAjv(document, { coerceTypes }) {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: true,
    // As in the spec's own tests: conditions (`if`) constrain properties without restating `type: object`.
    strictRequired: false,
    strictTypes: false,
    // Refs become calls of one shared function per schema instead of inlined copies.
    inlineRefs: false,
    // The package writes its own messages.
    messages: false,
    coerceTypes,
    code: { source: true, esm: true, lines: true, formats: _`__formats` },
  });
  // Ajv2020 always tracks evaluated properties for `unevaluated*` and passes dynamic
  // anchors for `$dynamicRef`. Unused, they cost time on every call, and the tracking
  // adds a top-level assignment per function that keeps bundlers from dropping unused
  // validators. A false positive of this scan only keeps them.
  ajv.opts.unevaluated = usesKeyword(document, ["unevaluatedItems", "unevaluatedProperties"]);
  ajv.opts.dynamicRef = usesKeyword(document, ["$dynamicAnchor", "$dynamicRef", "$recursiveAnchor", "$recursiveRef"]);
  for (const keyword of [...openApiKeywords, ...documentFields]) ajv.addKeyword(keyword);
  for (const name of Object.keys(runtimeFormats)) ajv.addFormat(name, formatPlaceholder);
  ajv.addSchema(document, documentId);
  return ajv;
}

/**
 * Compiles units (`{ exportName, path, schema? }`: `path` is the unit's location in the
 * document, or a made-up one for a `schema` that the generator built) into Ajv standalone
 * code exporting one validation function per unit, with Ajv's `require`d helpers
 * replaced by imports from the package's runtime: `{ imports, body, document, schemas }`,
 * where `schemas` lists every schema compiled (the units and what they refer to) by path,
 * as found in `document`, a copy of the document in which they are stripped of annotations.
 */
export function compileModule(document, units, { coerceTypes = false } = {}) {
  const copy = structuredClone(document);
  const ajv = createAjv(copy, { coerceTypes });
  const root = ajv.getSchema(documentId).schemaEnv;
  const envs = new Map();

  // Registering an environment under the URI that `$ref`s resolve to makes every ref to
  // that schema share it, and its `schemaPath` makes its errors' paths absolute.
  const register = (path, schema) => {
    if (envs.has(path)) return envs.get(path);
    stripAnnotations(schema);
    const env = new SchemaEnv({ schema, schemaId: "$id", root, baseId: root.baseId, schemaPath: path });
    root.refs[`${documentId}${path}`] = env;
    envs.set(path, env);
    for (const ref of refsIn(schema)) register(ref, resolvePointer(copy, ref));
    return env;
  };
  // Callees first, so that callers call them directly rather than through a wrapper object.
  const compiled = new Set();
  const compile = (env) => {
    if (compiled.has(env)) return;
    compiled.add(env);
    for (const ref of refsIn(env.schema)) compile(envs.get(ref));
    compileSchema.call(ajv, env);
  };

  const sorted = [...units].sort((a, b) => (a.exportName < b.exportName ? -1 : 1));
  for (const unit of sorted) {
    const env = register(unit.path, unit.schema ? structuredClone(unit.schema) : resolvePointer(copy, unit.path));
    compile(env);
    ajv.refs[`export:${unit.exportName}`] = env;
  }
  const code = standaloneCode(ajv, Object.fromEntries(sorted.map((u) => [u.exportName, `export:${u.exportName}`])));
  return { ...asEsModule(code), document: copy, schemas: [...envs].map(([path, env]) => [path, env.schema]) };
}

/** Replaces the `require`s of Ajv's output with imports of the package's runtime, and marks pure initialisers. */
function asEsModule(code) {
  const imports = [];
  let body = code.replace(/^"use strict";\n?/, "");
  for (const helper of runtimeHelpers) {
    if (!body.includes(helper.code)) continue;
    const local = `runtime$${helper.name}`;
    body = body.replaceAll(helper.code, local);
    imports.push(`import { ${helper.name} as ${local} } from "${helper.from}";`);
  }
  // Ajv writes `__formats.uri` or `__formats["date-time"]` (the `code.formats` option).
  const formats = new Set();
  body = body.replace(/__formats(?:\.([A-Za-z_$][\w$]*)|\[("[^"]*")\])/g, (_match, plain, quoted) => {
    const name = runtimeFormats[plain ?? JSON.parse(quoted)];
    formats.add(name);
    return `format$${name}`;
  });
  if (formats.size > 0) {
    const specifiers = [...formats]
      .sort()
      .map((name) => `${name} as format$${name}`)
      .join(", ");
    imports.push(`import { ${specifiers} } from "../runtime/formats.js";`);
  }
  // Ajv emits every compiled schema object, also those its code never reads. Each sits on
  // one line; the unused ones go.
  body = body.replace(/^const (schema\d+) = .*;\n/gm, (line, name) => (body.match(new RegExp(`\\b${name}\\b`, "g")).length > 1 ? line : ""));
  // Bundlers keep a top-level `new RegExp(...)` unless told it has no side effects.
  body = body.replace(/^(const pattern\d+ = )new RegExp\(/gm, "$1/*#__PURE__*/ new RegExp(");
  const leftover = /require\([^)]*\)/.exec(body);
  if (leftover) throw new Error(`validators: Ajv's output requires ${leftover[0]}, which the package's runtime does not provide`);
  return { imports: imports.sort(), body };
}
