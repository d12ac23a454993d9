import { readdirSync, rmSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { PageServer } from "@browser-service/test-pages";
import type { Browser } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createServer } from "../src/index.js";
import { TITLE_MAX_AGE_MS } from "../src/webmcp/tab-titles.js";
import { type HeldMessage, HoldingLauncher } from "./support/held-devtools.js";
import { tempDataDir, useTestServer } from "./support/test-server.js";
import { type DrivenBrowser, drive, waitForTools } from "./support/webmcp-driver.js";

// Tab titles change without any DevTools event, so the server reads them from the browser
// (Target.getTargets on its WebMCP connection, counted here); one read serves listings
// for less than page_title's x-max-age-ms while no tab or document came or went.

const GET_TARGETS = "Target.getTargets";
const page = (title: string, tool: string) => `<!doctype html><title>${title}</title><script>
  document.modelContext.registerTool({ name: "${tool}", description: "A tool.", execute: async () => ({}) });
</script>`;

let pages: PageServer;
let launcher: HoldingLauncher;
let browser: Browser;
let driven: DrivenBrowser;

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/first", page("First", "first"));
  pages.serve("/second", page("Second", "second"));
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages?.close();
});

const t = useTestServer(() => {
  launcher = new HoldingLauncher();
  return { launcher };
});

beforeAll(async () => {
  browser = await t.client().browsers.create({ name: "titles" });
  driven = await drive(browser.cdp_ws_url);
});

afterAll(async () => {
  await driven?.disconnect();
});

async function titles(): Promise<Map<string, string>> {
  const response = await fetch(`${t.url}/browsers/${browser.id}/webmcp/tools`, { headers: { authorization: `Bearer ${t.orgKey}` } });
  const body = (await response.json()) as { tools: { name: string; source: { page_title: string } }[] };
  return new Map(body.tools.map((tool) => [tool.name, tool.source.page_title]));
}

describe("the page_title of GET /browsers/{id}/webmcp/tools", () => {
  it("is read from the browser at most once per x-max-age-ms for a run of listings, not once per listing", async () => {
    const tab = await driven.open(pages.url("/first"));
    await waitForTools(t.client(), browser.id, (tools) => tools.length === 1);
    const devtools = launcher.devtools();
    const readsBefore = devtools.sent(GET_TARGETS);
    const started = performance.now();
    for (let i = 0; i < 40; i++) expect((await titles()).get("first")).toBe("First");
    const elapsed = performance.now() - started;
    const reads = devtools.sent(GET_TARGETS) - readsBefore;
    // However slow the machine: one read per started period of the age, and the first may be one.
    expect(reads).toBeLessThanOrEqual(Math.ceil(elapsed / TITLE_MAX_AGE_MS) + 1);
    expect(reads).toBeLessThan(40);
    await tab.close();
    await waitForTools(t.client(), browser.id, (tools) => tools.length === 0);
  });

  it("shows a title the page set once the age has passed, and a new tab's own title at once", async () => {
    const first = await driven.open(pages.url("/first"));
    await waitForTools(t.client(), browser.id, (tools) => tools.length === 1);
    expect((await titles()).get("first")).toBe("First");
    await first.evaluate(() => {
      document.title = "Renamed";
    });
    await sleep(TITLE_MAX_AGE_MS + 50);
    expect((await titles()).get("first")).toBe("Renamed");

    // A tab that was not there when the titles were read: its listing reads them again, so
    // the new tab is never shown without its title.
    await first.evaluate(() => {
      document.title = "Renamed again";
    });
    const second = await driven.open(pages.url("/second"));
    await waitForTools(t.client(), browser.id, (tools) => tools.length === 2);
    const now = await titles();
    expect(now.get("second")).toBe("Second");
    expect(now.get("first")).toBe("Renamed again");
    await Promise.all([first.close(), second.close()]);
    expect(t.mismatches).toEqual([]);
  });
});

describe("the page_title of a document that arrived while the titles were read", () => {
  it("is its own, read again, never its tab's title from before the navigation", async () => {
    const devtools = launcher.devtools();
    const tab = await driven.open(pages.url("/first"));
    await waitForTools(t.client(), browser.id, (tools) => tools.some((tool) => tool.name === "first"));
    // Past the age of the last read, so that the next listing reads the titles.
    await sleep(TITLE_MAX_AGE_MS + 50);
    devtools.hold({ answersTo: [GET_TARGETS], events: ["WebMCP.toolsAdded"] });
    const first = devtools.sent(GET_TARGETS) + 1;
    const answerTo = (ordinal: number) => (held: HeldMessage) => held.kind === "answer" && held.method === GET_TARGETS && held.ordinal === ordinal;
    const listing = titles();
    // The browser has answered with "First" (held): then the tab navigates and its new page registers.
    await devtools.until(() => devtools.held().some(answerTo(first)));
    await tab.goto(pages.url("/second"));
    await devtools.until(() => devtools.held().some((held) => held.method === "WebMCP.toolsAdded"));
    devtools.release((held) => held.method === "WebMCP.toolsAdded");
    devtools.release(answerTo(first));
    // The snapshot changed during the read: the listing reads the titles again.
    await devtools.until(() => devtools.held().some(answerTo(first + 1)));
    devtools.stop();
    expect(await listing).toEqual(new Map([["second", "Second"]]));
    await tab.close();
    expect(t.mismatches).toEqual([]);
  });
});

describe("webmcpTitleMaxAgeMs", () => {
  it("is refused past the spec's x-max-age-ms or below 0, before anything starts", async () => {
    const dataDir = tempDataDir();
    try {
      for (const age of [TITLE_MAX_AGE_MS + 1, -1, 1.5]) {
        await expect(createServer({ dataDir, webmcpTitleMaxAgeMs: age })).rejects.toThrow(/^webmcpTitleMaxAgeMs must be an integer from 0 to 500/);
      }
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
