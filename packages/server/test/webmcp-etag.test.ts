import { setTimeout as sleep } from "node:timers/promises";
import type { BrowserServiceClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import type { Browser } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TITLE_MAX_AGE_MS } from "../src/webmcp/tab-titles.js";
import { useTestServer } from "./support/test-server.js";
import { type DrivenBrowser, drive, waitForTools } from "./support/webmcp-driver.js";

// The snapshot's ETag: the version a poller sends back in If-None-Match (304 while nothing the body shows changed).
const TOOL_PAGE = `<!doctype html><title>Versioned</title><script>
  document.modelContext.registerTool({ name: "ping", description: "Answers pong.", execute: async () => ({ pong: true }) });
</script>`;

let pages: PageServer;
let browser: Browser;
let driven: DrivenBrowser;
let client: BrowserServiceClient;

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/versioned", TOOL_PAGE);
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages?.close();
});

const t = useTestServer();

beforeAll(async () => {
  client = t.client();
  browser = await client.browsers.create({ name: "etag" });
  driven = await drive(browser.cdp_ws_url);
});

afterAll(async () => {
  await driven?.disconnect();
});

/** One raw GET of the snapshot, with `If-None-Match` when given. */
async function get(ifNoneMatch?: string): Promise<{ status: number; etag: string | null; body: string }> {
  const response = await fetch(`${t.url}/browsers/${browser.id}/webmcp/tools`, {
    headers: { authorization: `Bearer ${t.orgKey}`, ...(ifNoneMatch === undefined ? {} : { "if-none-match": ifNoneMatch }) },
  });
  return { status: response.status, etag: response.headers.get("etag"), body: await response.text() };
}

describe("the ETag of GET /browsers/{id_or_name}/webmcp/tools", () => {
  it("versions the snapshot, answers 304 while it holds, and changes with registrations, titles and URLs", async () => {
    const empty = await get();
    expect(empty.status).toBe(200);
    expect(empty.etag).toMatch(/^"[A-Za-z0-9_-]{43}"$/);
    const again = await get(empty.etag!);
    expect(again).toEqual({ status: 304, etag: empty.etag, body: "" });

    // A new tab registers a tool: the old version is outdated.
    const page = await driven.open(pages.url("/versioned"));
    await waitForTools(client, browser.id, (tools) => tools.length === 1);
    const one = await get(empty.etag!);
    expect(one.status).toBe(200);
    expect(JSON.parse(one.body).tools).toHaveLength(1);
    expect(one.etag).not.toBe(empty.etag);
    expect((await get(one.etag!)).status).toBe(304);

    // The title changes (no event says so): once the titles the server read are older than
    // page_title's x-max-age-ms, a listing shows it under a new version.
    await page.evaluate(() => {
      document.title = "Renamed";
    });
    await sleep(TITLE_MAX_AGE_MS + 50);
    const renamed = await get(one.etag!);
    expect(renamed.status).toBe(200);
    expect(JSON.parse(renamed.body).tools[0].source.page_title).toBe("Renamed");
    expect(renamed.etag).not.toBe(one.etag);

    // The URL changes within the document (history API): a new version, same registration.
    await page.evaluate(() => history.pushState(null, "", "/versioned?step=2"));
    const moved = await get(renamed.etag!);
    expect(moved.status).toBe(200);
    expect(JSON.parse(moved.body).tools[0].source.page_url).toBe(pages.url("/versioned?step=2"));
    expect(JSON.parse(moved.body).tools[0].tool_ref).toBe(JSON.parse(renamed.body).tools[0].tool_ref);

    // The tab closes: back to an empty snapshot, whose body (and so version) is the first one's.
    await page.close();
    await waitForTools(client, browser.id, (tools) => tools.length === 0);
    expect((await get(moved.etag!)).status).toBe(200);
    expect((await get(empty.etag!)).status).toBe(304);
    expect(t.mismatches).toEqual([]);
  });

  it("answers 304 from the tag of the last build without building again, and 200 with a new tag once registrations change", async () => {
    const page = await driven.open(pages.url("/versioned"));
    try {
      await waitForTools(client, browser.id, (tools) => tools.length === 1);
      const built = await get();
      const before = t.server.webmcpSnapshotBuilds();
      for (let i = 0; i < 3; i++) expect(await get(built.etag!)).toEqual({ status: 304, etag: built.etag, body: "" });
      expect(t.server.webmcpSnapshotBuilds()).toEqual({ ...before, remembered: before.remembered + 3 });

      // A second registration: the same If-None-Match now gets the new body under a new tag.
      await page.evaluate(() => {
        const { modelContext } = document as unknown as { modelContext: { registerTool(tool: object): void } };
        modelContext.registerTool({ name: "pong", description: "Answers ping.", execute: async () => ({ ping: true }) });
      });
      await expect.poll(async () => (await get(built.etag!)).status).toBe(200);
      const changed = await get(built.etag!);
      expect(JSON.parse(changed.body).tools.map((tool: { name: string }) => tool.name)).toEqual(["ping", "pong"]);
      expect(changed.etag).not.toBe(built.etag);
      const unchanged = t.server.webmcpSnapshotBuilds();
      expect((await get(changed.etag!)).status).toBe(304);
      expect(t.server.webmcpSnapshotBuilds()).toEqual({ ...unchanged, remembered: unchanged.remembered + 1 });
    } finally {
      await page.close();
    }
    await waitForTools(client, browser.id, (tools) => tools.length === 0);
    expect(t.mismatches).toEqual([]);
  });

  it("matches If-None-Match as RFC 9110 says: lists, weak tags and *; anything else gets the body", async () => {
    const { etag } = await get();
    expect((await get(`"other", W/${etag}`)).status).toBe(304);
    expect((await get(` ${etag} ,`)).status).toBe(304);
    expect((await get("*")).status).toBe(304);
    expect((await get('"other"')).status).toBe(200);
    expect((await get(etag!.slice(1, -1))).status).toBe(200);
    expect((await get(`${etag}, not-a-tag`)).status).toBe(200);
    expect((await get("")).status).toBe(200);
    expect(t.mismatches).toEqual([]);
  });

  it("is what the client's listToolsIfChanged sends and reads", async () => {
    const first = await client.webmcp.listToolsIfChanged(browser.id, null);
    expect(first).toMatchObject({ changed: true, data: { tools: [] } });
    if (!first.changed) throw new Error("unreachable");
    await expect(client.webmcp.listToolsIfChanged(browser.id, first.etag)).resolves.toEqual({ changed: false, etag: first.etag });
    const page = await driven.open(pages.url("/versioned"));
    await waitForTools(client, browser.id, (tools) => tools.length === 1);
    const changed = await client.webmcp.listToolsIfChanged(browser.id, first.etag);
    expect(changed.changed && changed.data.tools.map((tool) => tool.name)).toEqual(["ping"]);
    await page.close();
  });
});
