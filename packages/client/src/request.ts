import {
  type BodySerializer,
  createFinalURL,
  createQuerySerializer,
  defaultBodySerializer,
  defaultPathSerializer,
  type HeadersOptions,
  mergeHeaders,
  type ParseAs,
  type PathSerializer,
  type QuerySerializer,
  type QuerySerializerOptions,
  removeTrailingSlash,
} from "openapi-fetch";
import { InvalidResponseError } from "./errors.js";
import type { OperationRow, OperationRules } from "./operation-row.js";
import { type CallOptions, projectHeader, type Settings } from "./options.js";
import { idempotentMethods } from "./retry.js";
import { send } from "./send.js";
import type { Transport } from "./transport.js";

/** The request of any call, raw or through the facade: openapi-fetch's options and {@link CallOptions}. */
export interface CallInit extends CallOptions, Omit<RequestInit, "body" | "headers" | "method" | "signal"> {
  params?: { path?: Record<string, unknown> | undefined; query?: Record<string, unknown> | undefined; header?: object };
  signal?: AbortSignal | null | undefined;
  body?: unknown;
  headers?: HeadersOptions | undefined;
  baseUrl?: string;
  parseAs?: ParseAs;
  querySerializer?: QuerySerializer<unknown> | QuerySerializerOptions;
  bodySerializer?: BodySerializer<unknown>;
  pathSerializer?: PathSerializer;
}

/** Sends one call; resolves to its parsed body (`data`) and the response. */
export type Call = (method: string, path: string, init?: CallInit) => Promise<{ data: unknown; response: Response }>;

/**
 * Added to an invocation's `timeout_sec` to get the least request timeout of that call,
 * so that the server's own answer (a result or a 504 `outcome_unknown`) arrives first.
 */
export const timeoutSecMarginMs = 5_000;

const defaultQuerySerializer = createQuerySerializer();

/** The success body as `parseAs` asks, `undefined` when there is none (as openapi-fetch does). */
async function readBody(response: Response, method: string, parseAs: ParseAs): Promise<unknown> {
  if (response.status === 204 || response.status === 304 || method === "HEAD") return undefined;
  if (parseAs !== "json") {
    if (response.headers.get("content-length") === "0") return undefined;
    return parseAs === "stream" ? response.body : response[parseAs]();
  }
  // An empty JSON body (`Content-Length: 0`) is no body; the headers are not looked at here.
  const text = await response.text();
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    const message = `HTTP ${response.status} with a body that is not JSON: ${JSON.stringify(text.slice(0, 160))}`;
    throw new InvalidResponseError(response.status, { code: "invalid_response_body", message }, response.headers);
  }
}

/**
 * The client's request loop, on openapi-fetch's serializers: the URL from the path and
 * query parameters, headers merged as openapi-fetch merges them (later wins, `null`
 * removes), the body serialized as JSON unless it is `FormData`. Every call goes through
 * here, so the rules of its row in `operations` (never retry an invocation, outwait its
 * `timeout_sec`) hold whether it is called through the facade or by path.
 */
export function createCall(settings: Settings, transport: Transport, operations: readonly OperationRow[]): Call {
  let clientHeaders: Headers | undefined;
  const noRules: OperationRules = {};
  const rules = new Map<string, Map<string, OperationRules>>();
  for (const [, , method, path, , rule] of operations) {
    let byPath = rules.get(method);
    if (byPath === undefined) rules.set(method, (byPath = new Map()));
    byPath.set(path, rule ?? noRules);
  }
  const defaultBaseUrl = removeTrailingSlash(settings.baseUrl);
  return async (method, path, init = {}) => {
    const {
      params = {},
      body,
      headers,
      baseUrl = settings.baseUrl,
      parseAs = "json",
      querySerializer,
      bodySerializer = defaultBodySerializer as BodySerializer<unknown>,
      pathSerializer = defaultPathSerializer,
      projectId,
      timeoutMs,
      maxRetries,
      ...rest
    } = init;
    const url = createFinalURL(path, {
      baseUrl: baseUrl === settings.baseUrl ? defaultBaseUrl : removeTrailingSlash(baseUrl),
      params: params as { query?: Record<string, unknown> },
      pathSerializer,
      querySerializer:
        typeof querySerializer === "function" ? querySerializer : querySerializer ? createQuerySerializer(querySerializer) : defaultQuerySerializer,
    });
    // A call without headers of its own and without a body (most reads) sends the client's
    // headers as they are: one Headers, built once and never changed, instead of one per call.
    const finalHeaders =
      headers === undefined && params.header === undefined && projectId === undefined && body === undefined
        ? (clientHeaders ??= mergeHeaders(settings.headers))
        : mergeHeaders(settings.headers, headers, params.header as HeadersOptions, projectId === undefined ? undefined : { [projectHeader]: projectId });
    let payload: BodyInit | undefined;
    if (body !== undefined) {
      payload = (bodySerializer as (body: unknown, headers: Headers) => BodyInit)(body, finalHeaders);
      // FormData gets its multipart content type, with the boundary, from the transport.
      if (!(payload instanceof FormData) && !finalHeaders.has("content-type")) finalHeaders.set("content-type", "application/json");
    }
    const rule = rules.get(method)?.get(path) ?? noRules;
    let timeout = timeoutMs ?? settings.timeoutMs;
    if (rule.timeoutSec !== undefined) {
      const seconds = (body as { timeout_sec?: unknown } | undefined)?.timeout_sec;
      timeout = Math.max(timeout, (typeof seconds === "number" ? seconds : rule.timeoutSec) * 1000 + timeoutSecMarginMs);
    }
    const policy = {
      timeoutMs: timeout,
      maxRetries: rule.noRetry || !idempotentMethods.has(method) ? 0 : (maxRetries ?? settings.maxRetries),
      retryDelayMs: settings.retryDelayMs,
      maxRetryDelayMs: settings.maxRetryDelayMs,
    };
    // A body read as a stream is handed over as it arrives (an event stream may never end).
    const response = await send(
      url,
      { ...rest, method, headers: finalHeaders, body: payload ?? null, ...(parseAs === "stream" ? { stream: true } : {}) },
      policy,
      transport,
    );
    const data = await readBody(response, method, parseAs);
    // Node's transport builds the Response only when the caller looks at it (a facade call never does).
    return {
      data,
      get response() {
        return (response as { toResponse?: () => Response }).toResponse?.() ?? response;
      },
    };
  };
}
