// House lint rules of the browser service OpenAPI document (see ../CONVENTIONS.md).
//
// A Redocly CLI 2 custom plugin (ESM), as @redocly/cli 2.77.0 loads it: the default
// export is a function (called with `{ contentDir }`) that returns the plugin object
// `{ id, rules: { oas3: { name: factory } }, configs }`. Redocly prefixes each rule name
// with the plugin id, so the rules are configured as `house/<name>`. A rule factory is
// called with the rule's settings from redocly.yaml and returns a visitor keyed by node
// type (`Operation`, `Schema`, `Root`, ..., and `ref` for every `$ref`); a key nested in
// another (`Paths: { PathItem }`) only runs below it. Each hook is `enter(node, ctx,
// resolved)` or `leave(...)`: `node` is already resolved, and `ctx` carries
// `report({ message, location })`, `location` (a Location with `.child([...])`, `.key()`,
// `.source.absoluteRef` and `.pointer`), `rawLocation`, `key`, `parent`, `rawNode`,
// `type`, `specVersion` and `resolve(node, fromFile = the current file)`, which returns
// `{ node, location }` of a `$ref`'s target.
//
// `configs.all` turns every rule on as an error, so a config can say
// `extends: [house/all]` (redocly.yaml does, and so do the test fixtures).

export const PLUGIN_ID = "house";

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace", "query"];
const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;
const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;
const PROJECT_HEADER = "X-Service-Project-Id";
const ERROR_SCHEMAS = ["Error", "OutcomeUnknownError"];
const ERROR_STATUS = /^[45](?:\d\d|XX)$/i;

// ---------------------------------------------------------------- helpers

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isRef(value) {
  return isObject(value) && typeof value.$ref === "string";
}

function nonEmptyString(value) {
  return typeof value === "string" && value.trim() !== "";
}

function locationKey(location) {
  return `${location?.source?.absoluteRef ?? ""}${location?.pointer ?? ""}`;
}

/**
 * Follows `$ref`s from `node` (found at `location`) to the target node. `ctx.resolve`
 * only resolves relative to a file, so the file of each hop is passed on explicitly:
 * a ref inside a referenced file is relative to that file.
 * Returns the target, its location and the names of the refs followed.
 */
function deref(ctx, node, location) {
  const refs = [];
  let current = node;
  let where = location;
  for (let hop = 0; hop < 20 && isRef(current); hop++) {
    refs.push(current.$ref);
    const resolved = ctx.resolve(current, where?.source?.absoluteRef);
    if (resolved.node === undefined || !resolved.location) return { node: undefined, location: where, refs };
    current = resolved.node;
    where = resolved.location;
  }
  return { node: current, location: where, refs };
}

/** The name a `$ref` points at: the last JSON pointer segment, or the file's base name. */
function refTargetName(ref) {
  const [file, pointer = ""] = ref.split("#");
  const segments = pointer.split("/").filter(Boolean);
  if (segments.length > 0) return segments[segments.length - 1].replace(/~1/g, "/").replace(/~0/g, "~");
  const base = file.split("/").pop() ?? "";
  return base.replace(/\.(ya?ml|json)$/i, "");
}

function operationLabel(operation, method) {
  return nonEmptyString(operation?.operationId) ? operation.operationId : `${String(method).toUpperCase()} operation`;
}

function toCamelCase(value) {
  const words = String(value)
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  return words.map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join("");
}

/** The `who` of a problem that is not about one error response. */
const NOBODY = { text: "", dedupe: "" };

/**
 * Reports a problem once per location and text: a shared component response is reached
 * from every operation that uses it, and its problem is reported once, at the component,
 * naming the first operation. `who` says which response; `what` is the problem.
 */
function onceReporter() {
  const seen = new Set();
  return (ctx, location, who, what) => {
    const key = `${locationKey(location)}\n${who.dedupe}\n${what}`;
    if (seen.has(key)) return;
    seen.add(key);
    ctx.report({ message: `${who.text}${what}`, location });
  };
}

