// The house rule `project-header`; rules/project-header.bad.yaml breaks it and nothing else.
import { operationLabel } from "../support/names.js";
import { deref, isObject } from "../support/nodes.js";
import { NOBODY, onceReporter } from "../support/report-once.js";

const HTTP_METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace", "query"];
const PROJECT_HEADER = "X-Service-Project-Id";

/** Every operation has the `X-Service-Project-Id` header parameter, on its path item or on itself, but one that takes no credential (`security: []`): it acts on no project. */
export default function ProjectHeader() {
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
            if (Array.isArray(operation.security) && operation.security.length === 0) continue;
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
