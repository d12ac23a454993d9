import type { BrowserServiceClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import type { Browser, WebMcpTool } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startTestServer, type TestServer, useTestServer } from "./support/test-server.js";
import { waitForTools } from "./support/webmcp-driver.js";

// Chromium's `WebMCP.enable` replays the tools of the session's own (local root) frame
// only. A frame in the same process below it that registered before `enable` is never
// reported, so the service must have `enable` in effect before a new target runs.
//
// No Playwright here: a client that auto-attaches also holds new targets until it is
// ready, which would give the service the time it needs and hide the race. Tabs are
// opened with one raw `Target.createTarget` instead.

/** A tool named `name` registered in the document `doc` (an expression). */
const register = (doc: string, name: string) =>
  `${doc}.modelContext.registerTool({ name: "${name}", description: "${name}", execute: async () => ({ name: "${name}", url: location.href }) });`;

/**
 * Registers, in the page's first script, a tool of its own and one in a same-origin child
 * frame it builds at once: both before any DevTools round trip of the service can end.
 */
const SELF_AND_CHILD = `<script>
  ${register("document", "self")}
  const child = document.createElement("iframe");
  document.documentElement.append(child);
  ${register("child.contentDocument", "child")}
</script>`;

/** `go` navigates the tab to `url` once the invocation has answered. */
const GO = `<script>
  document.modelContext.registerTool({ name: "go", description: "Navigates the tab.", execute: async ({ url }) => { setTimeout(() => { location.href = url; }); return {}; } });
</script>`;

const ROUNDS = 3;

let pages: PageServer;
let client: BrowserServiceClient;
let browser: Browser;

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/start", `<!doctype html><title>Start</title>${GO}`);
  // A tab whose cross-origin frame (its own out-of-process target) has a same-process child.
  pages.serve("/host", (port) => `<!doctype html><title>Host</title>${GO}<iframe src="http://localhost:${port}/nested" allow="tools"></iframe>`);
  pages.serve("/nested", `<!doctype html><title>Nested</title>${SELF_AND_CHILD}`);
  // A tab (opened as a new target) with a same-process child of its own.
  pages.serve("/tab", `<!doctype html><title>Popup</title>${SELF_AND_CHILD}`);
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages.close();
});

const t = useTestServer();

beforeAll(async () => {
  client = t.client();
  browser = await client.browsers.create({ name: "attach-race", start_url: pages.url("/start") });
});

const onPage = (url: string) => (tool: WebMcpTool) => tool.source.page_url === url;
const names = (tools: WebMcpTool[]) => tools.map((tool) => tool.name).sort();

/**
 * Opens a tab on `url` over the browser's DevTools endpoint as automation libraries do: a
 * blank tab, then `Page.navigate` (a tab created with its URL starts loading before any
 * debugger attaches, so nobody can hold it), and closes that connection.
 */
async function openTab(url: string): Promise<void> {
  const ws = new WebSocket(browser.cdp_ws_url);
  const answers = new Map<number, (message: { result?: Record<string, unknown>; error?: unknown }) => void>();
  let nextId = 1;
  const send = async (method: string, params: object, sessionId?: string): Promise<Record<string, unknown>> => {
    const id = nextId++;
    const answer = new Promise<{ result?: Record<string, unknown>; error?: unknown }>((resolve) => answers.set(id, resolve));
    ws.send(JSON.stringify({ id, method, params, sessionId }));
    const { result, error } = await answer;
    if (result === undefined) throw new Error(`${method} failed: ${JSON.stringify(error)}`);
    return result;
  };
  ws.on("message", (data) => {
    const message = JSON.parse(String(data)) as { id?: number; result?: Record<string, unknown>; error?: unknown };
    if (message.id !== undefined) answers.get(message.id)?.(message);
  });
  try {
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    const { targetId } = await send("Target.createTarget", { url: "about:blank" });
    const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
    await send("Page.navigate", { url }, sessionId as string);
  } finally {
    ws.close();
  }
}

/** Invokes the tool named `name` of the page at `pageUrl` (once it is listed). */
async function invokeOn(pageUrl: string, name: string, input: Record<string, unknown>): Promise<unknown> {
  const tools = await waitForTools(client, browser.id, (listed) => listed.some((tool) => onPage(pageUrl)(tool) && tool.name === name));
  const tool = tools.find((each) => onPage(pageUrl)(each) && each.name === name);
  return (await client.webmcp.invoke(browser.id, { tool_ref: tool?.tool_ref ?? "", input })).output;
}

describe("a target is followed before it runs", () => {
  it("lists the tools of a same-process child of a new out-of-process frame", async () => {
    let current = pages.url("/start");
    for (let round = 0; round < ROUNDS; round++) {
      const next = `${pages.url("/host")}?round=${round}`;
      await invokeOn(current, "go", { url: next });
      const tools = await waitForTools(client, browser.id, (listed) => names(listed.filter(onPage(next))).join() === "child,go,self");
      const frameUrls = tools
        .filter(onPage(next))
        .filter((tool) => tool.source.frame !== null)
        .map((tool) => [tool.name, tool.source.frame?.url]);
      expect(frameUrls.sort()).toEqual([
        ["child", "about:blank"],
        ["self", `http://localhost:${new URL(next).port}/nested`],
      ]);
      current = next;
    }
  }, 120_000);

  it("lists the tools of a same-process child of a new tab", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const tab = `${pages.url("/tab")}?round=${round}`;
      await openTab(tab);
      const tools = await waitForTools(client, browser.id, (listed) => names(listed.filter(onPage(tab))).join() === "child,self");
      expect(tools.filter(onPage(tab)).map((tool) => [tool.name, tool.source.frame === null])).toEqual([
        ["self", true],
        ["child", false],
      ]);
    }
  }, 120_000);
});

describe("a new browser's start_url is followed from its first tool", () => {
  /** Creates a browser on `start` (a page with a same-process child frame), which must list both tools, and deletes it. */
  async function startUrlListsItsChild(server: TestServer, start: string): Promise<void> {
    const own = server.client();
    const created = await own.browsers.create({ start_url: start });
    try {
      const tools = await waitForTools(own, created.id, (listed) => names(listed.filter(onPage(start))).join() === "child,self");
      expect(tools.filter(onPage(start)).map((tool) => [tool.name, tool.source.frame === null])).toEqual([
        ["self", true],
        ["child", false],
      ]);
    } finally {
      await own.browsers.delete(created.id);
    }
  }

  it("a cold launch: the browser starts on about:blank and goes to start_url once followed", async () => {
    for (let round = 0; round < ROUNDS; round++) await startUrlListsItsChild(t, `${pages.url("/tab")}?cold=${round}`);
  }, 120_000);

  // Before, a warm browser was followed only once taken, after its navigation was sent:
  // the child's tool was missing in every round.
  it("a warm browser: followed while it waits in the pool, then sent to start_url", async () => {
    const pooled = await startTestServer({ warmBrowsers: 1 });
    try {
      for (let round = 0; round < ROUNDS; round++) {
        await expect.poll(() => pooled.server.warmPoolStats().ready, { timeout: 60_000 }).toBe(1);
        await startUrlListsItsChild(pooled, `${pages.url("/tab")}?warm=${round}`);
      }
      expect(pooled.mismatches).toEqual([]);
    } finally {
      await pooled.close();
    }
  }, 180_000);
});
