// The house rule `error-response-schema`; rules/error-response-schema.bad.yaml breaks it and nothing else.
import { errorResponses, responseWhere } from "../support/error-responses.js";
import { operationLabel } from "../support/names.js";
import { deref, isObject, isRef, refTargetName } from "../support/nodes.js";
import { onceReporter } from "../support/report-once.js";

const ERROR_SCHEMAS = ["Error", "OutcomeUnknownError"];

/** Every 4xx/5xx response body is a `$ref` to the `Error` or `OutcomeUnknownError` schema. */
export default function ErrorResponseSchema() {
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
            report(
              ctx,
              location,
              who,
              ` has no \`content\`. Every error response carries the shared error body: add \`content: { application/json: { schema: { $ref: ../schemas/Error.yaml } } }\`.`,
            );
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
