import { RateLimitError } from "@browser-service/client";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { SqlApiKeyStore } from "../src/auth/sql-api-key-store.js";
import { RateLimitedError } from "../src/http/api-errors.js";
import { clientAddressKey, RateLimits, TokenBuckets } from "../src/http/rate-limiter.js";
import { ConfigError, DEFAULT_CONFIG, HELP_TEXT, parseCommand } from "../src/index.js";
import { RATE_LIMIT_OFF, startTestServer, useTestServer } from "./support/test-server.js";

/** A clock the test moves by hand, so that no outcome depends on the machine's speed. */
function fakeClock() {
  const clock = { now: 0, read: () => clock.now };
  return clock;
}

const WRONG_KEY = { authorization: "Bearer bsk_thisIsNotAKeyThisIsNotAKey1234" };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe("token buckets", () => {
  it("let a burst through, then exactly the sustained rate", () => {
    const clock = fakeClock();
    // 250/s is a quarter token per millisecond, exact in binary floating point.
    const buckets = new TokenBuckets({ rate: 250, burst: 10 }, { clock: clock.read });
    let accepted = 0;
    // One attempt per millisecond from 0 to 5 s inclusive: four times the rate.
    for (; clock.now <= 5000; clock.now += 1) if (buckets.take("k") === 0) accepted++;
    expect(accepted).toBe(10 + 250 * 5);
  });

  it("refuse without a whole token, take nothing when refusing, and say how long to wait", () => {
    const clock = fakeClock();
    const buckets = new TokenBuckets({ rate: 4, burst: 2 }, { clock: clock.read });
    expect([buckets.take("k"), buckets.take("k")]).toEqual([0, 0]);
    expect(buckets.take("k")).toBe(0.25);
    clock.now = 125;
    expect(buckets.wait("k")).toBe(0.125);
    expect(buckets.take("k")).toBe(0.125);
    clock.now = 250;
    expect(buckets.wait("k")).toBe(0);
    expect(buckets.take("k")).toBe(0);
    expect(buckets.take("other")).toBe(0);
  });

  it("hold at most `capacity` keys, forgetting the least recently used", () => {
    const clock = fakeClock();
    const buckets = new TokenBuckets({ rate: 1, burst: 2 }, { clock: clock.read, capacity: 3 });
    for (const key of ["a", "b", "c", "a"]) buckets.take(key); // "a" is empty and the most recently used
    buckets.take("d"); // a fourth key: "b", the least recently used, is forgotten
    expect(buckets.size).toBe(3);
    expect(buckets.wait("a")).toBe(1);
    buckets.take("b"); // starts again with a full bucket, so one token is left
    expect(buckets.wait("b")).toBe(0);
    for (let i = 0; i < 1000; i++) buckets.take(`flood-${i}`);
    expect(buckets.size).toBe(3);
  });

  it("keep nothing and refuse nothing when the rate is 0", () => {
    const buckets = new TokenBuckets(RATE_LIMIT_OFF);
    for (let i = 0; i < 1000; i++) expect(buckets.take("k")).toBe(0);
    expect(buckets.size).toBe(0);
    expect(() => new TokenBuckets({ rate: 1, burst: 0 })).toThrow(RangeError);
  });
});

describe("client address keys", () => {
  it("count IPv4 by address, IPv4-mapped IPv6 as IPv4, and IPv6 by its /64", () => {
    expect(clientAddressKey("203.0.113.7")).toBe("203.0.113.7");
    expect(clientAddressKey("::ffff:203.0.113.7")).toBe("203.0.113.7");
    expect(clientAddressKey("::FFFF:cb00:7107")).toBe("203.0.113.7");
    expect(clientAddressKey("2001:db8:0:1::1")).toBe(clientAddressKey("2001:DB8:0:1:ffff:1:2:3"));
    expect(clientAddressKey("2001:db8:0:1::1")).toBe("2001:db8:0:1::/64");
    expect(clientAddressKey("2001:db8:0:2::1")).not.toBe(clientAddressKey("2001:db8:0:1::1"));
    expect(clientAddressKey("::1")).toBe("0:0:0:0::/64");
    expect(clientAddressKey("fe80::1%eth0")).toBe("fe80:0:0:0::/64");
    expect(clientAddressKey(undefined)).toBe("unknown");
  });
});