/** Keys whose children are names, not JSON Schema keywords, in a JSON pointer. */
const NAME_MAPS = new Set([
  "properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "schemas", "headers", "responses",
  "parameters", "content", "examples", "links", "callbacks", "requestBodies", "securitySchemes", "pathItems", "paths",
  "webhooks", "encoding", "variables", "mapping",
]);
const CONDITION_KEYWORDS = new Set(["if", "then", "else", "not", "contains", "propertyNames", "dependentSchemas"]);

/** The innermost conditional keyword (`if`, `then`, `not`, ...) that an inline subschema sits under, if any. */
function conditionKeyword(location) {
  const segments = String(location?.pointer ?? "").replace(/^#\/?/, "").split("/").filter(Boolean);
  let found;
  segments.forEach((segment, i) => {
    if (i > 0 && NAME_MAPS.has(segments[i - 1])) return; // a property or component name
    if (CONDITION_KEYWORDS.has(segment)) found = segment;
  });
  return found;
}

/** The `[status, response, location]` entries of an operation's 4xx/5xx responses, resolved. */
function errorResponses(ctx, operation) {
  const responses = isObject(operation.responses) ? operation.responses : {};
  const out = [];
  for (const [status, raw] of Object.entries(responses)) {
    if (!ERROR_STATUS.test(status)) continue;
    const rawLocation = ctx.location.child(["responses", status]);
    const { node, location } = deref(ctx, raw, rawLocation);
    if (!isObject(node)) continue; // an unresolved $ref is reported by no-unresolved-refs
    out.push({ status, response: node, location, viaRef: isRef(raw) });
  }
  return out;
}

function responseWhere(status, viaRef, label) {
  return viaRef
    ? { text: `The \`${status}\` error response (first used by \`${label}\`)`, dedupe: status }
    : { text: `The \`${status}\` response of \`${label}\``, dedupe: `${status} ${label}` };
}

// ---------------------------------------------------------------- rules

/** Every operation declares `401` and `500`. */
function OperationErrorResponses() {
  return {
    Operation: {
      enter(operation, ctx) {
        const label = operationLabel(operation, ctx.key);
        const responses = isObject(operation.responses) ? operation.responses : {};
        for (const status of ["401", "500"]) {
          if (status in responses) continue;
          const shared = status === "401" ? "Unauthorized" : "InternalError";
          ctx.report({
            message:
              `Operation \`${label}\` does not declare a \`${status}\` response. Every operation declares 401 and 500: ` +
              `add \`'${status}': { $ref: ../components/responses/${shared}.yaml }\` under \`responses\`.`,
            location: isObject(operation.responses) ? ctx.location.child(["responses"]).key() : ctx.location.key(),
          });
        }
      },
    },
  };
}

/** Every 4xx/5xx response body is a `$ref` to the `Error` or `OutcomeUnknownError` schema. */
function ErrorResponseSchema() {
  const report = onceReporter();
  const fix = `use \`schema: { $ref: ../schemas/Error.yaml }\` (or \`OutcomeUnknownError.yaml\`; the path is relative to the file)`;
  return {
    Operation: {
      enter(operation, ctx) {
        const label = operationLabel(operation, ctx.key);
        for (const { status, response, location, viaRef } of errorResponses(ctx, operation)) {
          const who = responseWhere(status, viaRef, label);
          const content = isObject(response.content) ? response.content : {};
          const mediaTypes = Object.keys(content);
          if (mediaTypes.length === 0) {
            report(ctx, location, who, ` has no \`content\`. Every error response carries the shared error body: add \`content: { application/json: { schema: { $ref: ../schemas/Error.yaml } } }\`.`);
            continue;
          }
          for (const mediaType of mediaTypes) {
            const mediaLocation = location.child(["content", mediaType]);
            const { node: media, location: resolvedMediaLocation } = deref(ctx, content[mediaType], mediaLocation);
            const schema = isObject(media) ? media.schema : undefined;
            const schemaLocation = resolvedMediaLocation.child(["schema"]);
            if (!isRef(schema)) {
              report(ctx, schemaLocation, who, ` (${mediaType}) ${schema === undefined ? "has no schema" : "has an inline schema"}; ${fix}.`);
              continue;
            }
            const { node, location: target, refs } = deref(ctx, schema, schemaLocation);
            if (node === undefined) continue; // reported by no-unresolved-refs
            const names = refs.map(refTargetName);
            if (target?.pointer && target.pointer !== "#/" && target.pointer !== "") names.push(refTargetName(`#${target.pointer.replace(/^#/, "")}`));
            else if (target?.source?.absoluteRef) names.push(refTargetName(target.source.absoluteRef));
            if (!names.some((name) => ERROR_SCHEMAS.includes(name))) {
              report(ctx, schemaLocation, who, ` (${mediaType}) uses the schema \`${schema.$ref}\`, not the shared error body; ${fix}.`);
            }
          }
        }
      },
    },
  };
}

/** Every 4xx/5xx response lists its codes in `x-error-codes`: a non-empty array of unique snake_case strings. */
function ErrorResponseCodes() {
  const report = onceReporter();
  return {
    Operation: {
      enter(operation, ctx) {
        const label = operationLabel(operation, ctx.key);
        for (const { status, response, location, viaRef } of errorResponses(ctx, operation)) {
          const who = responseWhere(status, viaRef, label);
          const codes = response["x-error-codes"];
          if (!Array.isArray(codes) || codes.length === 0) {
            report(
              ctx,
              codes === undefined ? location : location.child(["x-error-codes"]),
              who, ` does not list its error codes. Add \`x-error-codes: [code, ...]\`, a non-empty array of the snake_case codes this response can carry (e.g. \`[not_found]\`).`,
            );
            continue;
          }
          const seen = new Set();
          codes.forEach((code, index) => {
            const where = location.child(["x-error-codes", index]);
            if (typeof code !== "string" || !SNAKE_CASE.test(code)) {
              report(ctx, where, who, ` lists the error code ${JSON.stringify(code)}, which is not snake_case. Codes are stable snake_case strings such as \`project_not_found\`.`);
            } else if (seen.has(code)) {
              report(ctx, where, who, ` lists the error code \`${code}\` twice in \`x-error-codes\`; remove the duplicate.`);
            }
            seen.add(code);
          });
        }
      },
    },
  };
}

/** Every 4xx/5xx response has exactly one example per listed code, whose `value.code` is that code. */
function ErrorResponseExamples() {
  const report = onceReporter();
  return {
    Operation: {
      enter(operation, ctx) {
        const label = operationLabel(operation, ctx.key);
        for (const { status, response, location, viaRef } of errorResponses(ctx, operation)) {
          const who = responseWhere(status, viaRef, label);
          const codes = Array.isArray(response["x-error-codes"]) ? response["x-error-codes"].filter((c) => typeof c === "string") : [];
          const content = isObject(response.content) ? response.content : {};
          for (const [mediaType, rawMedia] of Object.entries(content)) {
            const { node: media, location: mediaLocation } = deref(ctx, rawMedia, location.child(["content", mediaType]));
            if (!isObject(media)) continue;
            if (media.example !== undefined) {
              report(ctx, mediaLocation.child(["example"]).key(), who, ` (${mediaType}) uses \`example\`; use \`examples\` with one named example per error code, each \`value: { code, message }\`.`);
            }
            const examples = isObject(media.examples) ? media.examples : {};
            const byCode = new Map();
            for (const [name, rawExample] of Object.entries(examples)) {
              const exampleLocation = mediaLocation.child(["examples", name]);
              const { node: example, location: resolvedExampleLocation } = deref(ctx, rawExample, exampleLocation);
              if (!isObject(example)) continue;
              const code = isObject(example.value) ? example.value.code : undefined;
              if (typeof code !== "string") {
                report(ctx, resolvedExampleLocation, who, ` (${mediaType}) has the example \`${name}\` without a string \`value.code\`; give it an inline \`value: { code: <one of x-error-codes>, message: ... }\`.`);
                continue;
              }
              if (!codes.includes(code)) {
                report(ctx, resolvedExampleLocation.child(["value", "code"]), who, ` (${mediaType}) has an example for \`${code}\`, which is not in its \`x-error-codes\` (${codes.join(", ") || "none"}); add the code to \`x-error-codes\` or fix the example.`);
              }
              byCode.set(code, [...(byCode.get(code) ?? []), name]);
            }
            for (const code of codes) {
              const names = byCode.get(code) ?? [];
              if (names.length === 0) {
                report(ctx, isObject(media.examples) ? mediaLocation.child(["examples"]).key() : mediaLocation.key(), who, ` (${mediaType}) has no example for the error code \`${code}\`. Add \`examples: { ${code}: { summary: ..., value: { code: ${code}, message: ... } } }\`.`);
              } else if (names.length > 1) {
                report(ctx, mediaLocation.child(["examples"]).key(), who, ` (${mediaType}) has ${names.length} examples for the error code \`${code}\` (${names.join(", ")}); keep exactly one per code.`);
              }
            }
          }
        }
      },
    },
  };
}

/** Every object schema (type object, or with properties) states `additionalProperties`. */
function ObjectAdditionalProperties() {
  return {
    Schema: {
      enter(schema, ctx) {
        if (!isObject(schema)) return;
        const types = Array.isArray(schema.type) ? schema.type : [schema.type];
        const isObjectSchema = types.includes("object") || isObject(schema.properties) || isObject(schema.patternProperties);
        if (!isObjectSchema) return;
        // `unevaluatedProperties` closes an object that is composed with `allOf`, where
        // `additionalProperties` would wrongly reject the other subschemas' properties.
        if ("additionalProperties" in schema || "unevaluatedProperties" in schema) return;
        const condition = conditionKeyword(ctx.location);
        ctx.report({
          message: condition
            ? `Object schema under \`${condition}\` does not declare \`additionalProperties\`. In a conditional subschema add ` +
              "`additionalProperties: true`, which keeps the condition's meaning (`false` would make it reject every other property)."
            : "Object schema does not declare `additionalProperties`. Add `additionalProperties: false`, " +
              "or `true` only when the value is page or user data passed through unchanged (such as a tool's `input_schema`).",
          location: ctx.location.key(),
        });
      },
    },
  };
}

/** `operationId` is camelCase. */
function OperationIdCamelCase() {
  return {
    Operation: {
      enter(operation, ctx) {
        const id = operation.operationId;
        if (typeof id !== "string" || CAMEL_CASE.test(id)) return; // a missing id is `operation-operationId`'s
        const suggestion = toCamelCase(id);
        ctx.report({
          message:
            `operationId \`${id}\` is not camelCase. Use a verb-first camelCase id (letters and digits, starting with a ` +
            `lower-case letter), ${suggestion && suggestion !== id ? `here \`${suggestion}\`` : "e.g. `listProjects`"}.`,
          location: ctx.location.child(["operationId"]),
        });
      },
    },
  };
}

/** Every schema property has a non-empty description (its own, or the one of the schema it `$ref`s). */
function SchemaPropertyDescription() {
  const report = onceReporter();
  return {
    Schema: {
      enter(schema, ctx) {
        if (!isObject(schema) || !isObject(schema.properties)) return;
        for (const [name, raw] of Object.entries(schema.properties)) {
          const location = ctx.location.child(["properties", name]);
          if (isObject(raw) && nonEmptyString(raw.description)) continue;
          if (isRef(raw)) {
            const { node } = deref(ctx, raw, location);
            if (node === undefined || (isObject(node) && nonEmptyString(node.description))) continue;
          }
          report(
            ctx,
            location.key(),
            NOBODY,
            `Property \`${name}\` has no description. Add a \`description\` that states what the value means and its rules, not only its type` +
              (conditionKeyword(location) ? ` (under \`${conditionKeyword(location)}\`, say what the condition tests)` : "") +
              (isRef(raw) ? " (a `$ref` property may carry its own `description` beside the `$ref`)." : "."),
          );
        }
      },
    },
  };
}

