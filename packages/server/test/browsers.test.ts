import { once } from "node:events";
import { createServer as createHttpServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, useTestServer } from "./support/test-server.js";
import { processExists, TrackingLauncher } from "./support/tracking-launcher.js";

let launcher: TrackingLauncher;
let page: Server;
let pageUrl: string;

beforeAll(async () => {
  // A local page for start_url: the tests never leave 127.0.0.1.
  page = createHttpServer((_request, response) => response.end("<title>start page</title><p>hello</p>"));
  page.listen(0, "127.0.0.1");
  await once(page, "listening");
  pageUrl = `http://127.0.0.1:${(page.address() as AddressInfo).port}/start`;
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(() => {
  page.close();
});

const t = useTestServer(() => {
  launcher = new TrackingLauncher();
  return { launcher };
});

afterEach(async () => {
  const client = t.client();
  for (const browser of await client.browsers.list({ limit: 100 })) await client.browsers.delete(browser.id);
  await client.projects.updateLimits("Default", { max_concurrent_sessions: 0 });
});

describe("browsers", () => {
  it("starts Chromium (201) with a working DevTools endpoint on the server and start_url as the first tab", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ name: "first", start_url: pageUrl });
    expect(browser).toMatchObject({ name: "first", status: "running" });
    expect(browser.id).toMatch(/^brw_[a-z2-7]{24}$/);
    expect(browser.cdp_ws_url).toBe(
      `${t.url.replace("http:", "ws:")}/browsers/${browser.id}/cdp?token=${new URL(browser.cdp_ws_url).searchParams.get("token")}`,
    );
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    try {
      expect(
        playwright
          .contexts()[0]
          ?.pages()
          .map((each) => each.url()),
      ).toEqual([pageUrl]);
    } finally {
      await playwright.close();
    }
  });

  it("reads a browser by id and by name, lists oldest first with paging, and 404s unknown ones", async () => {
    const client = t.client();
    const one = await client.browsers.create({ name: "one" });
    const two = await client.browsers.create();
    expect(two.name).toBeNull();
    expect(await client.browsers.get(one.id)).toEqual(one);
    expect(await client.browsers.get("one")).toEqual(one);
    const page1 = await client.GET("/browsers", { params: { query: { limit: 1 } } });
    expect(page1.data?.map((browser) => browser.id)).toEqual([one.id]);
    expect(page1.response.headers.get("x-has-more")).toBe("true");
    expect(page1.response.headers.get("x-next-offset")).toBe("1");
    expect((await client.browsers.list()).map((browser) => browser.id)).toEqual([one.id, two.id]);
    await expect(client.browsers.get("nobody")).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(client.browsers.delete("nobody")).rejects.toMatchObject({ status: 404, code: "not_found" });
  });

  it("keeps names unique per project (409 name_conflict) but not across projects", async () => {
    const client = t.client();
    await client.browsers.create({ name: "dup" });
    await expect(client.browsers.create({ name: "dup" })).rejects.toMatchObject({ status: 409, code: "name_conflict" });
    const other = await client.projects.create({ name: `browsers-${Date.now()}` });
    const elsewhere = await client.browsers.create({ name: "dup" }, { projectId: other.id });
    expect(elsewhere.name).toBe("dup");
    await expect(client.projects.delete(other.id)).rejects.toMatchObject({ status: 409, code: "project_not_empty" });
    await client.browsers.delete("dup", { projectId: other.id });
    await client.projects.delete(other.id);
  });

  it("DELETE stops the process (204), frees the slot and the name", async () => {
    const client = t.client();
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 1 });
    const browser = await client.browsers.create({ name: "solo" });
    const pid = launcher.latest().pid as number;
    expect(processExists(pid)).toBe(true);
    await expect(client.browsers.create()).rejects.toMatchObject({ status: 429, code: "concurrency_limit_exceeded" });
    await expect(client.browsers.delete("solo")).resolves.toBeUndefined();
    expect(processExists(pid)).toBe(false);
    await expect(client.browsers.get(browser.id)).rejects.toMatchObject({ status: 404 });
    const again = await client.browsers.create({ name: "solo" });
    expect(again.id).not.toBe(browser.id);
  });

  it("marks a browser whose process dies as crashed, which frees its slot", async () => {
    const client = t.client();
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 1 });
    await client.browsers.create({ name: "fragile" });
    const launched = launcher.latest();
    const exited = new Promise((resolve) => launched.onExit(resolve));
    process.kill(launched.pid as number, "SIGKILL");
    await exited;
    // Recorded by the service's own listener of the exit, a database round trip after it.
    await expect.poll(async () => (await client.browsers.get("fragile")).status).toBe("crashed");
    const replacement = await client.browsers.create({ name: "replacement" });
    expect(replacement.status).toBe("running");
    await expect(client.webmcp.listTools("fragile")).rejects.toMatchObject({ status: 409, code: "conflict" });
  });

  it("never lets concurrent creates pass the cap: 5 at once against a cap of 2 gives exactly 2", async () => {
    const client = t.client();
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 2 });
    const results = await Promise.allSettled(Array.from({ length: 5 }, () => client.browsers.create()));
    const created = results.filter((result) => result.status === "fulfilled");
    const refused = results.filter((result): result is PromiseRejectedResult => result.status === "rejected");
    expect(created).toHaveLength(2);
    expect(refused).toHaveLength(3);
    for (const result of refused) expect(result.reason).toMatchObject({ status: 429, code: "concurrency_limit_exceeded" });
    expect((await client.browsers.list()).length).toBe(2);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(2);
  });

  it("validates the body: a non-http start_url and a bad name are 400 with one detail each", async () => {
    const error = await t
      .client()
      .browsers.create({ name: "bad name", start_url: "file:///etc/passwd" })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, code: "bad_request" });
    expect((error as { details: { code: string }[] }).details.map((detail) => detail.code).sort()).toEqual(["pattern", "pattern"]);
  });
});

describe("WebMCP routes", () => {
  it("404 not_found for an unknown browser; a known one lists its (empty) snapshot and validates invocations", async () => {
    const client = t.client();
    await expect(client.webmcp.listTools("ghost")).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(client.webmcp.invoke("ghost", { tool_ref: "x", input: {} })).rejects.toMatchObject({ status: 404, code: "not_found" });
    const browser = await client.browsers.create({ name: "mcp" });
    expect(await client.webmcp.listTools(browser.id)).toEqual({ tools: [] });
    await expect(client.webmcp.invoke("mcp", { tool_ref: "x", input: {} })).rejects.toMatchObject({ status: 404, code: "tool_not_found" });
    await expect(client.webmcp.invoke("mcp", { tool_ref: "x", input: {}, timeout_sec: 500 })).rejects.toMatchObject({ status: 400, code: "bad_request" });
  });
});

describe("shutdown", () => {
  it("closes every browser and drops their records", async () => {
    const tracking = new TrackingLauncher();
    const own = await startTestServer({ launcher: tracking });
    const client = own.client();
    await client.browsers.create({ name: "a" });
    await client.browsers.create({ name: "b" });
    const pids = tracking.launched.map((browser) => browser.pid as number);
    expect(pids.every(processExists)).toBe(true);
    await own.close({ keepData: true });
    expect(pids.some(processExists)).toBe(false);
    const restarted = await startTestServer({ dataDir: own.dataDir, launcher: tracking });
    try {
      expect(await restarted.client().browsers.list()).toEqual([]);
      expect([...own.mismatches, ...restarted.mismatches]).toEqual([]);
    } finally {
      await restarted.close();
    }
  });
});