describe("RateLimits", () => {
  it("answers with a RateLimitedError: 429 rate_limited, Retry-After in whole seconds (at least 1), and a message saying when", () => {
    const clock = fakeClock();
    const limits = new RateLimits({ perKey: { rate: 0.5, burst: 1 }, authFailuresPerAddress: { rate: 10, burst: 1 }, clock: clock.read });
    expect(limits.takeKeyRequest("key_a")).toBeUndefined();
    const slow = limits.takeKeyRequest("key_a");
    expect(slow).toBeInstanceOf(RateLimitedError);
    expect(slow).toMatchObject({ status: 429, code: "rate_limited", retryAfterSeconds: 2, headers: { "retry-after": "2" } });
    expect(slow?.message).toMatch(/retry after 2 seconds\.$/);

    expect(limits.checkClient("203.0.113.7")).toBeUndefined();
    limits.recordFailedAuth("203.0.113.7");
    const blocked = limits.checkClient("203.0.113.7");
    // A tenth of a second away, still announced as 1 second: Retry-After is a whole number.
    expect(blocked).toMatchObject({ status: 429, code: "rate_limited", retryAfterSeconds: 1, headers: { "retry-after": "1" } });
    expect(blocked?.message).toMatch(/failed authentications.*retry after 1 second\.$/);
    clock.now = 100;
    expect(limits.checkClient("203.0.113.7")).toBeUndefined();
  });
});

describe("configuration of the rate limits", () => {
  it("defaults to 50 requests/s per key (bursts of 100) and 10 failed authentications/s per address (bursts of 20)", () => {
    expect(DEFAULT_CONFIG).toMatchObject({ rateLimit: 50, rateLimitBurst: 100, authFailureLimit: 10, authFailureBurst: 20 });
  });

  it("reads flags and environment variables, flags first; 0 turns a limit off, a burst must be at least 1", () => {
    const env = {
      BROWSER_SERVICE_RATE_LIMIT: "7",
      BROWSER_SERVICE_RATE_LIMIT_BURST: "8",
      BROWSER_SERVICE_AUTH_FAILURE_LIMIT: "0",
      BROWSER_SERVICE_AUTH_FAILURE_BURST: "3",
    };
    expect(parseCommand([], env)).toMatchObject({ config: { rateLimit: 7, rateLimitBurst: 8, authFailureLimit: 0, authFailureBurst: 3 } });
    expect(parseCommand(["--rate-limit", "0", "--rate-limit-burst", "1", "--auth-failure-limit", "2", "--auth-failure-burst", "4"], env)).toMatchObject({
      config: { rateLimit: 0, rateLimitBurst: 1, authFailureLimit: 2, authFailureBurst: 4 },
    });
    expect(() => parseCommand(["--rate-limit-burst", "0"], {})).toThrow(ConfigError);
    expect(() => parseCommand([], { BROWSER_SERVICE_AUTH_FAILURE_LIMIT: "1.5" })).toThrow(/BROWSER_SERVICE_AUTH_FAILURE_LIMIT must be an integer/);
    for (const word of [
      "--rate-limit",
      "--rate-limit-burst",
      "--auth-failure-limit",
      "--auth-failure-burst",
      "BROWSER_SERVICE_RATE_LIMIT",
      "BROWSER_SERVICE_AUTH_FAILURE_LIMIT",
    ])
      expect(HELP_TEXT).toContain(word);
  });
});