/** Every operation has the `X-Service-Project-Id` header parameter, on its path item or on itself. */
function ProjectHeader() {
  const report = onceReporter();
  function headerIn(ctx, parameters, location) {
    let found;
    if (!Array.isArray(parameters)) return found;
    parameters.forEach((raw, index) => {
      const { node } = deref(ctx, raw, location.child([index]));
      if (!isObject(node) || node.in !== "header" || typeof node.name !== "string") return;
      if (node.name === PROJECT_HEADER) found = { exact: true };
      else if (node.name.toLowerCase() === PROJECT_HEADER.toLowerCase() && !found) found = { exact: false, name: node.name };
    });
    return found;
  }
  return {
    Paths: {
      PathItem: {
        enter(pathItem, ctx) {
          if (!isObject(pathItem)) return;
          const atPath = headerIn(ctx, pathItem.parameters, ctx.location.child(["parameters"]));
          for (const method of HTTP_METHODS) {
            const operation = pathItem[method];
            if (!isObject(operation)) continue;
            const label = operationLabel(operation, method);
            const atOperation = headerIn(ctx, operation.parameters, ctx.location.child([method, "parameters"]));
            const found = atOperation?.exact ? atOperation : atPath?.exact ? atPath : (atOperation ?? atPath);
            if (found?.exact) continue;
            report(
              ctx,
              ctx.location.child([method]).key(),
              NOBODY,
              found
                ? `Operation \`${label}\` declares the project header as \`${found.name}\`; spell it exactly \`${PROJECT_HEADER}\`.`
                : `Operation \`${label}\` has no \`${PROJECT_HEADER}\` header parameter. Declare it on the path item: ` +
                    "`parameters: [{ $ref: ../components/parameters/ProjectHeader.yaml }]`.",
            );
          }
        },
      },
    },
  };
}

