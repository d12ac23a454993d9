import type { ErrorDetail, OutcomeUnknownError as OutcomeUnknownBody } from "@browser-service/types";

/** Base of every error this package throws. `code` is stable and machine-readable. */
export class BrowserServiceError extends Error {
  override readonly name: string = "BrowserServiceError";
  /** Stable, machine-readable snake_case code; `message` is for people and may change. */
  declare readonly code: string;

  /** @param code - stable code; @param message - what happened and what to do. */
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** `createClient` options that cannot work (`missing_api_key`). */
export class ClientOptionsError extends BrowserServiceError {
  override readonly name: string = "ClientOptionsError";
}

/** The service's `Error` body, or what the client made of a body that was not one. */
export type ErrorBody = Partial<Omit<OutcomeUnknownBody, "code">> & { code: string; message: string };

const snippet = (text: string) => JSON.stringify(text.replace(/\s+/g, " ").slice(0, 160));

/**
 * Reads an error body. A proxy's HTML page, an empty body or truncated JSON still gives
 * a code (`http_<status>` for no body, `invalid_error_body` otherwise) and a message that
 * quotes what arrived, so that the caller never has to dig into the raw response.
 */
function readErrorBody(status: number, text: string): ErrorBody {
  if (!text) return { code: `http_${status}`, message: `HTTP ${status} with an empty body` };
  let body: Partial<ErrorBody> | undefined;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON at all (an HTML page, truncated JSON): reported below with a snippet.
  }
  if (typeof body?.code === "string" && typeof body.message === "string") return body as ErrorBody;
  return { code: "invalid_error_body", message: `HTTP ${status} with a body that is not an Error JSON: ${snippet(text)}` };
}

/** A response with a non-2xx status. The subclass says which status family it was. */
export class APIError extends BrowserServiceError {
  override readonly name: string = "APIError";
  /** HTTP status of the response. */
  declare readonly status: number;
  /** One entry per problem (such as each failed validation rule); empty when none. */
  declare readonly details: ErrorDetail[];
  /** The lower-level cause reported by the service, when there is one. */
  declare readonly innerError: ErrorDetail | undefined;
  /** The response's `X-Request-Id`: quote it when reporting a problem. */
  declare readonly requestId: string | undefined;
  /** Every header of the response. */
  declare readonly headers: Headers;

  /** Prefer {@link APIError.from}, which picks the subclass for the status. */
  constructor(status: number, body: ErrorBody, headers: Headers) {
    super(body.code, body.message);
    this.status = status;
    this.details = body.details ?? [];
    this.innerError = body.inner_error;
    this.requestId = headers.get("x-request-id") ?? undefined;
    this.headers = headers;
  }

  /** The error for a non-2xx response: the subclass of its status, with its body read. */
  static from(status: number, text: string, headers: Headers): APIError {
    const body = readErrorBody(status, text);
    const Class =
      status === 504 && body.code === "outcome_unknown" ? OutcomeUnknownError : (statusClasses[status] ?? (status >= 500 ? InternalServerError : APIError));
    return new Class(status, body, headers);
  }
}

/** 400: the request was malformed or failed validation (see `details`). */
export class BadRequestError extends APIError {
  override readonly name: string = "BadRequestError";
}
/** 401: the API key or token is missing or invalid. */
export class AuthenticationError extends APIError {
  override readonly name: string = "AuthenticationError";
}
/** 403: the credential may not do this (for example a project-scoped key naming another project). */
export class PermissionDeniedError extends APIError {
  override readonly name: string = "PermissionDeniedError";
}
/** 404: the resource, or the project named by `X-Service-Project-Id`, does not exist. */
export class NotFoundError extends APIError {
  override readonly name: string = "NotFoundError";
}
/** 409: the request conflicts with the current state (a used name, a stale `tool_ref`, ...). */
export class ConflictError extends APIError {
  override readonly name: string = "ConflictError";
}
/** 413: the body or WebMCP input is over the size limit. */
export class PayloadTooLargeError extends APIError {
  override readonly name: string = "PayloadTooLargeError";
}
/** 415: the request body has a content type the operation does not take. */
export class UnsupportedMediaTypeError extends APIError {
  override readonly name: string = "UnsupportedMediaTypeError";
}
/** 422: the request is well formed but names something unusable (an extension the browser refused to load). */
export class UnprocessableEntityError extends APIError {
  override readonly name: string = "UnprocessableEntityError";
}
/** 429: rate-limited (`rate_limited`, see `Retry-After`) or over a concurrency cap. */
export class RateLimitError extends APIError {
  override readonly name: string = "RateLimitError";
}
/** Any 5xx status. */
export class InternalServerError extends APIError {
  override readonly name: string = "InternalServerError";
}

/**
 * 504 `outcome_unknown`: a WebMCP invocation began but its result was not observed. The
 * tool may have run; nothing was rolled back. Check the page instead of invoking again.
 */
export class OutcomeUnknownError extends InternalServerError {
  override readonly name: string = "OutcomeUnknownError";
  /** Id of the invocation that began, when the browser reported one. */
  declare readonly invocationId: string | undefined;

  /** Prefer {@link APIError.from}. */
  constructor(status: number, body: ErrorBody, headers: Headers) {
    super(status, body, headers);
    this.invocationId = body.invocation_id;
  }
}

const statusClasses: Record<number, typeof APIError> = {
  400: BadRequestError,
  401: AuthenticationError,
  403: PermissionDeniedError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  422: UnprocessableEntityError,
  429: RateLimitError,
};

/** No response arrived: the connection was refused, reset or failed (see `cause`). */
export class APIConnectionError extends BrowserServiceError {
  override readonly name: string = "APIConnectionError";

  /** @param call - `METHOD url` of the request; @param cause - the transport's error. */
  constructor(call: string, cause: unknown) {
    // fetch wraps the socket error ("fetch failed"); the inner one says what went wrong.
    const reason = (cause as { cause?: Error })?.cause ?? cause;
    super("connection_error", `${call} failed: ${(reason as Error)?.message ?? reason}`, { cause });
  }
}

/** No complete response within the call's timeout. */
export class APITimeoutError extends BrowserServiceError {
  override readonly name: string = "APITimeoutError";

  /** @param call - `METHOD url` of the request; @param timeoutMs - the timeout that passed. */
  constructor(call: string, timeoutMs: number) {
    super("timeout", `${call} got no complete response in ${timeoutMs} ms (timeoutMs)`);
  }
}

/** The caller's `AbortSignal` aborted the call. */
export class APIUserAbortError extends BrowserServiceError {
  override readonly name: string = "APIUserAbortError";

  /** @param call - `METHOD url` of the request. */
  constructor(call: string) {
    super("aborted", `${call} aborted by its signal`);
  }
}

/** A 2xx response whose body is not JSON (`invalid_response_body`). */
export class InvalidResponseError extends APIError {
  override readonly name: string = "InvalidResponseError";
}

/**
 * Paging headers that disagree (`paging_headers_invalid`): iteration stops with this
 * error instead of silently returning a truncated list.
 */
export class PaginationError extends BrowserServiceError {
  override readonly name: string = "PaginationError";
}

/**
 * An upload input that cannot be sent: not a supported kind (`upload_input_invalid`), a
 * path outside Node (`upload_path_unsupported`) or a file that cannot be read
 * (`upload_file_unreadable`, with the file system's error as `cause`).
 */
export class UploadInputError extends BrowserServiceError {
  override readonly name: string = "UploadInputError";
}
