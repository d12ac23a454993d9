import { beforeEach, describe, expect, it } from "vitest";
import { APIConnectionError, APIUserAbortError, createClient, InternalServerError, OutcomeUnknownError, RateLimitError } from "../../src/index.js";
import { resolveOptions } from "../../src/options.js";
import { transport as nodeTransport } from "../../src/platform/node.js";
import { createCall } from "../../src/request.js";
import { useTestServer } from "../helpers/test-server.js";
import { testOptions, transports } from "../helpers/transports.js";

const server = useTestServer();
beforeEach(() => {});

const limits = { max_concurrent_sessions: 10, default_project_max_concurrent_sessions: null, concurrent_sessions_used: 1, concurrent_sessions_available: 9 };
const unavailable = { status: 503, body: { code: "unavailable", message: "Try again." } };
const invokeBody = { tool_ref: "tref_1", input: { q: "shoes" }, timeout_sec: 5 };

describe.each(transports)("retries over the %s", (_, transport) => {
  const client = (extra = {}) => createClient(testOptions(server.url, { ...transport, ...extra }));

  it("retries a GET on 503 and returns the answer that finally succeeds", async () => {
    server.route("GET", "/org/limits", unavailable, unavailable, { body: limits });
    await expect(client().limits.get()).resolves.toEqual(limits);
    expect(server.seen("GET", "/org/limits")).toHaveLength(3);
  });

  it.each([408, 429, 502, 503, 504])("retries a GET on %i", async (status) => {
    server.route("GET", "/org/limits", { status, body: { code: "try_again", message: "Later." } }, { body: limits });
    await expect(client().limits.get()).resolves.toEqual(limits);
    expect(server.requests).toHaveLength(2);
  });

  it.each([400, 404, 409, 500])("does not retry a GET on %i", async (status) => {
    server.route("GET", "/org/limits", { status, body: { code: "final", message: "No." } }, { body: limits });
    await expect(client().limits.get()).rejects.toMatchObject({ status, code: "final" });
    expect(server.requests).toHaveLength(1);
  });

  it("retries a GET after a connection reset", async () => {
    server.route("GET", "/org/limits", { reset: true }, { reset: true }, { body: limits });
    await expect(client().limits.get()).resolves.toEqual(limits);
    expect(server.requests).toHaveLength(3);
  });

  it("retries a DELETE, which is idempotent", async () => {
    server.route("DELETE", "/browsers/b1", unavailable, { status: 204 });
    await expect(client().browsers.delete("b1")).resolves.toBeUndefined();
    expect(server.requests).toHaveLength(2);
  });

  it("gives up after maxRetries retries with the last error", async () => {
    server.route("GET", "/org/limits", unavailable);
    await expect(client().limits.get()).rejects.toBeInstanceOf(InternalServerError);
    expect(server.requests).toHaveLength(3);
    server.requests.length = 0;
    await expect(client({ maxRetries: 4 }).limits.get()).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(5);
    server.requests.length = 0;
    await expect(client().limits.get({ maxRetries: 0 })).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
  });

  it("does not retry a timeout: timeoutMs bounds the call", async () => {
    server.route("GET", "/org/limits", { hang: true });
    await expect(client().limits.get({ timeoutMs: 20 })).rejects.toMatchObject({ code: "timeout" });
    expect(server.requests).toHaveLength(1);
  });

  // The backoff is ten minutes, so these finish only if Retry-After replaced it.
  it.each([
    ["seconds", "0"],
    ["an HTTP date", new Date(Date.now() - 60_000).toUTCString()],
  ])("waits as Retry-After says in %s instead of backing off", async (_, retryAfter) => {
    server.route(
      "GET",
      "/org/limits",
      { status: 429, headers: { "Retry-After": retryAfter }, body: { code: "rate_limited", message: "Slow down." } },
      { body: limits },
    );
    const patient = client({ retryDelayMs: 600_000, maxRetryDelayMs: 600_000 });
    await expect(patient.limits.get()).resolves.toEqual(limits);
    expect(server.requests).toHaveLength(2);
  });

  it("stops waiting to retry when the caller aborts", async () => {
    server.route("GET", "/org/limits", unavailable, { body: limits });
    const controller = new AbortController();
    const call = client({ retryDelayMs: 600_000, maxRetryDelayMs: 600_000 }).limits.get({ signal: controller.signal });
    await server.waitForRequests(1);
    controller.abort();
    await expect(call).rejects.toBeInstanceOf(APIUserAbortError);
    expect(server.requests).toHaveLength(1);
  });

  describe("never retried", () => {
    it.each([
      ["POST", () => client({ maxRetries: 5 }).projects.create({ name: "staging" }), "/org/projects"],
      ["PATCH", () => client({ maxRetries: 5 }).projects.update("p1", { name: "prod" }), "/org/projects/p1"],
      ["raw POST", () => client({ maxRetries: 5 }).POST("/org/projects", { body: { name: "staging" }, maxRetries: 5 }), "/org/projects"],
    ])("%s on 503 or a reset connection, whatever maxRetries says", async (_, call, path) => {
      const method = path === "/org/projects/p1" ? "PATCH" : "POST";
      server.route(method, path, unavailable);
      await expect(call()).rejects.toBeInstanceOf(InternalServerError);
      server.route(method, path, { reset: true });
      await expect(call()).rejects.toBeInstanceOf(APIConnectionError);
      expect(server.requests).toHaveLength(2);
    });

    it("a POST rate-limited with Retry-After", async () => {
      server.route("POST", "/browsers", { status: 429, headers: { "Retry-After": "0" }, body: { code: "concurrency_limit_exceeded", message: "Cap of 5." } });
      await expect(client().browsers.create()).rejects.toBeInstanceOf(RateLimitError);
      expect(server.requests).toHaveLength(1);
    });

    it("a WebMCP invocation answered 504 outcome_unknown, even with maxRetries set", async () => {
      server.route("POST", "/browsers/b1/webmcp/invoke", { status: 504, body: { code: "outcome_unknown", message: "Not observed.", invocation_id: "inv_9" } });
      await expect(client({ maxRetries: 5 }).webmcp.invoke("b1", invokeBody, { maxRetries: 5 })).rejects.toBeInstanceOf(OutcomeUnknownError);
      expect(server.requests).toHaveLength(1);
    });

    it("a WebMCP invocation whose connection failed, through the facade or by path", async () => {
      server.route("POST", "/browsers/b1/webmcp/invoke", { reset: true });
      await expect(client({ maxRetries: 5 }).webmcp.invoke("b1", invokeBody)).rejects.toBeInstanceOf(APIConnectionError);
      const raw = client({ maxRetries: 5 }).POST("/browsers/{id_or_name}/webmcp/invoke", {
        params: { path: { id_or_name: "b1" } },
        body: invokeBody,
        maxRetries: 5,
      });
      await expect(raw).rejects.toBeInstanceOf(APIConnectionError);
      expect(server.requests).toHaveLength(2);
    });

    it("a WebMCP invocation answered 503 or 429", async () => {
      server.route("POST", "/browsers/b1/webmcp/invoke", unavailable, {
        status: 429,
        headers: { "Retry-After": "0" },
        body: { code: "rate_limited", message: "Later." },
      });
      await expect(client().webmcp.invoke("b1", invokeBody)).rejects.toMatchObject({ status: 503 });
      await expect(client().webmcp.invoke("b1", invokeBody)).rejects.toMatchObject({ status: 429 });
      expect(server.requests).toHaveLength(2);
    });
  });
});

describe("an operation marked noRetry in the table", () => {
  it("is not retried even when its method is idempotent", async () => {
    const settings = resolveOptions(testOptions(server.url), "");
    const call = createCall(settings, nodeTransport, [["limits", "get", "GET", "/org/limits", "", { noRetry: true }]]);
    server.route("GET", "/org/limits", unavailable, { body: limits });
    await expect(call("GET", "/org/limits", { maxRetries: 5 })).rejects.toMatchObject({ status: 503 });
    expect(server.requests).toHaveLength(1);
    // The same call without the mark is retried: the mark, not the method, stopped it.
    const unmarked = createCall(settings, nodeTransport, []);
    server.route("GET", "/org/limits", unavailable, { body: limits });
    await expect(unmarked("GET", "/org/limits")).resolves.toMatchObject({ data: limits });
    expect(server.requests).toHaveLength(3);
  });
});
