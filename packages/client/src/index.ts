/**
 * Typed client of the browser service API on openapi-fetch: an operation facade generated
 * from the API document, raw typed calls by path, bearer auth and the project header,
 * typed errors, retries of idempotent calls, timeouts, paging and extension uploads.
 *
 * @packageDocumentation
 */
export { type BrowserServiceClient, createClient } from "./client.js";
export type { ConditionalResponse } from "./conditional.js";
export type { ErrorBody } from "./errors.js";
export {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  BrowserServiceError,
  ClientOptionsError,
  ConflictError,
  InternalServerError,
  InvalidResponseError,
  NotFoundError,
  OutcomeUnknownError,
  PaginationError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  UnsupportedMediaTypeError,
  UploadInputError,
} from "./errors.js";
export type { RawMethods, Resources } from "./generated/facade.js";
export type { CallOptions, ClientOptions, RequestOptions } from "./options.js";
export type { HttpMethod, Operation, RawInit, RawMethod, RawResult } from "./raw.js";
export { timeoutSecMarginMs } from "./request.js";
export type { FetchLike } from "./transport.js";
export type { FormBody, UploadFile } from "./upload.js";