/** Every operation has `x-client: { resource: camelCase, method: camelCase }`. */
function OperationXClient() {
  return {
    Operation: {
      enter(operation, ctx) {
        const label = operationLabel(operation, ctx.key);
        const xClient = operation["x-client"];
        const example = "`x-client: { resource: projects, method: list }`";
        if (xClient === undefined) {
          ctx.report({
            message: `Operation \`${label}\` has no \`x-client\` extension. Add the client facade method it maps to, e.g. ${example}.`,
            location: ctx.location.key(),
          });
          return;
        }
        if (!isObject(xClient)) {
          ctx.report({ message: `\`x-client\` of \`${label}\` must be an object such as ${example}.`, location: ctx.location.child(["x-client"]) });
          return;
        }
        for (const field of ["resource", "method"]) {
          const value = xClient[field];
          if (typeof value === "string" && CAMEL_CASE.test(value)) continue;
          ctx.report({
            message:
              value === undefined
                ? `\`x-client\` of \`${label}\` has no \`${field}\`. Set both \`resource\` and \`method\`, as camelCase names (${example}).`
                : `\`x-client.${field}\` of \`${label}\` is ${JSON.stringify(value)}, not a camelCase name; use e.g. \`${toCamelCase(value) || "projects"}\`.`,
            location: value === undefined ? ctx.location.child(["x-client"]).key() : ctx.location.child(["x-client", field]),
          });
        }
        const extra = Object.keys(xClient).filter((k) => k !== "resource" && k !== "method");
        if (extra.length > 0) {
          ctx.report({
            message: `\`x-client\` of \`${label}\` has unknown keys (${extra.join(", ")}); it holds only \`resource\` and \`method\`.`,
            location: ctx.location.child(["x-client", extra[0]]).key(),
          });
        }
      },
    },
  };
}

