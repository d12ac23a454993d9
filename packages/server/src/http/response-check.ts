import { validateError } from "@browser-service/validators";
import type { FastifyInstance } from "fastify";
import { operationChecks } from "./operation-validators.js";

/** A response that breaks the spec. */
export interface ResponseMismatch {
  operationId: string | undefined;
  method: string;
  url: string;
  status: number;
  problems: string[];
}

/** Settings of the response check, which tests turn on. */
export interface ResponseCheckOptions {
  /** Called for each response that breaks the spec. */
  onMismatch(mismatch: ResponseMismatch): void;
  /**
   * The error codes each operation may return, by operationId and status (the spec's
   * `x-error-codes`); when given, an error code not listed is a mismatch.
   */
  errorCodes?: Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;
  /**
   * The responses whose body is bytes rather than JSON (an archive), by operationId and
   * status, with their media type; such a response must carry that `Content-Type`.
   */
  byteResponses?: Readonly<Record<string, Readonly<Record<string, string>>>>;
}

function parseJson(payload: unknown): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(String(payload)) };
  } catch {
    return { ok: false };
  }
}

/**
 * Checks every response the server sends against the spec: the body with the generated
 * response validator of its operation and status (the `Error` schema for unrouted
 * paths), the status being one the operation declares, its error code being listed,
 * `X-Request-Id` always, the paging headers on every list, and no body but an `ETag`
 * on a `304`.
 */
export function installResponseCheck(app: FastifyInstance, options: ResponseCheckOptions): void {
  app.addHook("onSend", async (request, reply, payload) => {
    const operationId = request.routeOptions.config.operationId;
    const status = reply.statusCode;
    // A page is checked by its own tests; its errors are the API's, checked below.
    if (request.routeOptions.config.page === true && status === 200) return payload;
    const problems: string[] = [];
    if (!reply.getHeader("x-request-id")) problems.push("X-Request-Id is missing");
    if (status === 204 || status === 304) {
      if (payload !== null && payload !== undefined && String(payload) !== "") problems.push(`a ${status} response has a body`);
      // A 304 only answers a conditional request, and must name the version it confirms.
      if (status === 304 && !reply.getHeader("etag")) problems.push("a 304 response has no ETag");
    } else if (operationId !== undefined && options.byteResponses?.[operationId]?.[String(status)] !== undefined) {
      const mediaType = options.byteResponses[operationId]?.[String(status)] ?? "";
      if (!String(reply.getHeader("content-type")).startsWith(mediaType)) problems.push(`the Content-Type is not ${mediaType}`);
    } else {
      const body = parseJson(payload);
      if (!body.ok) {
        problems.push("the body is not JSON");
      } else {
        const check = operationId === undefined ? validateError : operationChecks(operationId).responses[status];
        if (!check) {
          problems.push(`status ${status} is not declared for ${operationId}`);
        } else {
          const result = check(body.value);
          if (!result.ok) problems.push(...result.errors.map((issue) => `${issue.pointer || "/"} ${issue.message}`));
        }
        const code = (body.value as { code?: unknown }).code;
        const listed = operationId === undefined ? undefined : options.errorCodes?.[operationId]?.[String(status)];
        if (status >= 400 && listed && !listed.includes(String(code)))
          problems.push(`error code ${String(code)} is not listed for ${operationId} ${status} (${listed.join(", ")})`);
        if (status === 200 && Array.isArray(body.value)) {
          if (!["true", "false"].includes(String(reply.getHeader("x-has-more")))) problems.push("X-Has-More is not true or false");
          if (!/^\d+$/.test(String(reply.getHeader("x-next-offset")))) problems.push("X-Next-Offset is not a non-negative integer");
        }
      }
    }
    if (problems.length > 0) options.onMismatch({ operationId, method: request.method, url: request.url, status, problems });
    return payload;
  });
}
