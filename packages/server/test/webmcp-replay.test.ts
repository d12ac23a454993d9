import type { BrowserServiceClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import type { Browser, WebMcpToolList } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "./support/test-server.js";
import { DroppingLauncher } from "./support/webmcp-connection-drop.js";
import { type DrivenBrowser, drive, omittedCount, waitForList } from "./support/webmcp-driver.js";

// When the service follows a frame that already registered tools (here: after its
// DevTools connection was lost and made again), Chromium reports them all in one
// `WebMCP.toolsAdded` message. Up to 64 MiB it is read tool by tool, so the caps decide
// what is kept; past 64 MiB it is dropped unread and counted as one message.

/** A page whose document registers `count` tools named r0, r1, ... with 8 KiB descriptions. */
const REGISTERING = (count: number) => `<!doctype html><title>replayed</title><script>
  const description = "D".repeat(8192);
  for (let i = 0; i < ${count}; i++) document.modelContext.registerTool({ name: "r" + i, description, execute: async () => ({ i }) });
</script>`;

let pages: PageServer;
let launcher: DroppingLauncher;
let client: BrowserServiceClient;
let browser: Browser;
let driven: DrivenBrowser;

beforeAll(async () => {
  pages = await PageServer.start();
  // 1,500 tools: a replay of about 12.5 MB, over the 8 Mi characters the service parses at once.
  pages.serve("/replayed", REGISTERING(1500));
  // 8,500 tools: a replay of about 70 MB, over the 64 MiB the service reads at all.
  pages.serve("/oversized", REGISTERING(8500));
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages?.close();
});

const t = useTestServer(() => {
  launcher = new DroppingLauncher();
  return { launcher };
});

beforeAll(async () => {
  client = t.client();
  browser = await client.browsers.create({ name: "replay" });
  driven = await drive(browser.cdp_ws_url);
});

afterAll(async () => {
  await driven?.disconnect();
});

const snapshotWhen = (ready: (list: WebMcpToolList) => boolean) => waitForList(client, browser.id, ready);

describe("the tools of a frame open before the service followed it", () => {
  it("are read tool by tool from a replay over 8 Mi characters: the first 1,000 kept, the rest counted as document_limit", async () => {
    const page = await driven.open(pages.url("/replayed"));
    try {
      await snapshotWhen((list) => list.tools.length === 1000 && omittedCount(list, "document_limit") === 500);
      launcher.dropWebMcpConnection();
      const list = await snapshotWhen((each) => omittedCount(each, "document_limit") === 500 || omittedCount(each, "message_too_large") > 0);
      // The first 1,000 of the replay (Chromium replays a frame's tools in an order of its own).
      const names = new Set(list.tools.map((tool) => tool.name));
      expect(names.size).toBe(1000);
      for (const name of names) expect(name).toMatch(/^r([0-9]|[1-9][0-9]{1,2}|1[0-4][0-9]{2})$/);
      expect(list.omitted).toEqual([{ reason: "document_limit", count: 500 }]);
      const last = list.tools[999]!;
      expect(await client.webmcp.invoke(browser.id, { tool_ref: last.tool_ref, input: {} })).toMatchObject({
        status: "completed",
        output: { i: Number(last.name.slice(1)) },
      });
    } finally {
      await page.close();
    }
    await snapshotWhen((list) => list.tools.length === 0 && list.omitted === undefined);
  }, 120_000);

  it("are dropped unread from a replay over 64 MiB and counted as one message", async () => {
    const page = await driven.open(pages.url("/oversized"));
    try {
      await snapshotWhen((list) => list.tools.length === 1000 && omittedCount(list, "document_limit") === 7500);
      launcher.dropWebMcpConnection();
      const list = await snapshotWhen((each) => each.omitted !== undefined);
      expect(list.tools).toEqual([]);
      expect(list.omitted).toEqual([{ reason: "message_too_large", count: 1 }]);
    } finally {
      await page.close();
    }
    await snapshotWhen((list) => list.tools.length === 0 && list.omitted === undefined);
  }, 120_000);
});