/** No two operations share the same `x-client` resource and method. */
function OperationXClientUnique() {
  const seen = new Map(); // "resource.method" -> { label, where }
  return {
    Operation: {
      enter(operation, ctx) {
        const xClient = operation["x-client"];
        if (!isObject(xClient) || typeof xClient.resource !== "string" || typeof xClient.method !== "string") return;
        const key = `${xClient.resource}.${xClient.method}`;
        const label = operationLabel(operation, ctx.key);
        const where = locationKey(ctx.location);
        const first = seen.get(key);
        if (!first) {
          seen.set(key, { label, where });
          return;
        }
        if (first.where === where) return; // the same operation reached twice
        ctx.report({
          message:
            `Operation \`${label}\` uses \`x-client: { resource: ${xClient.resource}, method: ${xClient.method} }\`, ` +
            `which \`${first.label}\` already uses. Each operation needs its own client method: rename the method of one of them.`,
          location: ctx.location.child(["x-client"]),
        });
      },
    },
  };
}

/**
 * Every component is used. The built-in `no-unused-components` cannot see an unused
 * component in this layout: `components.schemas.X: { $ref: components/schemas/X.yaml }`
 * counts as a use of the file it points at. Here a component is used when a `$ref`
 * other than its own declaration points at it (at its file or at `#/components/...`).
 */