describe("rate limits of the HTTP API (in process, on a fake clock)", () => {
  const clock = fakeClock();
  const t = useTestServer({ rateLimits: { perKey: { rate: 1, burst: 3 }, authFailuresPerAddress: { rate: 1, burst: 2 }, clock: clock.read } });
  let otherKey: string;

  beforeAll(async () => {
    otherKey = (await t.server.issueApiKey()).secret;
  });

  afterEach(() => {
    vi.restoreAllMocks();
    // A quiet minute between tests: every bucket is full again.
    clock.now += 60_000;
  });

  const get = (headers: Record<string, string>, remoteAddress = "127.0.0.1") =>
    t.server.app.inject({ method: "GET", url: "/org/limits", headers, remoteAddress });

  it("answers a key over its limit with 429 rate_limited, Retry-After and the Error body; another key is unaffected", async () => {
    for (let i = 0; i < 3; i++) expect((await get(bearer(t.orgKey))).statusCode).toBe(200);
    const limited = await get(bearer(t.orgKey));
    expect(limited.statusCode).toBe(429);
    expect(limited.headers["retry-after"]).toBe("1");
    expect(limited.headers["x-request-id"]).toMatch(/^req_/);
    expect(limited.json()).toEqual({ code: "rate_limited", message: expect.stringMatching(/API key.*retry after 1 second\.$/) });
    expect((await get(bearer(otherKey))).statusCode).toBe(200);

    clock.now += 1000;
    expect((await get(bearer(t.orgKey))).statusCode).toBe(200);
    expect((await get(bearer(t.orgKey))).statusCode).toBe(429);
  });

  it("limits every operation, with the codes the spec lists for it", async () => {
    for (let i = 0; i < 3; i++) await get(bearer(t.orgKey));
    const responses = await Promise.all([
      t.server.app.inject({ method: "GET", url: "/org/projects", headers: bearer(t.orgKey) }),
      t.server.app.inject({ method: "POST", url: "/browsers", headers: { ...bearer(t.orgKey), "content-type": "application/json" }, payload: {} }),
      t.server.app.inject({ method: "GET", url: "/browsers/nope/webmcp/tools", headers: bearer(t.orgKey) }),
    ]);
    expect(responses.map((response) => [response.statusCode, response.json().code])).toEqual(Array(3).fill([429, "rate_limited"]));
  });

  it("counts failed authentications per address, then refuses every credential from that address before reading it or the body", async () => {
    const authenticate = vi.spyOn(SqlApiKeyStore.prototype, "authenticate");
    const attacker = "203.0.113.7";
    const MALFORMED = { authorization: "Basic Zm9vOmJhcg==" };
    expect((await get(WRONG_KEY, attacker)).statusCode).toBe(401);
    expect((await get(MALFORMED, attacker)).statusCode).toBe(401); // a malformed credential counts too
    const lookups = authenticate.mock.calls.length;
    expect(lookups).toBe(1); // the wrong key was looked up; the malformed credential was not

    for (const headers of [WRONG_KEY, MALFORMED, bearer(t.orgKey)]) {
      const refused = await get(headers, attacker);
      expect(refused.statusCode).toBe(429);
      expect(refused.headers["retry-after"]).toBe("1");
      expect(refused.json()).toEqual({ code: "rate_limited", message: expect.stringMatching(/failed authentications.*retry after 1 second\.$/) });
    }
    const badBody = await t.server.app.inject({
      method: "POST",
      url: "/org/projects",
      headers: { ...bearer(t.orgKey), "content-type": "application/json" },
      payload: "{not json",
      remoteAddress: attacker,
    });
    expect([badBody.statusCode, badBody.json().code]).toEqual([429, "rate_limited"]);
    // Without a credential there is nothing to guess and nothing to look up: 401 as always.
    expect((await get({}, attacker)).statusCode).toBe(401);
    expect(authenticate.mock.calls.length).toBe(lookups);

    // Another address is counted apart.
    expect((await get(bearer(t.orgKey), "203.0.113.8")).statusCode).toBe(200);
    expect((await get(WRONG_KEY, "203.0.113.8")).statusCode).toBe(401);
  });

  it("lets a blocked address in again once a failure's worth of time has passed; a success there counts for nothing", async () => {
    const address = "198.51.100.1";
    await get(WRONG_KEY, address);
    await get(WRONG_KEY, address);
    expect((await get(bearer(t.orgKey), address)).statusCode).toBe(429);
    clock.now += 1000;
    expect((await get(bearer(t.orgKey), address)).statusCode).toBe(200);
    expect((await get(WRONG_KEY, address)).statusCode).toBe(401);
    expect((await get(bearer(t.orgKey), address)).statusCode).toBe(429);
  });

  it("counts a hosted login page's wrong codes and tokens as failed authentications, with the API's", async () => {
    const address = "192.0.2.50";
    const code = await t.server.app.inject({
      method: "POST",
      url: "/auth/hosted/session",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ code: "never-issued" }),
      remoteAddress: address,
    });
    expect(code.statusCode).toBe(401);
    const token = await t.server.app.inject({ method: "GET", url: "/auth/hosted/state", headers: bearer("A".repeat(43)), remoteAddress: address });
    expect(token.statusCode).toBe(401);
    // Past the burst of two: the address is refused, API keys and hosted pages alike.
    expect((await get(bearer(t.orgKey), address)).statusCode).toBe(429);
    const again = await t.server.app.inject({ method: "GET", url: "/auth/hosted/state", headers: bearer("A".repeat(43)), remoteAddress: address });
    expect([again.statusCode, again.json().code]).toEqual([429, "rate_limited"]);
  });

  it("counts IPv6 clients by their /64", async () => {
    await get(WRONG_KEY, "2001:db8:0:1::1");
    await get(WRONG_KEY, "2001:db8:0:1::2");
    expect((await get(WRONG_KEY, "2001:db8:0:1::3")).statusCode).toBe(429);
    expect((await get(WRONG_KEY, "2001:db8:0:2::1")).statusCode).toBe(401);
  });
});

