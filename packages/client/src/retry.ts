/**
 * Methods that the client may retry: HTTP defines sending them twice to have the same
 * effect as sending them once. POST and PATCH are never retried.
 */
export const idempotentMethods: ReadonlySet<string> = new Set(["GET", "HEAD", "OPTIONS", "PUT", "DELETE"]);

/** Statuses worth another attempt: a request timeout, rate limiting, or a failing gateway. */
export const retryableStatuses: ReadonlySet<number> = new Set([408, 429, 502, 503, 504]);

/** The delays of {@link retryDelayMs}, in milliseconds. */
export interface RetryDelays {
  /** Backoff before the first retry; it doubles for each further retry. */
  retryDelayMs: number;
  /** Longest wait before one retry, from backoff or from `Retry-After`. */
  maxRetryDelayMs: number;
}

/**
 * Milliseconds to wait before retry number `attempt + 1`. A `Retry-After` header (seconds
 * or an HTTP date) is honoured as given, capped at `maxRetryDelayMs`; without one the
 * delay is exponential backoff with up to 25% jitter taken off, so that clients that
 * failed together do not retry together.
 */
export function retryDelayMs(
  attempt: number,
  retryAfter: string | null,
  delays: RetryDelays,
  now: number = Date.now(),
  random: number = Math.random(),
): number {
  if (retryAfter) {
    const seconds = Number(retryAfter);
    const ms = Number.isNaN(seconds) ? Date.parse(retryAfter) - now : seconds * 1000;
    if (!Number.isNaN(ms)) return Math.min(Math.max(ms, 0), delays.maxRetryDelayMs);
  }
  return Math.min(delays.retryDelayMs * 2 ** attempt, delays.maxRetryDelayMs) * (1 - random / 4);
}
