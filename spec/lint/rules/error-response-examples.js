// The house rule `error-response-examples`; rules/error-response-examples.bad.yaml breaks it and nothing else.
import { errorResponses, responseWhere } from "../support/error-responses.js";
import { operationLabel } from "../support/names.js";
import { deref, isObject } from "../support/nodes.js";
import { onceReporter } from "../support/report-once.js";

/** Every 4xx/5xx response has exactly one example per listed code, whose `value.code` is that code. */
export default function ErrorResponseExamples() {
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
              report(
                ctx,
                mediaLocation.child(["example"]).key(),
                who,
                ` (${mediaType}) uses \`example\`; use \`examples\` with one named example per error code, each \`value: { code, message }\`.`,
              );
            }
            const examples = isObject(media.examples) ? media.examples : {};
            const byCode = new Map();
            for (const [name, rawExample] of Object.entries(examples)) {
              const exampleLocation = mediaLocation.child(["examples", name]);
              const { node: example, location: resolvedExampleLocation } = deref(ctx, rawExample, exampleLocation);
              if (!isObject(example)) continue;
              const code = isObject(example.value) ? example.value.code : undefined;
              if (typeof code !== "string") {
                report(
                  ctx,
                  resolvedExampleLocation,
                  who,
                  ` (${mediaType}) has the example \`${name}\` without a string \`value.code\`; give it an inline \`value: { code: <one of x-error-codes>, message: ... }\`.`,
                );
                continue;
              }
              if (!codes.includes(code)) {
                report(
                  ctx,
                  resolvedExampleLocation.child(["value", "code"]),
                  who,
                  ` (${mediaType}) has an example for \`${code}\`, which is not in its \`x-error-codes\` (${codes.join(", ") || "none"}); add the code to \`x-error-codes\` or fix the example.`,
                );
              }
              byCode.set(code, [...(byCode.get(code) ?? []), name]);
            }
            for (const code of codes) {
              const names = byCode.get(code) ?? [];
              if (names.length === 0) {
                report(
                  ctx,
                  isObject(media.examples) ? mediaLocation.child(["examples"]).key() : mediaLocation.key(),
                  who,
                  ` (${mediaType}) has no example for the error code \`${code}\`. Add \`examples: { ${code}: { summary: ..., value: { code: ${code}, message: ... } } }\`.`,
                );
              } else if (names.length > 1) {
                report(
                  ctx,
                  mediaLocation.child(["examples"]).key(),
                  who,
                  ` (${mediaType}) has ${names.length} examples for the error code \`${code}\` (${names.join(", ")}); keep exactly one per code.`,
                );
              }
            }
          }
        }
      },
    },
  };
}
