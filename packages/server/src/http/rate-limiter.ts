import type { IncomingMessage } from "node:http";
import { RateLimitedError } from "./api-errors.js";
import { type BrowserOfConnection, clientKey, type TrustedProxy } from "./client-key.js";

export { clientAddressKey } from "./client-key.js";

/** One limit: a sustained rate and how much of it may come at once. */
export interface RateLimit {
  /** Events per second, sustained. `0` turns the limit off. */
  rate: number;
  /** Events allowed at once after a quiet spell (the bucket's size); at least 1. */
  burst: number;
}

/** Settings of the server's rate limits (`createServer({ rateLimits })`). */
export interface RateLimitSettings {
  /** Requests of each API key. */
  perKey: RateLimit;
  /**
   * Failed authentications from each client address (an IPv6 address counts by its /64),
   * or from each of the server's own browsers (see `browserOfConnection`). Requests without
   * a credential are not counted.
   */
  authFailuresPerAddress: RateLimit;
  /** Milliseconds on a monotonic clock. Default `performance.now`; tests pass a fake one. */
  clock?: () => number;
  /**
   * Names the server's own browser behind a request's connection: such a request counts
   * under a key of that browser (`browser:<name>`), never under its address, so a page
   * that sends wrong credentials blocks only its own browser's requests. Default none.
   */
  browserOfConnection?: BrowserOfConnection;
  /**
   * The reverse proxies whose `X-Forwarded-For` names the client (`trustedProxies()` of
   * `client-key.ts` builds one). Default none: the TCP peer is the client.
   */
  trustedProxy?: TrustedProxy;
  /**
   * The client another node of the service declares for a request it forwarded (verified
   * by the nodes' shared secret), or `undefined` for any other request: such a request
   * counts under the client the forwarding node saw, never under that node's address.
   */
  declaredClient?: (request: IncomingMessage) => string | undefined;
}

/**
 * Buckets a table keeps before it forgets the least recently used one. A forgotten key
 * starts again with a full bucket, so past this many keys failing at once the limit
 * weakens, but memory stays bounded whatever the number of addresses (~1 MB).
 */
export const BUCKET_TABLE_CAPACITY = 10_000;

interface Bucket {
  tokens: number;
  /** Clock reading when `tokens` was computed. */
  at: number;
}

/**
 * Token buckets by key, in a table of bounded size. A bucket starts full (`burst`), gains
 * `rate` tokens per second up to `burst`, and each event takes one; an event is allowed
 * while a whole token is left, and a refused event takes nothing. Under a steady flood
 * exactly `burst + rate × seconds` events pass, which a fixed window cannot promise (it
 * lets up to twice its limit through around a window's edge).
 */
export class TokenBuckets {
  readonly limit: RateLimit;
  readonly #capacity: number;
  readonly #clock: () => number;
  // A Map iterates in insertion order; re-inserting a bucket on each use keeps the least
  // recently used one first, which makes eviction O(1).
  readonly #buckets = new Map<string, Bucket>();

  constructor(limit: RateLimit, options: { capacity?: number; clock?: () => number } = {}) {
    if (!(limit.rate >= 0) || !(limit.burst >= 1))
      throw new RangeError(`A rate limit needs rate >= 0 and burst >= 1; received rate ${limit.rate}, burst ${limit.burst}.`);
    this.limit = limit;
    this.#capacity = options.capacity ?? BUCKET_TABLE_CAPACITY;
    this.#clock = options.clock ?? (() => performance.now());
  }

  /** Whether the limit is on (`rate` above 0). */
  get enabled(): boolean {
    return this.limit.rate > 0;
  }

  /** How many keys the table holds now. */
  get size(): number {
    return this.#buckets.size;
  }

