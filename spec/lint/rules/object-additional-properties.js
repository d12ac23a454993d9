// The house rule `object-additional-properties`; rules/object-additional-properties.bad.yaml breaks it and nothing else.
import { conditionKeyword } from "../support/conditions.js";
import { isObject } from "../support/nodes.js";

/** Every object schema (type object, or with properties) states `additionalProperties`. */
export default function ObjectAdditionalProperties() {
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
