import { validateError } from "@browser-service/validators";
import type { Exchange } from "./http-exchange.js";

/** The 5xx answers the spec documents as something other than a server fault, by operationId, status and code. */
export type Allowed5xx = Readonly<Record<string, Readonly<Record<string, readonly string[]>>>>;

/** What one request was meant to test, as far as its answer is judged. */
export interface Judged {
  operationId: string | undefined;
  label: string;
  /** Statuses a request that breaks a rule may get; absent for a valid request. */
  expect?: readonly number[];
  /** The error code the answer must have. */
  code?: string;
  /** The `Allow` header a 405 must have. */
  allow?: string;
  method: string;
}

const REQUEST_ID = /^req_[0-9a-f]{20}$/;

function parse(body: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(body) };
  } catch {
    return { ok: false };
  }
}

/**
 * What is wrong with an answer, whoever wrote it (the server's response check sees only
 * what passes Fastify's hooks; this sees the bytes): a 5xx the spec does not document for
 * the operation, a status outside what the request's broken rule allows, an error body
 * that is not the spec's Error (with at least one detail for `bad_request`, as the spec
 * says), or no `X-Request-Id`.
 */
export function answerProblems(request: Judged, exchange: Exchange, allowed5xx: Allowed5xx): string[] {
  if ("error" in exchange) return [`no answer: ${exchange.error}`];
  const problems: string[] = [];
  const { status, headers, body } = exchange;
  const parsed = parse(body);
  const code = parsed.ok && typeof parsed.value === "object" && parsed.value !== null ? (parsed.value as { code?: unknown }).code : undefined;
  if (status >= 500) {
    const documented = request.operationId === undefined ? [] : (allowed5xx[request.operationId]?.[String(status)] ?? []);
    if (!documented.includes(String(code)))
      problems.push(`5xx: ${status} ${String(code)} is not a documented answer of ${request.operationId ?? "an unrouted request"}`);
  }
  if (request.expect && !request.expect.includes(status)) problems.push(`status ${status}, expected ${request.expect.join(" or ")}`);
  if (!request.expect && [413, 415].includes(status)) problems.push(`a valid request got ${status}`);
  if (!request.expect && status === 400) problems.push(`a valid request was refused: ${body.slice(0, 300)}`);
  if (request.code !== undefined && code !== request.code) problems.push(`code ${String(code)}, expected ${request.code}`);
  if (request.allow !== undefined && headers.allow !== request.allow) problems.push(`Allow ${String(headers.allow)}, expected ${request.allow}`);
  if (status !== 101 && !REQUEST_ID.test(headers["x-request-id"] ?? "")) problems.push(`X-Request-Id is ${JSON.stringify(headers["x-request-id"])}`);
  if (status >= 400 && request.method !== "HEAD") {
    if (!/^application\/json(;|$)/.test(headers["content-type"] ?? "")) problems.push(`error Content-Type is ${JSON.stringify(headers["content-type"])}`);
    if (!parsed.ok) problems.push(`error body is not JSON: ${JSON.stringify(body.slice(0, 200))}`);
    else {
      const check = validateError(parsed.value);
      if (!check.ok)
        problems.push(
          `error body is not the Error schema: ${check.errors.map((issue) => `${issue.pointer || "/"} ${issue.message}`).join("; ")} in ${body.slice(0, 200)}`,
        );
      const details = (parsed.value as { details?: unknown[] }).details;
      if (code === "bad_request" && !(Array.isArray(details) && details.length > 0))
        problems.push("bad_request without details: the spec promises one entry per problem");
    }
  }
  return problems;
}

/**
 * Rules of the spec beyond the schemas that one answer can show: a project name is
 * stored, and so echoed, in NFC; a login flow past its `flow_expires_at` reads as
 * `EXPIRED`, never `IN_PROGRESS`.
 */
export function semanticProblems(operationId: string | undefined, sentBody: unknown, exchange: Exchange): string[] {
  if ("error" in exchange || exchange.status >= 300) return [];
  const answered = parse(exchange.body);
  const value = (answered.ok ? answered.value : undefined) as { name?: unknown; flow_status?: unknown; flow_expires_at?: unknown } | undefined;
  if (
    operationId === "getAuthConnection" &&
    value?.flow_status === "IN_PROGRESS" &&
    typeof value.flow_expires_at === "string" &&
    Date.parse(value.flow_expires_at) <= Date.now()
  ) {
    return [`a flow that expired at ${value.flow_expires_at} reads as IN_PROGRESS, not EXPIRED`];
  }
  if (operationId !== "createProject" && operationId !== "updateProject") return [];
  const sent = (sentBody as { name?: unknown } | undefined)?.name;
  if (typeof sent !== "string") return [];
  return value?.name === sent.normalize("NFC") ? [] : [`name ${JSON.stringify(sent)} was answered as ${JSON.stringify(value?.name)}, not its NFC form`];
}
