import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { ServerLog } from "../observe/server-log.js";
import { StorageError } from "../storage/storage-error.js";
import {
  ApiError,
  BadRequestError,
  HeadersTooLargeError,
  InternalError,
  MethodNotAllowedError,
  NotFoundError,
  OutcomeUnknownError,
  PayloadTooLargeError,
  RequestTimeoutError,
  UnsupportedMediaTypeError,
} from "./api-errors.js";
import { hostHeaderError } from "./host-header.js";
import { writeRawError } from "./raw-error-response.js";

/** Node's bound on a request line and its headers together (its default `maxHeaderSize`). */
export const MAX_HEADER_BYTES = 16 * 1024;

const malformed = (code: string, message: string): BadRequestError => new BadRequestError("The request is malformed (1 problem).", [{ code, message }]);

// Fastify's and @fastify/multipart's own errors, by code, as the spec's errors.
const TRANSLATIONS: Record<string, (error: FastifyError, request: FastifyRequest) => ApiError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (_error, request) =>
    new UnsupportedMediaTypeError(request.routeOptions.config.formBody ? "multipart/form-data" : "application/json", request.headers["content-type"]),
  FST_INVALID_MULTIPART_CONTENT_TYPE: (_error, request) => new UnsupportedMediaTypeError("multipart/form-data", request.headers["content-type"]),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new PayloadTooLargeError("The request body is too large for this operation."),
  FST_ERR_CTP_INVALID_JSON_BODY: (error) => new BadRequestError("The request body is not valid JSON.", [{ code: "invalid_json", message: error.message }]),
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: () => malformed("invalid_framing", "The body's length is not the one its Content-Length header gives."),
  FST_ERR_BAD_URL: (_error, request) =>
    malformed("invalid_url", `The path ${JSON.stringify(request.raw.url?.split("?")[0])} has an invalid percent-encoding; write '%' as %25.`),
  // Unreachable while path segments may be as long as Node reads (see app/server.ts): the operation's own maxLength answers first.
  FST_ERR_MAX_PARAM_LENGTH: () => malformed("maxLength", "Path: a path segment is too long."),
  FST_FILES_LIMIT: () =>
    new BadRequestError("The form is invalid (1 problem).", [{ code: "too_many_files", message: "Send exactly one file part, named file." }]),
  FST_PARTS_LIMIT: () =>
    new BadRequestError("The form is invalid (1 problem).", [
      { code: "too_many_parts", message: "The form has too many parts; send file and, optionally, name." },
    ]),
  FST_FIELDS_LIMIT: () =>
    new BadRequestError("The form is invalid (1 problem).", [
      { code: "too_many_parts", message: "The form has too many fields; send file and, optionally, name." },
    ]),
};

/** Turns any error into an {@link ApiError}: known client errors keep their meaning, the rest are 500. */
export function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  const fastifyError = error as Partial<FastifyError>;
  const translate = fastifyError.code === undefined ? undefined : TRANSLATIONS[fastifyError.code];
  if (translate) return translate(error as FastifyError, request);
  if (error instanceof SyntaxError && fastifyError.statusCode === 400) {
    return new BadRequestError("The request body is not valid JSON.", [{ code: "invalid_json", message: error.message }]);
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    // A client mistake the table above does not name: a stable code, never the framework's.
    return malformed("malformed_request", fastifyError.message ?? "The request cannot be read.");
  }
  return serviceError(error);
}

/**
 * Turns an error an operation threw (not the framework: no request to read) into an
 * {@link ApiError}: an ApiError as it is, the rest 500.
 */
export function serviceError(error: unknown): ApiError {
  if (error instanceof ApiError) return error;
  // Said plainly, as the cause is passing: a shared database that went away or restarts.
  if (error instanceof StorageError && error.code === "storage_unavailable") {
    return new InternalError("The service's database is not answering; retry in a moment.", error);
  }
  return new InternalError(undefined, error);
}

/** A log of the pino kind: an object of fields, then the message. */
export type ErrorLog = Pick<ServerLog, "debug" | "info" | "error">;

/** 503s that say what state the server is in (not ready, draining, short of memory), which a probe or a client asks again and again. */
const STATE_REFUSALS = new Set(["not_ready", "node_draining", "host_memory_low"]);

/**
 * Logs an answered error by what it says about the server: a fault (5xx) at error level
 * with its cause, but a refusal for its state (not ready, draining, short of memory) at
 * debug level only; an unobserved WebMCP outcome at info level, as it is the page's doing (a
 * slow tool, a closed tab); a client's mistake at debug level only.
 */
export function logApiError(log: ErrorLog, apiError: ApiError, error: unknown): void {
  // The server's state, not a fault: said where it changes (readiness, drain), not at each refusal.
  if (STATE_REFUSALS.has(apiError.code)) log.debug({ code: apiError.code }, apiError.message);
  else if (apiError instanceof OutcomeUnknownError)
    log.info({ code: apiError.code, invocation_id: apiError.invocationId, inner_error: apiError.innerError }, apiError.message);
  else if (apiError.status >= 500) log.error({ err: apiError.cause ?? error }, apiError.message);
  else log.debug({ code: apiError.code }, apiError.message);
}

/**
 * The methods of every route by its path pattern, so that a request for a known path with
 * another method is told which methods the path takes (405 and `Allow`) instead of 404.
 */
class RouteTable {
  readonly #routes: { segments: string[]; method: string }[] = [];

