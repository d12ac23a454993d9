// The house rule `schema-property-description`; rules/schema-property-description.bad.yaml breaks it and nothing else.
import { conditionKeyword } from "../support/conditions.js";
import { deref, isObject, isRef, nonEmptyString } from "../support/nodes.js";
import { NOBODY, onceReporter } from "../support/report-once.js";

/** Every schema property has a non-empty description (its own, or the one of the schema it `$ref`s). */
export default function SchemaPropertyDescription() {
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
