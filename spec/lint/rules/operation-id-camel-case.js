// The house rule `operation-id-camel-case`; rules/operation-id-camel-case.bad.yaml breaks it and nothing else.
import { CAMEL_CASE, toCamelCase } from "../support/names.js";

/** `operationId` is camelCase. */
export default function OperationIdCamelCase() {
  return {
    Operation: {
      enter(operation, ctx) {
        const id = operation.operationId;
        if (typeof id !== "string" || CAMEL_CASE.test(id)) return; // a missing id is `operation-operationId`'s
        const suggestion = toCamelCase(id);
        ctx.report({
          message:
            `operationId \`${id}\` is not camelCase. Use a verb-first camelCase id (letters and digits, starting with a ` +
            `lower-case letter), ${suggestion && suggestion !== id ? `here \`${suggestion}\`` : "e.g. `listProjects`"}.`,
          location: ctx.location.child(["operationId"]),
        });
      },
    },
  };
}
