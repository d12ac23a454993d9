import type { Error as ErrorBody, ErrorDetail, OutcomeUnknownError as OutcomeUnknownBody } from "@browser-service/types";

// The bodies are the spec's types, generated; the server's modules import them from here.
export type { ErrorBody, ErrorDetail };

/** Optional parts of an {@link ApiError}. */
export interface ApiErrorOptions {
  /** One entry per problem, such as each failed validation rule. */
  details?: ErrorDetail[];
  /** The lower-level error, rendered as `inner_error` when it is safe to show. */
  innerError?: ErrorDetail;
  /** Extra response headers, such as `Retry-After`. */
  headers?: Record<string, string>;
  /** The error that caused this one, kept for the log only. */
  cause?: unknown;
}

/**
 * An error the API answers with: an HTTP status, a stable snake_case `code` listed in
 * the spec's `x-error-codes` of the operation, and a message for people. The one error
 * handler renders every instance as the spec's `Error` body.
 */
export class ApiError extends Error {
  /** HTTP status of the response. */
  readonly status: number;
  /** Stable machine-readable code of the response body. */
  readonly code: string;
  /** `details` of the response body, when there are several problems. */
  readonly details: ErrorDetail[] | undefined;
  /** `inner_error` of the response body. */
  readonly innerError: ErrorDetail | undefined;
  /** Extra response headers. */
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, message: string, options: ApiErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.innerError = options.innerError;
    this.headers = options.headers ?? {};
  }

  /** The response body: the spec's `Error` schema. */
  toBody(): ErrorBody {
    const body: ErrorBody = { code: this.code, message: this.message };
    if (this.details !== undefined) body.details = this.details;
    if (this.innerError !== undefined) body.inner_error = this.innerError;
    return body;
  }
}

/** 400 `bad_request`: a malformed request or one breaking a rule, one detail per problem. */
export class BadRequestError extends ApiError {
  constructor(message: string, details?: ErrorDetail[]) {
    super(400, "bad_request", message, details === undefined ? {} : { details });
  }
}

/** 401 `unauthorized`: the bearer credential is missing or names no valid key. */
export class UnauthorizedError extends ApiError {
  constructor(message: string) {
    super(401, "unauthorized", message);
  }
}

/** 403 `forbidden`: the credential may not do this (project scope or project administration). */
export class ForbiddenError extends ApiError {
  constructor(message: string) {
    super(403, "forbidden", message);
  }
}

/** 404 `not_found`: no resource with this id (or name) in the project or organization. */
export class NotFoundError extends ApiError {
  constructor(message: string) {
    super(404, "not_found", message);
  }
}

/** 404 `project_not_found`: the request's project is unknown, archived or deleted. */
export class ProjectNotFoundError extends ApiError {
  constructor(message: string) {
    super(404, "project_not_found", message);
  }
}

/** 404 `extension_not_found`: an `extensions` entry of a create names no extension of the project. */
export class ExtensionNotFoundError extends ApiError {
  constructor(message: string) {
    super(404, "extension_not_found", message);
  }
}

/** 404 `profile_not_found`: the `profile` of a create names no profile of the project. */
export class ProfileNotFoundError extends ApiError {
  constructor(message: string) {
    super(404, "profile_not_found", message);
  }
}

/** 422 `profile_load_failed`: the profile's saved state could not be loaded into the new browser. */
export class ProfileLoadFailedError extends ApiError {
  constructor(message: string, cause?: unknown) {
    super(422, "profile_load_failed", message, cause === undefined ? {} : { cause });
  }
}

/** 409 `profile_in_use`: a running browser saves into the profile when it ends. */
export class ProfileInUseError extends ApiError {
  constructor(profile: string, browserId: string, refused: "delete" | "save") {
    super(
      409,
      "profile_in_use",
      `The profile "${profile}" is held by the running browser ${browserId}, which saves into it when it ends; ${
        refused === "delete" ? "delete that browser first" : "start this one without save_changes, or delete that one first"
      }.`,
    );
  }
}

/** 409 `totp_secret_missing`: a TOTP code was asked of a credential without a TOTP secret. */
export class TotpSecretMissingError extends ApiError {
  constructor(message: string) {
    super(409, "totp_secret_missing", message);
  }
}

/** 422 `extension_load_failed`: the browser refused to load an extension of a create. */
export class ExtensionLoadFailedError extends ApiError {
  constructor(message: string, cause?: unknown) {
    super(422, "extension_load_failed", message, cause === undefined ? {} : { cause });
  }
}

/** 404 `projects_disabled`: project administration is off for the organization. */
export class ProjectsDisabledError extends ApiError {
  constructor() {
    super(404, "projects_disabled", "Projects are disabled for this organization.");
  }
}

/** 409 `name_conflict`: the name is already used where it must be unique. */
export class NameConflictError extends ApiError {
  constructor(message: string) {
    super(409, "name_conflict", message);
  }
}

