// The house rule `operation-x-client`; rules/operation-x-client.bad.yaml breaks it and nothing else.
import { CAMEL_CASE, operationLabel, toCamelCase } from "../support/names.js";
import { isObject } from "../support/nodes.js";

/** Every operation has `x-client: { resource: camelCase, method: camelCase }`. */
export default function OperationXClient() {
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
