// The house rule `operation-x-client-unique`; rules/operation-x-client-unique.bad.yaml breaks it and nothing else.
import { operationLabel } from "../support/names.js";
import { isObject, locationKey } from "../support/nodes.js";

/** No two operations share the same `x-client` resource and method. */
export default function OperationXClientUnique() {
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