  add(url: string, methods: string | string[]): void {
    for (const method of [methods].flat()) this.#routes.push({ segments: url.split("/"), method });
  }

  /** The methods the routes matching `path` take, sorted; empty when no route has this path. */
  methodsOf(path: string): string[] {
    const segments = path.split("/");
    const matches = (pattern: string[]): boolean =>
      pattern.length === segments.length && pattern.every((part, i) => (part.startsWith(":") ? segments[i] !== "" : part === segments[i]));
    return [...new Set(this.#routes.filter((route) => matches(route.segments)).map((route) => route.method))].sort();
  }
}

/** 404 for a path no operation has, 405 with `Allow` for a known path with another method. */
function routeMiss(routes: RouteTable, request: FastifyRequest): ApiError {
  const path = (request.raw.url ?? "/").split("?")[0] ?? "/";
  const allowed = routes.methodsOf(path);
  if (allowed.length > 0) return new MethodNotAllowedError(request.method, path, allowed);
  return new NotFoundError(`No operation matches ${request.method} ${path}; see the API reference for the paths.`);
}

/** Sends `error` as the spec's Error body with its status and headers. */
export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.status).headers(error.headers).type("application/json; charset=utf-8").send(error.toBody());
}

/**
 * Fastify's `frameworkErrors`: a path the router cannot decode (`%ZZ`), answered as the
 * spec's 400 instead of Fastify's own body. Fastify calls it before any hook runs.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const apiError = toApiError(error, request);
  reply.header("x-request-id", request.id);
  void sendApiError(reply, apiError);
}

type ParserError = Error & { code?: string; reason?: string };

// llhttp's codes for a request whose Content-Length or Transfer-Encoding is wrong or contradictory.
const FRAMING_CODES = new Set([
  "HPE_UNEXPECTED_CONTENT_LENGTH",
  "HPE_INVALID_CONTENT_LENGTH",
  "HPE_INVALID_TRANSFER_ENCODING",
  "HPE_INVALID_CHUNK_SIZE",
  "HPE_CHUNK_EXTENSIONS_OVERFLOW",
]);

/** What a request Node's HTTP parser refused (or gave up waiting for) is answered with. */
export function clientErrorAnswer(error: ParserError): ApiError {
  const reason = (error.reason ?? error.message).replace(/\.+$/, "");
  if (error.code === "HPE_HEADER_OVERFLOW") return new HeadersTooLargeError(MAX_HEADER_BYTES);
  if (error.code === "ERR_HTTP_REQUEST_TIMEOUT") return new RequestTimeoutError();
  if (error.code === "HPE_INVALID_METHOD")
    return malformed("invalid_method", "The method is not one the HTTP parser knows; the API uses GET, POST, PATCH and DELETE.");
  if (error.code !== undefined && FRAMING_CODES.has(error.code)) return malformed("invalid_framing", `The request's framing is invalid: ${reason}.`);
  return malformed("malformed_request", `The request cannot be parsed: ${reason}.`);
}

/**
 * Fastify's `clientErrorHandler`, for what Node refuses before any request exists: headers
 * over the limit, broken framing (two Content-Length headers, Content-Length with
 * chunked), an unknown method, a request that did not arrive in time. Writes the spec's
 * Error body (with `X-Request-Id`, as every response has) on the raw socket, unless a
 * response already began on it, then closes the connection: after such an error the
 * bytes that follow cannot be trusted to start a request.
 */
export function answerClientError(this: FastifyInstance, error: ParserError, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const apiError = clientErrorAnswer(error);
  this.log.debug({ code: apiError.code, parser_code: error.code }, apiError.message);
  // A request in flight on this socket may have started its response; a second one would corrupt it.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) writeRawError(socket, apiError);
  socket.destroy(error);
}

/**
 * Node's `connect` event: `CONNECT` asks a proxy for a tunnel, and this server is not one.
 * Without a listener Node closes the connection without a word; this answers the spec's
 * 400 first.
 */
export function answerConnect(_request: IncomingMessage, socket: Duplex): void {
  if (socket.writable)
    writeRawError(
      socket,
      malformed("invalid_method", "CONNECT asks a proxy for a tunnel, and this server is not one; the API uses GET, POST, PATCH and DELETE."),
    );
  socket.destroy();
}

/**
 * The one error handler: every failure becomes the spec's Error body. Server faults are
 * logged with their cause and answered with a message that reveals nothing internal;
 * `outcome_unknown` is logged at info level, client errors at debug level only. A request
 * that matched no route is 404 or 405 whatever else went wrong with it (a QUERY without
 * Content-Type, a body that does not parse): there is no operation to speak for.
 * Call before routes are added, so that every route is known to the 405 answer.
 */
export function installErrorHandling(app: FastifyInstance): void {
  const routes = new RouteTable();
  app.addHook("onRoute", (route) => routes.add(route.url, route.method));
  // HTTP/1.1 requires one valid Host (RFC 9112 3.2); Node's own check would answer without the Error body (app/server.ts turns it off).
  app.addHook("onRequest", (request, _reply, done) => {
    const hostError = hostHeaderError(request.raw);
    if (hostError) done(hostError);
    else done();
  });
  app.setErrorHandler((error, request, reply) => {
    const apiError = request.is404 ? routeMiss(routes, request) : toApiError(error, request);
    logApiError(request.log, apiError, error);
    return sendApiError(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) => sendApiError(reply, routeMiss(routes, request)));
}
