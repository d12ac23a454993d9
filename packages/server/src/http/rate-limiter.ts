import { isIPv6 } from "node:net";
import { RateLimitedError } from "./api-errors.js";

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
  /** Failed authentications from each client address (an IPv6 address counts by its /64). */
  authFailuresPerAddress: RateLimit;
  /** Milliseconds on a monotonic clock. Default `performance.now`; tests pass a fake one. */
  clock?: () => number;
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
    if (!(limit.rate >= 0) || !(limit.burst >= 1)) throw new RangeError(`A rate limit needs rate >= 0 and burst >= 1; received rate ${limit.rate}, burst ${limit.burst}.`);
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

/**
 * The key a client address is counted under: the IPv4 address (also when it arrives
 * IPv4-mapped, `::ffff:a.b.c.d`), or an IPv6 address's /64 prefix, because one subscriber
 * usually holds a whole /64 and could otherwise pick a new address for every request.
 */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return "unknown";
  const plain = address.split("%")[0] as string;
  if (!isIPv6(plain)) return plain;
  // The WHATWG URL parser writes IPv6 in canonical form (lowercase hex groups, one "::"), which is easy to expand.
  const canonical = new URL(`http://[${plain}]/`).hostname.slice(1, -1);
  const [head = "", tail] = canonical.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill("0"), ...tailGroups].map((group) => parseInt(group, 16));
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(":")}::/64`;
}

function perSecond(limit: RateLimit, what: string): string {
  return `over ${limit.rate} ${what} per second, ${limit.burst} at once`;
}

/**
 * The server's request rate limits: requests per API key, and failed authentications per
 * client address. Both are token buckets ({@link TokenBuckets}) in memory; a refusal is a
 * {@link RateLimitedError} (429 `rate_limited` with `Retry-After`). The HTTP API and the
 * CDP WebSocket endpoint share one instance, so failures on either count together.
 *
 * Use, for each request:
 * 1. `checkAddress(ip)` before looking at the credential;
 * 2. `recordFailedAuth(ip)` when the credential is missing, malformed or unknown;
 * 3. `takeKeyRequest(keyId)` once the credential names a key.
 */
export class RateLimits {
  readonly #keys: TokenBuckets;
  readonly #addresses: TokenBuckets;

  constructor(settings: RateLimitSettings) {
    const clock = settings.clock === undefined ? {} : { clock: settings.clock };
    this.#keys = new TokenBuckets(settings.perKey, clock);
    this.#addresses = new TokenBuckets(settings.authFailuresPerAddress, clock);
  }

  /**
   * Before authenticating a request from `address` (the peer's IP): the error to answer
   * with while the address has no failed authentication left, else `undefined`. It reads
   * only memory, so a flood from a blocked address never reaches the key store; and it
   * refuses every request from the address, valid credentials included, because telling
   * a valid key from a wrong one would take the very lookup this limit saves.
   */
  checkAddress(address: string | undefined): RateLimitedError | undefined {
    const wait = this.#addresses.wait(clientAddressKey(address));
    if (wait === 0) return undefined;
    return new RateLimitedError(`Too many failed authentications from this address (${perSecond(this.#addresses.limit, "failures")})`, wait);
  }

  /** Counts one failed authentication (a missing, malformed or unknown credential) from `address`. */
  recordFailedAuth(address: string | undefined): void {
    this.#addresses.take(clientAddressKey(address));
  }

  /** Counts one request of the authenticated key `keyId`; over its limit, counts nothing and returns the error to answer with. */
  takeKeyRequest(keyId: string): RateLimitedError | undefined {
    const wait = this.#keys.take(keyId);
    if (wait === 0) return undefined;
    return new RateLimitedError(`Too many requests for this API key (${perSecond(this.#keys.limit, "requests")})`, wait);
  }
}