/** 409 `auth_connection_exists`: the profile already has a connection for the domain. */
export class AuthConnectionExistsError extends ApiError {
  constructor(message: string) {
    super(409, "auth_connection_exists", message);
  }
}

/** 404 `credential_not_found`: a reference to no credential of the project. */
export class CredentialNotFoundError extends ApiError {
  constructor(message: string) {
    super(404, "credential_not_found", message);
  }
}

/** 409 `flow_in_progress`: a login flow of the connection runs and has not expired. */
export class FlowInProgressError extends ApiError {
  constructor(message: string) {
    super(409, "flow_in_progress", message);
  }
}

/** 409 `flow_not_awaiting_input`: no flow of the connection waits for fields or a choice. */
export class FlowNotAwaitingInputError extends ApiError {
  constructor(message: string) {
    super(409, "flow_not_awaiting_input", message);
  }
}

/** 409 `stale_interaction`: the submit names an interaction that is no longer the current one. */
export class StaleInteractionError extends ApiError {
  constructor(message: string) {
    super(409, "stale_interaction", message);
  }
}

/** 400 `invalid_submission`: unknown field ids, a choice not offered, a required field missing. */
export class InvalidSubmissionError extends ApiError {
  constructor(message: string) {
    super(400, "invalid_submission", message);
  }
}

/** 409 `no_flow`: the connection never started a login flow, so there is nothing to follow. */
export class NoFlowError extends ApiError {
  constructor(message: string) {
    super(409, "no_flow", message);
  }
}

/** 409 `last_active_project`: the change would leave the organization without an active project. */
export class LastActiveProjectError extends ApiError {
  constructor(action: "archive" | "delete") {
    super(409, "last_active_project", `Cannot ${action} the organization's last active project; activate or create another project first.`);
  }
}

/** 409 `project_not_empty`: active resources remain in the project being deleted. */
export class ProjectNotEmptyError extends ApiError {
  constructor(message: string) {
    super(409, "project_not_empty", message);
  }
}

/**
 * 409 `default_project`: the organization's default project cannot be archived or
 * deleted, because every request without a project header (and without a
 * project-scoped key) acts on it.
 */
export class DefaultProjectError extends ApiError {
  constructor(action: "archive" | "delete") {
    super(409, "default_project", `Cannot ${action} the organization's default project; requests without X-Service-Project-Id act on it.`);
  }
}

/**
 * 409 `browsers_running`: archiving a project whose browsers run would leave them
 * running where no API call can reach or stop them, still holding concurrency slots.
 */
export class BrowsersRunningError extends ApiError {
  constructor(count: number) {
    super(
      409,
      "browsers_running",
      `The project still has ${count} running browser${count === 1 ? "" : "s"}; delete ${count === 1 ? "it" : "them"} before archiving the project.`,
    );
  }
}

/** 404 `tool_not_found`: the `tool_ref` was never issued by this browser, or cannot be parsed; no invocation began. */
export class ToolNotFoundError extends ApiError {
  constructor() {
    super(404, "tool_not_found", "This tool_ref was not issued for this browser; discover tools again.");
  }
}

/** 409 `tool_ref_stale`: the registration the `tool_ref` named is gone; no invocation began. */
export class ToolRefStaleError extends ApiError {
  constructor(message = "The tool registration is gone (unregistered, or its document closed or was replaced); discover tools again.") {
    super(409, "tool_ref_stale", message);
  }
}

/** 409 `conflict`: the resource is in a state that does not allow this. */
export class ConflictError extends ApiError {
  constructor(message: string) {
    super(409, "conflict", message);
  }
}

/** 413 `payload_too_large`: the body is over the operation's size bound. */
export class PayloadTooLargeError extends ApiError {
  constructor(message: string) {
    super(413, "payload_too_large", message);
  }
}

/** 415 `unsupported_media_type`: the body's Content-Type is not one the operation accepts. */
export class UnsupportedMediaTypeError extends ApiError {
  constructor(expected: string, received: string | undefined) {
    super(415, "unsupported_media_type", `Send the body as ${expected}${received ? ` (received ${received})` : ""}.`);
  }
}

/** 405 `method_not_allowed`: the path exists, but not with this method; `Allow` lists its methods (RFC 9110). */
export class MethodNotAllowedError extends ApiError {
  constructor(method: string, path: string, allowed: readonly string[]) {
    super(405, "method_not_allowed", `${path} does not take ${method}; it takes ${allowed.join(", ")}.`, { headers: { allow: allowed.join(", ") } });
  }
}

/** 408 `request_timeout`: the request's headers did not arrive in time. */
export class RequestTimeoutError extends ApiError {
  constructor(message = "The request did not arrive in time; send it again.") {
    super(408, "request_timeout", message);
  }
}

/** 431 `headers_too_large`: the request line and headers are larger than the server reads. */
export class HeadersTooLargeError extends ApiError {
  constructor(limitBytes: number) {
    super(431, "headers_too_large", `The request line and headers are larger than ${limitBytes / 1024} KiB; send smaller headers (cookies, long URLs).`);
  }
}

