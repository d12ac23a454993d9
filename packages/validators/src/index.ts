/**
 * Runtime validators of the browser service API, compiled ahead of time from its
 * OpenAPI 3.1 document: `validateX`, `isX` and `assertX` for every component schema,
 * and `operationValidators` for every operation's parameters, request body and response
 * bodies. Importing the package compiles nothing; each validator is a plain function
 * that bundlers drop when unused. `jsonEqual` is the deep equality the validators use for
 * `const`, `enum` and `uniqueItems`, exported for other JSON Schema code (the WebMCP
 * helpers' validator of page schemas uses it too).
 *
 * @packageDocumentation
 */
export * from "./generated/validators.js";
export type { LowercaseKeys, ValidationIssue, ValidationResult, Validator } from "./result.js";
export { equal as jsonEqual } from "./runtime/equal.js";
export { ValidationError } from "./validation-error.js";
