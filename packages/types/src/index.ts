/**
 * TypeScript types of the browser service API, generated from its OpenAPI 3.1 document:
 * `paths`, `components` and `operations` as openapi-typescript writes them (for
 * openapi-fetch), plus a named type for every schema and for every operation's
 * parameters, request body, success response, error responses and error codes; and
 * `limits`, its one runtime value: every numeric rule of the document (`maximum`,
 * `maxLength`, `default`, the `x-max-bytes` extension, ...) as a constant.
 *
 * @packageDocumentation
 */

export { limits } from "./generated/limits.js";
export type * from "./generated/named.js";
export type { components, operations, paths } from "./generated/openapi.js";
