// House lint rules of the browser service OpenAPI document (see ../CONVENTIONS.md): the
// plugin. Each rule is one file, rules/<name>.js, next to its bad fixture
// rules/<name>.bad.yaml (a document that breaks that rule and no other); the helpers they
// share are in support/.
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

import ComponentsUsed from "./rules/components-used.js";
import ErrorResponseCodes from "./rules/error-response-codes.js";
import ErrorResponseExamples from "./rules/error-response-examples.js";
import ErrorResponseSchema from "./rules/error-response-schema.js";
import ObjectAdditionalProperties from "./rules/object-additional-properties.js";
import OperationErrorResponses from "./rules/operation-error-responses.js";
import OperationIdCamelCase from "./rules/operation-id-camel-case.js";
import OperationXClient from "./rules/operation-x-client.js";
import OperationXClientUnique from "./rules/operation-x-client-unique.js";
import ProjectHeader from "./rules/project-header.js";
import SchemaPropertyDescription from "./rules/schema-property-description.js";

/** The plugin id: Redocly names each rule `house/<name>`. */
export const PLUGIN_ID = "house";

/** Every house rule by name: the factory Redocly calls with the rule's settings. */
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

/** The Redocly plugin: the rules, and `configs.all`, which turns each on as an error. */
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
