import { APIConnectionError, APIError, APITimeoutError, APIUserAbortError } from "./errors.js";
import { type RetryDelays, retryableStatuses, retryDelayMs } from "./retry.js";
import { type Transport, type TransportInit, timedOut } from "./transport.js";

/** The transport rules of one call, settled before it is sent. */
export interface SendPolicy extends RetryDelays {
  /** Milliseconds each attempt may take, body included. */
  timeoutMs: number;
  /** Retries after the first attempt; 0 for calls that must never be repeated. */
  maxRetries: number;
}

/** The request of one call; `signal` is the caller's, if any. */
export type SendInit = Omit<TransportInit, "signal"> & { signal?: AbortSignal | null | undefined };

/** Whether the request carries `If-None-Match` or `If-Modified-Since`. */
const isConditional = (headers: Headers) => headers.has("if-none-match") || headers.has("if-modified-since");

/** Waits `ms`, or rejects with {@link APIUserAbortError} as soon as `signal` aborts. */
function sleep(ms: number, call: string, signal?: AbortSignal | null): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(new APIUserAbortError(call));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The error class that says why an attempt failed. */
function attemptError(cause: unknown, init: SendInit, timeoutMs: number, call: () => string): Error {
  if (cause === timedOut) return new APITimeoutError(call(), timeoutMs);
  if (init.signal?.aborted) return new APIUserAbortError(call());
  return new APIConnectionError(call(), cause);
}

/**
 * Sends a request under its policy: the one place that owns timeouts, aborts, retries and
 * turning a non-2xx response into an {@link APIError} (but a `304` to a conditional request). Only connection errors and the
 * statuses in `retryableStatuses` are retried, and only `policy.maxRetries` times; the
 * caller sets 0 for methods and operations that must not be repeated.
 */
export async function send(url: string, init: SendInit, policy: SendPolicy, transport: Transport): Promise<Response> {
  // Named in errors only, so built only for one.
  const call = () => `${init.method} ${url}`;
  for (let retry = 0; ; retry++) {
    const canRetry = retry < policy.maxRetries;
    if (init.signal?.aborted) throw new APIUserAbortError(call());
    let response: Response;
    try {
      // Each attempt has its own timeout.
      response = await transport(url, init as TransportInit, policy.timeoutMs);
    } catch (cause) {
      const error = attemptError(cause, init, policy.timeoutMs, call);
      if (!(canRetry && error instanceof APIConnectionError)) throw error;
      await sleep(retryDelayMs(retry, null, policy), call(), init.signal);
      continue;
    }
    // 304 answers only a conditional request, which only the caller can make: it is
    // that request's "you already have it", not an error.
    if (response.ok || (response.status === 304 && isConditional(init.headers))) return response;
    if (!(canRetry && retryableStatuses.has(response.status))) {
      throw APIError.from(response.status, await response.text(), response.headers);
    }
    await sleep(retryDelayMs(retry, response.headers.get("retry-after"), policy), call(), init.signal);
  }
}
