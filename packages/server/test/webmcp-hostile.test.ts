import type { BrowserServiceClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import type { Browser, WebMcpTool, WebMcpToolList } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "./support/test-server.js";
import { type DrivenBrowser, drive, omittedCount, waitForList, waitForTools } from "./support/webmcp-driver.js";

// 6,000 tools of 8 KB descriptions in one document, a 1 MB title and a 1 MB URL.
const HOSTILE_PAGE = `<!doctype html><title>hostile</title><script>
  document.title = "T".repeat(1000000);
  history.replaceState(null, "", "/hostile?" + "q".repeat(1000000));
  const description = "D".repeat(8192);
  for (let i = 0; i < 6000; i++) document.modelContext.registerTool({ name: "h" + i, description, execute: async () => ({}) });
</script>`;

const NORMAL_PAGE = `<!doctype html><title>normal</title><script>
  document.modelContext.registerTool({ name: "normal", description: "An ordinary tool.", execute: async () => ({ ok: true }) });
</script>`;

// Three frames of one tab, 1,000 tools each: the tab passes its cap of 2,000.
const MANY_PAGE = (prefix: string) => `<!doctype html><title>many</title><script>
  for (let i = 0; i < 1000; i++) document.modelContext.registerTool({ name: "${prefix}" + i, description: "One of many.", execute: async () => ({}) });
</script>`;
const CROWDED_TAB = `<!doctype html><title>crowded</title><iframe src="/many-a"></iframe><iframe src="/many-b"></iframe><iframe src="/many-c"></iframe>`;

// A tool that answers with 300 MB, and one that never ends but reports what it sees of a cancellation.
const HEAVY_PAGE = `<!doctype html><title>heavy</title><script>
  const report = (name) => fetch("/runs/" + name, { method: "POST" });
  document.modelContext.addEventListener?.("toolcancel", () => report("toolcancel-event"));
  document.modelContext.registerTool({ name: "huge", description: "300 MB of output.", execute: async () => ({ blob: "x".repeat(300 * 1024 * 1024) }) });
  document.modelContext.registerTool({
    name: "hang", description: "Never ends.",
    execute: (input, client) => {
      report("hang-started");
      client?.signal?.addEventListener("abort", () => report("abort-signal"));
      return new Promise(() => {});
    },
  });
</script>`;

let pages: PageServer;
let client: BrowserServiceClient;
let browser: Browser;
let driven: DrivenBrowser;

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/hostile", HOSTILE_PAGE);
  pages.serve("/normal", NORMAL_PAGE);
  pages.serve("/crowded", CROWDED_TAB);
  for (const prefix of ["a", "b", "c"]) pages.serve(`/many-${prefix}`, MANY_PAGE(prefix));
  pages.serve("/heavy", HEAVY_PAGE);
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages.close();
});

// A short body idle timeout: invocations wait longer than it, and must not be cut off by it.
const t = useTestServer({ bodyIdleTimeoutSec: 1 });

beforeAll(async () => {
  client = t.client();
  browser = await client.browsers.create({ name: "hostile" });
  driven = await drive(browser.cdp_ws_url);
});

afterAll(async () => {
  await driven.disconnect();
});

const snapshotWhen = (ready: (list: WebMcpToolList) => boolean) => waitForList(client, browser.id, ready, 1200);