function ComponentsUsed() {
  const kinds = {
    NamedSchemas: ["schemas", "Schema"],
    NamedParameters: ["parameters", "Parameter"],
    NamedResponses: ["responses", "Response"],
    NamedHeaders: ["headers", "Header"],
    NamedExamples: ["examples", "Example"],
    NamedRequestBodies: ["requestBodies", "RequestBody"],
    NamedLinks: ["links", "Link"],
    NamedCallbacks: ["callbacks", "Callback"],
    NamedPathItems: ["pathItems", "PathItem"],
  };
  const declared = []; // { kind, name, site, target, location }
  const refs = []; // [site, target]
  const visitor = {
    ref: {
      enter(_node, ctx, resolved) {
        if (resolved?.location) refs.push([locationKey(ctx.location), locationKey(resolved.location)]);
      },
    },
    Root: {
      leave(_root, ctx) {
        for (const component of declared) {
          const keys = new Set([component.site, component.target]);
          const used = refs.some(([site, target]) => site !== component.site && keys.has(target));
          if (used) continue;
          ctx.report({
            message:
              `Component \`${component.name}\` (components.${component.kind}) is never referenced. ` +
              "Reference it where it applies, or delete its entry in openapi.yaml and its file.",
            location: component.location,
          });
        }
      },
    },
  };
  for (const [mapType, [kind, itemType]] of Object.entries(kinds)) {
    visitor[mapType] = {
      [itemType]: {
        enter(_node, ctx) {
          const site = ctx.rawLocation ?? ctx.location;
          declared.push({ kind, name: String(ctx.key), site: locationKey(site), target: locationKey(ctx.location), location: site.key() });
        },
      },
    };
  }
  return visitor;
}

// ---------------------------------------------------------------- plugin

export const rules = {
  "operation-error-responses": OperationErrorResponses,
  "error-response-schema": ErrorResponseSchema,
  "error-response-codes": ErrorResponseCodes,
  "error-response-examples": ErrorResponseExamples,
  "object-additional-properties": ObjectAdditionalProperties,
  "operation-id-camel-case": OperationIdCamelCase,
  "schema-property-description": SchemaPropertyDescription,
  "project-header": ProjectHeader,
  "operation-x-client": OperationXClient,
  "operation-x-client-unique": OperationXClientUnique,
  "components-used": ComponentsUsed,
};

export default function houseRulesPlugin() {
  return {
    id: PLUGIN_ID,
    rules: { oas3: rules },
    configs: {
      all: {
        rules: Object.fromEntries(Object.keys(rules).map((name) => [`${PLUGIN_ID}/${name}`, "error"])),
      },
    },
  };
}
