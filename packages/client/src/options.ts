import type { HeadersOptions } from "openapi-fetch";
import { readEnv } from "./env.js";
import { ClientOptionsError } from "./errors.js";
import type { RetryDelays } from "./retry.js";
import type { FetchLike } from "./transport.js";

/** The header that scopes a request to one project (ids only). */
export const projectHeader = "X-Service-Project-Id";

/** Options of {@link createClient}. Durations are in milliseconds. */
export interface ClientOptions {
  /**
   * API key or OAuth token, sent as `Authorization: Bearer <apiKey>`. Default: the
   * `BROWSER_SERVICE_API_KEY` environment variable. Required.
   */
  apiKey?: string | undefined;
  /**
   * Base URL of the service. Default: `BROWSER_SERVICE_BASE_URL`, else the API document's
   * server, `http://127.0.0.1:8787`.
   */
  baseUrl?: string | undefined;
  /**
   * Project id sent as `X-Service-Project-Id` on every call. Default:
   * `BROWSER_SERVICE_PROJECT_ID`, else none (the organization's default project, or the
   * key's project). `null` sends none even when the variable is set.
   */
  projectId?: string | null | undefined;
  /**
   * The `fetch` to send requests with; it must honour `init.signal`. Default: in Node and
   * Deno, undici's `dispatch` (the layer under Node's `fetch`) with keep-alive; in Bun and
   * browsers, `globalThis.fetch`.
   */
  fetch?: FetchLike | undefined;
  /** Time each attempt may take, body included. Default 60000 (60 s). */
  timeoutMs?: number | undefined;
  /** Retries of a failed idempotent call (never POST or PATCH). Default 2. */
  maxRetries?: number | undefined;
  /** Backoff before the first retry; doubles per retry, minus up to 25% jitter. Default 500. */
  retryDelayMs?: number | undefined;
  /** Longest wait before one retry, also the cap on `Retry-After`. Default 30000. */
  maxRetryDelayMs?: number | undefined;
  /** Extra headers for every call. */
  headers?: Record<string, string> | undefined;
}

/** Per-call options, the last argument of every facade method. Durations are in milliseconds. */
export interface RequestOptions {
  /** Project for this call: an id replaces the client's `projectId`; `null` sends no header. */
  projectId?: string | null | undefined;
  /** Time each attempt may take, replacing the client's `timeoutMs`. */
  timeoutMs?: number | undefined;
  /** Retries for this call, replacing the client's `maxRetries` (POST and PATCH never retry). */
  maxRetries?: number | undefined;
  /** Aborts the call, with `APIUserAbortError`. */
  signal?: AbortSignal | undefined;
  /** Extra headers for this call; `null` removes one. */
  headers?: HeadersOptions | undefined;
}

/** The per-call options that raw calls (`client.GET(...)`) take besides openapi-fetch's own. */
export type CallOptions = Pick<RequestOptions, "projectId" | "timeoutMs" | "maxRetries">;

/** {@link ClientOptions} with every default applied. */
export interface Settings extends RetryDelays {
  baseUrl: string;
  headers: Record<string, string>;
  timeoutMs: number;
  maxRetries: number;
  fetch: FetchLike | undefined;
}

/**
 * Applies defaults, reading the environment only for options that are absent. Throws
 * {@link ClientOptionsError} when no API key is found.
 */
export function resolveOptions(options: ClientOptions, documentBaseUrl: string): Settings {
  const apiKey = options.apiKey ?? readEnv("BROWSER_SERVICE_API_KEY");
  if (!apiKey) {
    throw new ClientOptionsError("missing_api_key", "No API key: pass createClient({ apiKey }) or set BROWSER_SERVICE_API_KEY.");
  }
  const baseUrl = options.baseUrl ?? readEnv("BROWSER_SERVICE_BASE_URL") ?? documentBaseUrl;
  const projectId = options.projectId === undefined ? readEnv("BROWSER_SERVICE_PROJECT_ID") : options.projectId;
  return {
    baseUrl,
    headers: { ...options.headers, Authorization: `Bearer ${apiKey}`, ...(projectId ? { [projectHeader]: projectId } : {}) },
    timeoutMs: options.timeoutMs ?? 60_000,
    maxRetries: options.maxRetries ?? 2,
    retryDelayMs: options.retryDelayMs ?? 500,
    maxRetryDelayMs: options.maxRetryDelayMs ?? 30_000,
    fetch: options.fetch,
  };
}