describe("a hostile page cannot hurt discovery", () => {
  it("bounds every string, keeps the normal tab's tool, and says what it left out", async () => {
    const normal = await driven.open(pages.url("/normal"));
    const hostile = await driven.open(pages.url("/hostile"));
    try {
      // Tools registered after the server's session enabled WebMCP arrive one by one; those
      // registered before it, in one replay of about 50 MB, which is read tool by tool.
      // Either way the document's cap decides: 1,000 kept, 5,000 counted over it.
      const list = await snapshotWhen(
        (each) =>
          each.tools.some((tool) => tool.name === "normal") && (omittedCount(each, "document_limit") === 5000 || omittedCount(each, "message_too_large") > 0),
      );
      expect(list.omitted).toEqual([{ reason: "document_limit", count: 5000 }]);
      const fromHostile = list.tools.filter((tool) => tool.name.startsWith("h"));
      expect(fromHostile).toHaveLength(1000);
      for (const tool of fromHostile) {
        expect(tool.description.length).toBeLessThanOrEqual(8192);
        expect(tool.source.page_url.length).toBeLessThanOrEqual(8192);
        expect(tool.source.page_url.endsWith("…")).toBe(true);
        expect(tool.source.page_title.length).toBeLessThanOrEqual(1024);
      }
      const [normalTool] = list.tools.filter((tool) => tool.name === "normal") as [WebMcpTool];
      expect(normalTool.source.page_title).toBe("normal");
      expect(await client.webmcp.invoke(browser.id, { tool_ref: normalTool.tool_ref, input: {} })).toMatchObject({ status: "completed", output: { ok: true } });
      // The rest of the API answers meanwhile.
      expect((await client.limits.get()).concurrent_sessions_used).toBe(1);
    } finally {
      await hostile.close();
    }
    const after = await snapshotWhen((each) => each.tools.length === 1);
    expect(after.omitted).toBeUndefined();
    await normal.close();
  }, 180_000);

  it("caps each tab, so one tab's frames cannot crowd out the others", async () => {
    const crowded = await driven.open(pages.url("/crowded"));
    const normal = await driven.open(pages.url("/normal"));
    try {
      const list = await snapshotWhen((each) => omittedCount(each, "tab_limit") === 1000 && each.tools.some((tool) => tool.name === "normal"));
      expect(list.tools.filter((tool) => tool.name !== "normal")).toHaveLength(2000);
    } finally {
      await crowded.close();
      await normal.close();
    }
    await snapshotWhen((each) => each.tools.length === 0 && each.omitted === undefined);
  }, 180_000);
});

describe("a hostile tool cannot hurt invocation", () => {
  let heavy: Awaited<ReturnType<DrivenBrowser["open"]>>;
  let tools: WebMcpTool[];

  beforeAll(async () => {
    heavy = await driven.open(pages.url("/heavy"));
    tools = await waitForTools(client, browser.id, (each) => each.length === 2);
  });

  afterAll(async () => {
    await heavy.close();
  });

  const ref = (name: string) => (tools.find((tool) => tool.name === name) as WebMcpTool).tool_ref;

  it("drops a 300 MB output as it arrives and answers at once with an error_text; the server stays up", async () => {
    const result = await client.webmcp.invoke(browser.id, { tool_ref: ref("huge"), input: {}, timeout_sec: 120 });
    expect(result.status).toBe("completed");
    expect(result.output).toBeUndefined();
    expect(result.error_text).toMatch(/over the service's limit .* dropped/);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(1);
  }, 180_000);

  it("on a timeout asks the browser to cancel: the 504 says so, and the page's tool sees its signal abort", async () => {
    pages.resetRuns();
    const error = await client.webmcp.invoke(browser.id, { tool_ref: ref("hang"), input: {}, timeout_sec: 2 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 504, code: "outcome_unknown", details: [{ code: "cancellation_requested" }] });
    expect(pages.runs("hang-started")).toBe(1);
    await expect.poll(() => pages.runs("abort-signal")).toBe(1);
  });

  it("a caller that disconnects stops the wait, and the invocation is cancelled in the browser", async () => {
    pages.resetRuns();
    const caller = new AbortController();
    const pending = fetch(`${t.url}/browsers/${browser.id}/webmcp/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
      body: JSON.stringify({ tool_ref: ref("hang"), input: {}, timeout_sec: 120 }),
      signal: caller.signal,
    }).catch((caught: unknown) => caught);
    await expect.poll(() => pages.runs("hang-started")).toBe(1);
    caller.abort();
    await pending;
    await expect.poll(() => pages.runs("abort-signal")).toBe(1);
  });
});
