import { beforeEach, describe, expect, it } from "vitest";
import { APITimeoutError, createClient, timeoutSecMarginMs } from "../../src/index.js";
import { useTestServer } from "../helpers/test-server.js";
import { testOptions, transports } from "../helpers/transports.js";

const server = useTestServer();
beforeEach(() => {});

const result = { invocation_id: "inv_1", status: "completed", output: { ok: true } };

// The server is in this process, so a client timer shorter than the server's delay
// always fires first, and a longer one never does: no test depends on machine speed.
describe.each(transports)("timeouts over the %s", (_, transport) => {
  const client = (extra = {}) => createClient(testOptions(server.url, { ...transport, ...extra }));

  it("applies the client's timeoutMs", async () => {
    server.route("GET", "/org/limits", { hang: true });
    await expect(client({ timeoutMs: 20 }).limits.get()).rejects.toBeInstanceOf(APITimeoutError);
  });

  it("lets one call shorten or lengthen the timeout", async () => {
    server.route("GET", "/org/limits", { hang: true });
    await expect(client({ timeoutMs: 60_000 }).limits.get({ timeoutMs: 20 })).rejects.toBeInstanceOf(APITimeoutError);
    server.route("GET", "/org/limits", { delayMs: 100, body: {} });
    await expect(client({ timeoutMs: 20 }).limits.get({ timeoutMs: 60_000 })).resolves.toEqual({});
  });

  it("covers the body: headers alone do not stop the clock", async () => {
    server.route("GET", "/org/limits", { stallBody: true });
    await expect(client({ timeoutMs: 50 }).limits.get()).rejects.toBeInstanceOf(APITimeoutError);
  });

  describe("a WebMCP invocation", () => {
    it("waits longer than timeout_sec, whatever timeoutMs says", async () => {
      server.route("POST", "/browsers/b1/webmcp/invoke", { delayMs: 200, body: result });
      const short = client({ timeoutMs: 20 });
      await expect(short.webmcp.invoke("b1", { tool_ref: "t", input: {}, timeout_sec: 1 })).resolves.toEqual(result);
      await expect(short.webmcp.invoke("b1", { tool_ref: "t", input: {}, timeout_sec: 1 }, { timeoutMs: 10 })).resolves.toEqual(result);
    });

    it("waits longer than the default timeout_sec of 60 when the body has none", async () => {
      server.route("POST", "/browsers/b1/webmcp/invoke", { delayMs: 200, body: result });
      await expect(client({ timeoutMs: 20 }).webmcp.invoke("b1", { tool_ref: "t", input: {} })).resolves.toEqual(result);
    });

    it("gets the same rule when called by path", async () => {
      server.route("POST", "/browsers/b1/webmcp/invoke", { delayMs: 200, body: result });
      const raw = client({ timeoutMs: 20 }).POST("/browsers/{id_or_name}/webmcp/invoke", {
        params: { path: { id_or_name: "b1" } },
        body: { tool_ref: "t", input: {}, timeout_sec: 1 },
      });
      await expect(raw).resolves.toMatchObject({ data: result });
    });
  });
});

describe("the least timeout of an invocation", () => {
  it("is timeout_sec plus a margin of 5 seconds, and then the call times out", async () => {
    expect(timeoutSecMarginMs).toBe(5_000);
    server.route("POST", "/browsers/b1/webmcp/invoke", { hang: true });
    // timeout_sec cannot be below 1 in the API, but the client does not check that:
    // with 0 the least timeout is the margin alone.
    const call = createClient(testOptions(server.url, { timeoutMs: 20 })).webmcp.invoke("b1", { tool_ref: "t", input: {}, timeout_sec: 0 });
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APITimeoutError);
    expect((error as Error).message).toContain(`${timeoutSecMarginMs} ms`);
  });
});
