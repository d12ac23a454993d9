import type { CompiledValidator } from "./compiled.js";
import type { ValidationResult, Validator } from "./result.js";
import { toIssues } from "./to-issues.js";
import { ValidationError } from "./validation-error.js";

// What the generated validators call around the compiled functions.

/** Runs a compiled validator: the value, typed, or every problem found. */
export function check<T>(validate: CompiledValidator, value: unknown): ValidationResult<T> {
  return validate(value) ? { ok: true, value: value as T } : { ok: false, errors: toIssues(validate.errors ?? []) };
}

/** Runs a compiled validator, throwing a {@link ValidationError} unless the value is valid. */
export function ensure(validate: CompiledValidator, value: unknown): void {
  if (!validate(value)) throw new ValidationError(toIssues(validate.errors ?? []));
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && [Object.prototype, null].includes(Object.getPrototypeOf(value));

/**
 * Runs a compiled validator of parameters, which converts strings to the parameters'
 * types in the object it checks: it checks a copy, so the caller's object stays as given.
 */
export function checkParameters<T>(validate: CompiledValidator, value: unknown): ValidationResult<T> {
  return check<T>(validate, isPlainObject(value) ? { ...value } : value);
}

/** Runs the validator of an optional request body, which may be absent. */
export function checkOptional<T>(validate: Validator<T>, value: unknown): ValidationResult<T | undefined> {
  return value === undefined ? { ok: true, value } : validate(value);
}