/** 429 `concurrency_limit_exceeded`: a new browser would pass the project's cap or the organization limit. */
export class ConcurrencyLimitExceededError extends ApiError {
  constructor(message: string) {
    super(429, "concurrency_limit_exceeded", message);
  }
}

/**
 * 429 `rate_limited`: over a request rate limit. `Retry-After` and the message give the
 * wait in whole seconds, rounded up and at least 1, so that a client waiting that long
 * finds the limit open again.
 */
export class RateLimitedError extends ApiError {
  /** The `Retry-After` value: whole seconds to wait before sending again. */
  readonly retryAfterSeconds: number;

  /** @param reason - which limit was reached; @param waitSeconds - exact wait, rounded up here. */
  constructor(reason: string, waitSeconds: number) {
    const seconds = Math.max(1, Math.ceil(waitSeconds));
    super(429, "rate_limited", `${reason}; retry after ${seconds} second${seconds === 1 ? "" : "s"}.`, { headers: { "retry-after": String(seconds) } });
    this.retryAfterSeconds = seconds;
  }
}

/** 429 `cdp_client_limit_exceeded`: the browser already has as many DevTools clients as the server allows. */
export class CdpClientLimitError extends ApiError {
  constructor(limit: number) {
    super(429, "cdp_client_limit_exceeded", `This browser already has ${limit} DevTools clients, the most this server allows; close one first.`);
  }
}

/**
 * 504 `outcome_unknown`: a WebMCP invocation began but its result was not observed. The
 * body (the spec's `OutcomeUnknownError`) carries the `invocation_id` when the browser gave one.
 */
export class OutcomeUnknownError extends ApiError {
  /** The browser's id of the invocation that began, if it reported one. */
  readonly invocationId: string | undefined;

  constructor(message: string, invocationId: string | undefined, innerError?: ErrorDetail, details?: ErrorDetail[]) {
    super(504, "outcome_unknown", message, { ...(innerError === undefined ? {} : { innerError }), ...(details === undefined ? {} : { details }) });
    this.invocationId = invocationId;
  }

  /** The spec's `OutcomeUnknownError` body: the `Error` fields plus `invocation_id` when known. */
  override toBody(): ErrorBody & Pick<OutcomeUnknownBody, "invocation_id"> {
    const body: ErrorBody & Pick<OutcomeUnknownBody, "invocation_id"> = super.toBody();
    if (this.invocationId !== undefined) body.invocation_id = this.invocationId;
    return body;
  }
}

/**
 * 503 `browser_unavailable`: no browser could be started (the executable is missing,
 * cannot run, or failed before it was ready). The cause goes to the log only: it names
 * paths of the server's machine.
 */
export class BrowserUnavailableError extends ApiError {
  /** `reason`, when given, is said to the client: a setting of the service, not a fault to hide. */
  constructor(cause?: unknown, reason?: string) {
    super(
      503,
      "browser_unavailable",
      reason ?? "The service could not start a browser; no browser was started. Quote X-Request-Id when reporting it.",
      cause === undefined ? {} : { cause },
    );
  }
}

/**
 * 503 `host_memory_low`: the host's available memory is below the floor the server
 * keeps, so no browser is started; `Retry-After` says when to try again.
 */
export class HostMemoryLowError extends ApiError {
  constructor(availableMib: number, floorMib: number, retryAfterSeconds: number) {
    super(
      503,
      "host_memory_low",
      `The host has ${availableMib} MiB of memory available, below the ${floorMib} MiB it keeps; no browser was started. Retry after ${retryAfterSeconds} seconds, or end a browser first.`,
      { headers: { "retry-after": String(retryAfterSeconds) } },
    );
  }
}

/**
 * 503 `node_draining`: the server is shutting down and starts no new browsers, and no
 * other node could take the create; `Retry-After` says when to try again.
 */
export class NodeDrainingError extends ApiError {
  constructor(retryAfterSeconds: number) {
    super(
      503,
      "node_draining",
      `This server is shutting down and starts no new browsers; no browser was started. Retry after ${retryAfterSeconds} second${retryAfterSeconds === 1 ? "" : "s"}.`,
      { headers: { "retry-after": String(retryAfterSeconds) } },
    );
  }
}

/** 503 `not_ready`: the server answers but should get no new browsers now (`GET /readyz`); the message names each reason. */
export class NotReadyError extends ApiError {
  constructor(reasons: readonly string[]) {
    super(503, "not_ready", `Not ready: ${reasons.join("; ")}.`);
  }
}

/** 500 `internal_error`: the service failed; the message never carries internals. */
export class InternalError extends ApiError {
  constructor(message = "The service failed to handle the request.", cause?: unknown) {
    super(500, "internal_error", message, cause === undefined ? {} : { cause });
  }
}