describe("rate limits turned off (0)", () => {
  it("never answers 429, however many requests and failures", async () => {
    const clock = fakeClock();
    const t = await startTestServer({ rateLimits: { perKey: RATE_LIMIT_OFF, authFailuresPerAddress: RATE_LIMIT_OFF, clock: clock.read } });
    try {
      const statuses = new Set<number>();
      for (let i = 0; i < 300; i++) {
        statuses.add((await t.server.app.inject({ method: "GET", url: "/org/limits", headers: bearer(t.orgKey) })).statusCode);
        statuses.add((await t.server.app.inject({ method: "GET", url: "/org/limits", headers: WRONG_KEY })).statusCode);
      }
      expect([...statuses].sort()).toEqual([200, 401]);
      expect(t.mismatches).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("with the client, over HTTP", () => {
  // The server's clock moves only by the real time the client waits after a 429, so the
  // key stays empty between requests however slow the machine is, and a client that did
  // not wait would meet the same 429 again.
  const clock = fakeClock();
  const seen: { method: string; status: number; retryAfter: string | null }[] = [];
  let limitedAt: number | undefined;
  const t = useTestServer({ rateLimits: { perKey: { rate: 1, burst: 1 }, authFailuresPerAddress: RATE_LIMIT_OFF, clock: clock.read } });

  const recordingFetch = async (url: string, init: RequestInit): Promise<Response> => {
    if (limitedAt !== undefined) clock.now += performance.now() - limitedAt;
    limitedAt = undefined;
    const response = await fetch(url, init);
    seen.push({ method: init.method ?? "GET", status: response.status, retryAfter: response.headers.get("retry-after") });
    if (response.status === 429) limitedAt = performance.now();
    return response;
  };

  it("a GET gets through after waiting Retry-After; a POST is not retried and fails with RateLimitError", async () => {
    const client = t.client({ fetch: recordingFetch, maxRetries: 3 });
    await client.limits.get();
    await expect(client.limits.get()).resolves.toMatchObject({ max_concurrent_sessions: expect.any(Number) });
    expect(seen[0]?.status).toBe(200);
    expect(seen[1]).toEqual({ method: "GET", status: 429, retryAfter: "1" });
    expect(seen.at(-1)).toMatchObject({ method: "GET", status: 200 });

    seen.length = 0;
    const creating = client.projects.create({ name: "not-retried" });
    await expect(creating).rejects.toBeInstanceOf(RateLimitError);
    await expect(creating).rejects.toMatchObject({ status: 429, code: "rate_limited" });
    expect(seen).toEqual([{ method: "POST", status: 429, retryAfter: "1" }]);
  });
});
