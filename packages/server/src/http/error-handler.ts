import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, BadRequestError, InternalError, NotFoundError, OutcomeUnknownError, PayloadTooLargeError, UnsupportedMediaTypeError } from "./api-errors.js";

// Fastify's and @fastify/multipart's own errors, by code, as the spec's errors.
const TRANSLATIONS: Record<string, (error: FastifyError, request: FastifyRequest) => ApiError> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: (_error, request) => new UnsupportedMediaTypeError("application/json", request.headers["content-type"]),
  FST_INVALID_MULTIPART_CONTENT_TYPE: (_error, request) => new UnsupportedMediaTypeError("multipart/form-data", request.headers["content-type"]),
  FST_ERR_CTP_BODY_TOO_LARGE: () => new PayloadTooLargeError("The request body is too large for this operation."),
  FST_ERR_CTP_EMPTY_JSON_BODY: () =>
    new BadRequestError("The request body is invalid (1 problem).", [{ code: "invalid_json", message: "The body is empty but Content-Type is application/json; send a JSON value." }]),
  FST_ERR_CTP_INVALID_JSON_BODY: (error) => new BadRequestError("The request body is not valid JSON.", [{ code: "invalid_json", message: error.message }]),
  FST_FILES_LIMIT: () => new BadRequestError("The form is invalid (1 problem).", [{ code: "too_many_files", message: "Send exactly one file part, named file." }]),
  FST_PARTS_LIMIT: () => new BadRequestError("The form is invalid (1 problem).", [{ code: "too_many_parts", message: "The form has too many parts; send file and, optionally, name." }]),
  FST_FIELDS_LIMIT: () => new BadRequestError("The form is invalid (1 problem).", [{ code: "too_many_parts", message: "The form has too many fields; send file and, optionally, name." }]),
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
    // Malformed framing and similar client mistakes the table above does not name.
    return new BadRequestError("The request is malformed.", [{ code: fastifyError.code?.toLowerCase() ?? "malformed", message: fastifyError.message ?? "Malformed request." }]);
  }
  return new InternalError(undefined, error);
}

/** Sends `error` as the spec's Error body with its status and headers. */
export function sendApiError(reply: FastifyReply, error: ApiError): FastifyReply {
  return reply.code(error.status).headers(error.headers).type("application/json; charset=utf-8").send(error.toBody());
}

/**
 * The one error handler: every failure becomes the spec's Error body. Server faults are
 * logged with their cause and answered with a message that reveals nothing internal;
 * `outcome_unknown` is logged at info level, client errors at debug level only.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const apiError = toApiError(error, request);
    // An unobserved WebMCP outcome is the page's doing (a slow tool, a closed tab), not a server fault.
    if (apiError instanceof OutcomeUnknownError) request.log.info({ code: apiError.code, invocation_id: apiError.invocationId, inner_error: apiError.innerError }, apiError.message);
    else if (apiError.status >= 500) request.log.error({ err: apiError.cause ?? error }, apiError.message);
    else request.log.debug({ code: apiError.code }, apiError.message);
    return sendApiError(reply, apiError);
  });
  app.setNotFoundHandler((request, reply) =>
    sendApiError(reply, new NotFoundError(`No operation matches ${request.method} ${request.url.split("?")[0]}; see the API reference for the paths.`)),
  );
}
