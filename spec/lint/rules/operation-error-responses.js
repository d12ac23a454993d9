// The house rule `operation-error-responses`; rules/operation-error-responses.bad.yaml breaks it and nothing else.
import { operationLabel } from "../support/names.js";
import { isObject } from "../support/nodes.js";

/** Every operation declares `401` and `500`; one that takes no credential (`security: []`) only `500`. */
export default function OperationErrorResponses() {
  return {
    Operation: {
      enter(operation, ctx) {
        const label = operationLabel(operation, ctx.key);
        const responses = isObject(operation.responses) ? operation.responses : {};
        const open = Array.isArray(operation.security) && operation.security.length === 0;
        for (const status of open ? ["500"] : ["401", "500"]) {
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
