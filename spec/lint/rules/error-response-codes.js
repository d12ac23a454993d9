// The house rule `error-response-codes`; rules/error-response-codes.bad.yaml breaks it and nothing else.
import { errorResponses, responseWhere } from "../support/error-responses.js";
import { operationLabel, SNAKE_CASE } from "../support/names.js";
import { onceReporter } from "../support/report-once.js";

/** Every 4xx/5xx response lists its codes in `x-error-codes`: a non-empty array of unique snake_case strings. */
export default function ErrorResponseCodes() {
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
              who,
              ` does not list its error codes. Add \`x-error-codes: [code, ...]\`, a non-empty array of the snake_case codes this response can carry (e.g. \`[not_found]\`).`,
            );
            continue;
          }
          const seen = new Set();
          codes.forEach((code, index) => {
            const where = location.child(["x-error-codes", index]);
            if (typeof code !== "string" || !SNAKE_CASE.test(code)) {
              report(
                ctx,
                where,
                who,
                ` lists the error code ${JSON.stringify(code)}, which is not snake_case. Codes are stable snake_case strings such as \`project_not_found\`.`,
              );
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
