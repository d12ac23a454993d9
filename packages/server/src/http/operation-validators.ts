import { operationValidators, type Validator } from "@browser-service/validators";

/** The validators of one operation, as `@browser-service/validators` generates them. */
export interface OperationChecks {
  path?: Validator<unknown>;
  query?: Validator<unknown>;
  headers?: Validator<unknown>;
  body?: Validator<unknown>;
  /** One validator per response status that has a body. */
  responses: Readonly<Record<number | string, Validator<unknown>>>;
}

const byOperationId: Readonly<Record<string, OperationChecks>> = operationValidators;

/** The validators of the operation `operationId`; a name the spec lacks is a programming error. */
export function operationChecks(operationId: string): OperationChecks {
  const checks = byOperationId[operationId];
  if (!checks) throw new Error(`No operation "${operationId}" in the spec; check the route's operationId.`);
  return checks;
}