  #tokens(bucket: Bucket | undefined, now: number): number {
    if (!bucket) return this.limit.burst;
    return Math.min(this.limit.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.limit.rate);
  }

  /** Seconds until `key` has a whole token; `0` when it has one now. Takes nothing. */
  wait(key: string): number {
    if (!this.enabled) return 0;
    const tokens = this.#tokens(this.#buckets.get(key), this.#clock());
    return tokens >= 1 ? 0 : (1 - tokens) / this.limit.rate;
  }

  /** Takes a token from `key`'s bucket and returns `0`; without a whole token, takes nothing and returns the seconds until there is one. */
  take(key: string): number {
    if (!this.enabled) return 0;
    const now = this.#clock();
    const bucket = this.#buckets.get(key);
    const tokens = this.#tokens(bucket, now);
    if (tokens < 1) return (1 - tokens) / this.limit.rate;
    if (bucket) this.#buckets.delete(key);
    else if (this.#buckets.size >= this.#capacity) this.#buckets.delete(this.#buckets.keys().next().value as string);
    this.#buckets.set(key, { tokens: tokens - 1, at: now });
    return 0;
  }
}

function perSecond(limit: RateLimit, what: string): string {
  return `over ${limit.rate} ${what} per second, ${limit.burst} at once`;
}

/**
 * The server's request rate limits: requests per API key, and failed authentications per
 * client. Both are token buckets ({@link TokenBuckets}) in memory; a refusal is a
 * {@link RateLimitedError} (429 `rate_limited` with `Retry-After`). The HTTP API and the
 * CDP WebSocket endpoint share one instance, so failures on either count together.
 *
 * Use, for each request that carries a credential (a request without one guesses
 * nothing and reaches no key lookup, so it is neither counted nor refused here):
 * 1. `clientKey(request)`, then `checkClient(client)` before looking at the credential;
 * 2. `recordFailedAuth(client)` when the credential is malformed or unknown;
 * 3. `takeKeyRequest(keyId)` once the credential names a key.
 */
export class RateLimits {
  readonly #keys: TokenBuckets;
  readonly #clients: TokenBuckets;
  readonly #browserOfConnection: BrowserOfConnection | undefined;
  readonly #trustedProxy: TrustedProxy | undefined;
  readonly #declaredClient: ((request: IncomingMessage) => string | undefined) | undefined;

  constructor(settings: RateLimitSettings) {
    const clock = settings.clock === undefined ? {} : { clock: settings.clock };
    this.#keys = new TokenBuckets(settings.perKey, clock);
    this.#clients = new TokenBuckets(settings.authFailuresPerAddress, clock);
    this.#browserOfConnection = settings.browserOfConnection;
    this.#trustedProxy = settings.trustedProxy;
    this.#declaredClient = settings.declaredClient;
  }

  /** The key `request`'s client counts under: one of the server's browsers, or an address (see `clientKey` of `client-key.ts`). */
  clientKey(request: IncomingMessage): string {
    const declared = this.#declaredClient?.(request);
    if (declared !== undefined) return declared;
    return clientKey(request, { trustedProxy: this.#trustedProxy, browserOfConnection: this.#browserOfConnection });
  }

  /**
   * Before authenticating a credential from `client` ({@link clientKey}): the error to
   * answer with while the client has no failed authentication left, else `undefined`.
   * It reads only memory, so a flood from a blocked client never reaches the key store;
   * and it refuses every credential from the client, valid ones included: answering a
   * valid key differently from a wrong one would tell a guesser which guess was right,
   * and would take the very lookup this limit saves.
   */
  checkClient(client: string): RateLimitedError | undefined {
    const wait = this.#clients.wait(client);
    if (wait === 0) return undefined;
    const from = client.startsWith("browser:") ? "this browser's pages" : "this address";
    return new RateLimitedError(`Too many failed authentications from ${from} (${perSecond(this.#clients.limit, "failures")})`, wait);
  }

  /** Counts one failed authentication (a malformed or unknown credential) of `client`. */
  recordFailedAuth(client: string): void {
    this.#clients.take(client);
  }

  /** Counts one request of the authenticated key `keyId`; over its limit, counts nothing and returns the error to answer with. */
  takeKeyRequest(keyId: string): RateLimitedError | undefined {
    const wait = this.#keys.take(keyId);
    if (wait === 0) return undefined;
    return new RateLimitedError(`Too many requests for this API key (${perSecond(this.#keys.limit, "requests")})`, wait);
  }
}
