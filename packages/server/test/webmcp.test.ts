import type { BrowserServiceClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import type { Browser, WebMcpTool } from "@browser-service/types";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "./support/test-server.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";
import { type DrivenBrowser, drive, named, waitForTools } from "./support/webmcp-driver.js";

// Imperative tools. `window.calls` counts every run of each tool: the proof that an
// invocation ran exactly once, whatever the service answered.
const TOOLS_PAGE = `<!doctype html><title>Tools page</title><p>tools</p>
<script>
  window.calls = { add: 0, boom: 0, hang: 0, temporary: 0 };
  window.unregister = new AbortController();
  const mc = document.modelContext;
  mc.registerTool({
    name: "add", description: "Adds two numbers.",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    annotations: { readOnlyHint: true },
    execute: async ({ a, b }) => { window.calls.add++; return { sum: a + b, tab: window.tabMarker ?? null }; },
  });
  mc.registerTool({ name: "boom", description: "Always fails.", execute: async () => { window.calls.boom++; throw new TypeError("kaboom: the page failed on purpose"); } });
  mc.registerTool({ name: "hang", description: "Never finishes.", execute: () => { window.calls.hang++; return new Promise(() => {}); } });
  mc.registerTool({ name: "temporary", description: "Its page unregisters it.", execute: async () => { window.calls.temporary++; return {}; } }, { signal: window.unregister.signal });
</script>`;

const WHEREAMI = `<script>
  document.modelContext.registerTool({ name: "whereami", description: "Says where it runs.", execute: async () => ({ origin: location.origin, top: window === window.top }) });
</script>`;

const FRAMES_PAGE = (port: number) => `<!doctype html><title>Frames page</title>${WHEREAMI}
<iframe src="/frames/child?same"></iframe>
<iframe id="cross" src="http://localhost:${port}/frames/child?cross#inside" allow="tools"></iframe>`;

const FORMS_PAGE = `<!doctype html><title>Forms page</title>
<form toolname="search" tooldescription="Search the catalog." toolautosubmit>
  <input name="q" toolparamdescription="What to look for"><button>Search</button>
</form>
<form toolname="order" tooldescription="Order an item." action="/forms/done">
  <input name="item"><select name="size"><option>S</option><option>L</option></select><input type="checkbox" name="gift"><button>Order</button>
</form>
<form toolname="subscribe" tooldescription="Subscribe; submitting leaves the page." toolautosubmit action="/forms/done">
  <input name="email"><button>Subscribe</button>
</form>
<script>
  window.searches = 0;
  document.forms[0].addEventListener("submit", (event) => {
    window.searches++;
    event.preventDefault();
    event.respondWith(Promise.resolve({ results: ["result for " + event.target.q.value] }));
  });
</script>`;

let launcher: TrackingLauncher;
let pages: PageServer;
let browser: Browser;
let driven: DrivenBrowser;
let client: BrowserServiceClient;
const opened: Page[] = [];

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/tools", TOOLS_PAGE);
  pages.serve("/tools-again", TOOLS_PAGE);
  pages.serve("/frames", FRAMES_PAGE);
  pages.serve("/frames/child", `<!doctype html><title>Child</title>${WHEREAMI}`);
  pages.serve("/forms", FORMS_PAGE);
  pages.serve("/forms/done", "<!doctype html><title>Done</title><p>done</p>");
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages.close();
});

const t = useTestServer(() => {
  launcher = new TrackingLauncher();
  return { launcher };
});

beforeAll(async () => {
  client = t.client();
  browser = await client.browsers.create({ name: "webmcp" });
  driven = await drive(browser.cdp_ws_url);
});

afterEach(async () => {
  // Each test's tabs go, so the next test's snapshot holds only its own.
  for (const page of opened.splice(0)) if (!page.isClosed()) await page.close();
});

afterAll(async () => {
  await driven.disconnect();
});

async function open(url: string): Promise<Page> {
  const page = await driven.open(url);
  opened.push(page);
  return page;
}

const onPage = (url: string) => (tool: WebMcpTool) => tool.source.page_url === url;

/** The tools registered by the page at `url`, once there are `count` of them. */
async function toolsOf(url: string, count: number): Promise<WebMcpTool[]> {
  return (await waitForTools(client, browser.id, (tools) => tools.filter(onPage(url)).length === count)).filter(onPage(url));
}

function toolNamed(tools: WebMcpTool[], name: string): WebMcpTool {
  const [tool, ...others] = named(tools, name);
  if (!tool || others.length > 0) throw new Error(`Expected one tool named ${name} in ${JSON.stringify(tools)}`);
  return tool;
}

describe("discovery", () => {
  it("lists every tool of a page with its fields, annotations mapped and the fragment dropped from page_url", async () => {
    const url = pages.url("/tools");
    await open(`${url}#section`);
    const tools = await toolsOf(url, 4);
    expect(tools.map((tool) => tool.name).sort()).toEqual(["add", "boom", "hang", "temporary"]);
    const add = toolNamed(tools, "add");
    expect(add).toMatchObject({
      name: "add",
      description: "Adds two numbers.",
      input_schema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
      annotations: { read_only: true, untrusted_content: false, consequential: false },
      source: { page_url: url, page_title: "Tools page", frame: null },
    });
    expect(add.annotations).not.toHaveProperty("debugging");
    expect(add.tool_ref).toMatch(/^wmt_[A-Za-z0-9_-]{22}$/);
    expect(new Set(tools.map((tool) => tool.tool_ref)).size).toBe(4);
    expect(toolNamed(tools, "boom").input_schema).toEqual({});
  });

  it("tells two tabs with the same URL apart by tab_id, and each ref invokes its own tab", async () => {
    const url = pages.url("/tools");
    const first = await open(url);
    const second = await open(url);
    await first.evaluate(() => ((window as unknown as { tabMarker: string }).tabMarker = "first"));
    await second.evaluate(() => ((window as unknown as { tabMarker: string }).tabMarker = "second"));
    const adds = named(await toolsOf(url, 8), "add");
    expect(adds).toHaveLength(2);
    const [a, b] = adds as [WebMcpTool, WebMcpTool];
    expect(a.source.page_url).toBe(b.source.page_url);
    expect(a.source.tab_id).not.toBe(b.source.tab_id);
    expect(Number.isInteger(a.source.window_id) && Number.isInteger(b.source.window_id)).toBe(true);
    const outputs = [];
    for (const tool of adds) outputs.push(await client.webmcp.invoke(browser.id, { tool_ref: tool.tool_ref, input: { a: 1, b: 2 } }));
    expect(outputs.map((result) => result.status)).toEqual(["completed", "completed"]);
    expect(outputs.map((result) => (result.output as { tab: string }).tab).sort()).toEqual(["first", "second"]);
    // Listing again gives the same ids for the same tabs.
    const again = named((await client.webmcp.listTools(browser.id)).tools.filter(onPage(url)), "add");
    expect(again.map((tool) => tool.source.tab_id).sort()).toEqual(adds.map((tool) => tool.source.tab_id).sort());
    expect(await first.evaluate(() => (window as unknown as { calls: { add: number } }).calls.add)).toBe(1);
    expect(await second.evaluate(() => (window as unknown as { calls: { add: number } }).calls.add)).toBe(1);
  });

  it("lists the same name from the top-level page, a same-origin frame and a cross-origin (out-of-process) frame", async () => {
    const url = pages.url("/frames");
    await open(`${url}#top`);
    const tools = await toolsOf(url, 3);
    const top = tools.find((tool) => tool.source.frame === null);
    const same = tools.find((tool) => tool.source.frame?.url === pages.url("/frames/child?same"));
    const cross = tools.find((tool) => tool.source.frame?.url === pages.url("/frames/child?cross", "localhost"));
    expect(top && same && cross).toBeTruthy();
    for (const tool of tools) expect(tool).toMatchObject({ name: "whereami", source: { page_url: url, page_title: "Frames page" } });
    expect(new Set(tools.map((tool) => tool.source.tab_id)).size).toBe(1);
    expect(same?.source.frame?.frame_id).not.toBe(cross?.source.frame?.frame_id);
    const where = async (tool: WebMcpTool | undefined) => (await client.webmcp.invoke(browser.id, { tool_ref: tool?.tool_ref ?? "", input: {} })).output;
    expect(await where(top)).toEqual({ origin: new URL(url).origin, top: true });
    expect(await where(same)).toEqual({ origin: new URL(url).origin, top: false });
    expect(await where(cross)).toEqual({ origin: new URL(pages.url("/", "localhost")).origin, top: false });
  });

  it("drops a removed frame's tools: its ref goes stale and the others stay", async () => {
    const url = pages.url("/frames");
    const page = await open(url);
    const tools = await toolsOf(url, 3);
    const cross = tools.find((tool) => tool.source.frame?.url.startsWith("http://localhost:"));
    await page.evaluate(() => document.getElementById("cross")?.remove());
    const after = await toolsOf(url, 2);
    expect(after.map((tool) => tool.tool_ref).sort()).toEqual(
      tools
        .filter((tool) => tool !== cross)
        .map((tool) => tool.tool_ref)
        .sort(),
    );
    await expect(client.webmcp.invoke(browser.id, { tool_ref: cross?.tool_ref ?? "", input: {} })).rejects.toMatchObject({
      status: 409,
      code: "tool_ref_stale",
    });
  });

  it("keeps the snapshot from events: unregistration through the abort signal removes the tool and its ref goes stale", async () => {
    const url = pages.url("/tools");
    const page = await open(url);
    const temporary = toolNamed(await toolsOf(url, 4), "temporary");
    await page.evaluate(() => (window as unknown as { unregister: AbortController }).unregister.abort());
    const after = await toolsOf(url, 3);
    expect(named(after, "temporary")).toEqual([]);
    await expect(client.webmcp.invoke(browser.id, { tool_ref: temporary.tool_ref, input: {} })).rejects.toMatchObject({ status: 409, code: "tool_ref_stale" });
    expect(await page.evaluate(() => (window as unknown as { calls: { temporary: number } }).calls.temporary)).toBe(0);
  });

  it("bounds page data: a very long description is cut to 8 KiB", async () => {
    pages.serve(
      "/long",
      `<!doctype html><title>Long</title><script>
      document.modelContext.registerTool({ name: "wordy", description: "x".repeat(20000), execute: async () => ({}) });
    </script>`,
    );
    const url = pages.url("/long");
    await open(url);
    const [wordy] = await toolsOf(url, 1);
    expect(wordy?.description).toHaveLength(8 * 1024);
    expect(wordy?.description.endsWith("…")).toBe(true);
  });
});

describe("refs", () => {
  it("a navigation that replaces the document makes its refs stale (409); the re-registration gets a new ref", async () => {
    const url = pages.url("/tools");
    const page = await open(url);
    const before = toolNamed(await toolsOf(url, 4), "add");
    const elsewhere = pages.url("/frames/child?alone");
    await page.goto(elsewhere);
    // Only the new document's tool is left in the tab.
    expect((await toolsOf(elsewhere, 1)).map((tool) => tool.name)).toEqual(["whereami"]);
    await expect(client.webmcp.invoke(browser.id, { tool_ref: before.tool_ref, input: { a: 1, b: 1 } })).rejects.toMatchObject({
      status: 409,
      code: "tool_ref_stale",
    });
    // Back in history is a new document with new registrations: new refs; the old one stays stale.
    await page.goBack();
    const again = toolNamed(await toolsOf(url, 4), "add");
    expect(again.tool_ref).not.toBe(before.tool_ref);
    await expect(client.webmcp.invoke(browser.id, { tool_ref: before.tool_ref, input: { a: 1, b: 1 } })).rejects.toMatchObject({
      status: 409,
      code: "tool_ref_stale",
    });
    expect(await client.webmcp.invoke(browser.id, { tool_ref: again.tool_ref, input: { a: 2, b: 3 } })).toMatchObject({
      status: "completed",
      output: { sum: 5 },
    });
    // A reload replaces the document too.
    await page.reload();
    const reloaded = toolNamed(
      (
        await waitForTools(client, browser.id, (tools) => tools.filter(onPage(url)).length === 4 && !tools.some((tool) => tool.tool_ref === again.tool_ref))
      ).filter(onPage(url)),
      "add",
    );
    expect(reloaded.tool_ref).not.toBe(again.tool_ref);
    await expect(client.webmcp.invoke(browser.id, { tool_ref: again.tool_ref, input: { a: 1, b: 1 } })).rejects.toMatchObject({
      status: 409,
      code: "tool_ref_stale",
    });
    expect(await page.evaluate(() => (window as unknown as { calls: { add: number } }).calls.add)).toBe(0);
  });

  it("answers 404 tool_not_found for refs this browser never issued: garbage, well-formed guesses, another browser's", async () => {
    const url = pages.url("/tools");
    await open(url);
    const add = toolNamed(await toolsOf(url, 4), "add");
    for (const garbage of ["garbage", "wmt_AAECAwQFBgcICQoLDA0ODw", `${add.tool_ref}x`]) {
      await expect(client.webmcp.invoke(browser.id, { tool_ref: garbage, input: {} })).rejects.toMatchObject({ status: 404, code: "tool_not_found" });
    }
    const other = await client.browsers.create({ name: "webmcp-other" });
    try {
      await expect(client.webmcp.invoke(other.id, { tool_ref: add.tool_ref, input: { a: 1, b: 1 } })).rejects.toMatchObject({
        status: 404,
        code: "tool_not_found",
      });
      expect((await client.webmcp.listTools(other.id)).tools.filter(onPage(url))).toEqual([]);
    } finally {
      await client.browsers.delete(other.id);
    }
  });
});

describe("invocation", () => {
  it("completes an imperative tool with its output, exactly once", async () => {
    const url = pages.url("/tools");
    const page = await open(url);
    const add = toolNamed(await toolsOf(url, 4), "add");
    const result = await client.webmcp.invoke("webmcp", { tool_ref: add.tool_ref, input: { a: 20, b: 22 }, timeout_sec: 30 });
    expect(result).toMatchObject({ status: "completed", output: { sum: 42 } });
    expect(result.invocation_id).toMatch(/\S/);
    expect(await page.evaluate(() => (window as unknown as { calls: { add: number } }).calls.add)).toBe(1);
  });

  it("reports a tool that throws as error with the exception's text", async () => {
    const url = pages.url("/tools");
    const page = await open(url);
    const boom = toolNamed(await toolsOf(url, 4), "boom");
    const result = await client.webmcp.invoke(browser.id, { tool_ref: boom.tool_ref, input: {} });
    expect(result.status).toBe("error");
    expect(result.error_text).toContain("kaboom: the page failed on purpose");
    expect(result).not.toHaveProperty("output");
    expect(await page.evaluate(() => (window as unknown as { calls: { boom: number } }).calls.boom)).toBe(1);
  });

  it("answers 504 outcome_unknown with the invocation_id when timeout_sec passes; the tool ran once and is not retried", async () => {
    const url = pages.url("/tools");
    const page = await open(url);
    const hang = toolNamed(await toolsOf(url, 4), "hang");
    const error = await client.webmcp.invoke(browser.id, { tool_ref: hang.tool_ref, input: {}, timeout_sec: 1 }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 504, code: "outcome_unknown", innerError: { code: "timeout" } });
    expect((error as { invocationId?: string }).invocationId).toMatch(/\S/);
    expect(await page.evaluate(() => (window as unknown as { calls: { hang: number } }).calls.hang)).toBe(1);
    // The registration lives on: the ref still works.
    expect(named((await client.webmcp.listTools(browser.id)).tools, "hang").map((tool) => tool.tool_ref)).toContain(hang.tool_ref);
  });

  it("answers 504 outcome_unknown when the tab closes while the tool runs", async () => {
    const url = pages.url("/tools");
    const page = await open(url);
    const hang = toolNamed(await toolsOf(url, 4), "hang");
    const pending = client.webmcp.invoke(browser.id, { tool_ref: hang.tool_ref, input: {}, timeout_sec: 20 }).catch((caught: unknown) => caught);
    await page.waitForFunction(() => (window as unknown as { calls: { hang: number } }).calls.hang === 1);
    await page.close();
    const error = await pending;
    expect(error).toMatchObject({ status: 504, code: "outcome_unknown", innerError: { code: "target_closed" } });
    expect((error as { invocationId?: string }).invocationId).toMatch(/\S/);
    await expect(client.webmcp.invoke(browser.id, { tool_ref: hang.tool_ref, input: {} })).rejects.toMatchObject({ status: 409, code: "tool_ref_stale" });
  });

  it("completes a declarative form with toolautosubmit with the value its submit handler responds with", async () => {
    const url = pages.url("/forms");
    const page = await open(url);
    const search = toolNamed(await toolsOf(url, 3), "search");
    expect(search.annotations).toEqual({ autosubmit: true });
    expect(search.input_schema).toMatchObject({ type: "object", properties: { q: { type: "string", description: "What to look for" } } });
    const result = await client.webmcp.invoke(browser.id, { tool_ref: search.tool_ref, input: { q: "lamps" } });
    expect(result).toMatchObject({ status: "completed", output: { results: ["result for lamps"] } });
    expect(await page.evaluate(() => (window as unknown as { searches: number }).searches)).toBe(1);
  });

  it("answers awaiting_submission for a declarative form without toolautosubmit once its fields are filled; the user submits it", async () => {
    const url = pages.url("/forms");
    const page = await open(url);
    const order = toolNamed(await toolsOf(url, 3), "order");
    expect(order.annotations).toEqual({ autosubmit: false });
    const result = await client.webmcp.invoke(browser.id, { tool_ref: order.tool_ref, input: { item: "teapot", size: "L", gift: true } });
    expect(result).toMatchObject({ status: "awaiting_submission", output: { form_populated: true, submitted: false } });
    expect(await page.inputValue("form[toolname=order] [name=item]")).toBe("teapot");
    expect(await page.inputValue("form[toolname=order] [name=size]")).toBe("L");
    expect(await page.isChecked("form[toolname=order] [name=gift]")).toBe(true);
    expect(page.url()).toBe(url);
    await Promise.all([page.waitForURL(/\/forms\/done/), page.click("form[toolname=order] button")]);
    expect(new URL(page.url()).searchParams.get("item")).toBe("teapot");
  });

  it("still returns the result when the invocation navigates the page (a form whose submission leaves it)", async () => {
    const url = pages.url("/forms");
    const page = await open(url);
    const subscribe = toolNamed(await toolsOf(url, 3), "subscribe");
    const result = await client.webmcp.invoke(browser.id, { tool_ref: subscribe.tool_ref, input: { email: "a@example.org" } });
    expect(result.status).toBe("completed");
    await page.waitForURL(/\/forms\/done\?email=/);
    await expect(client.webmcp.invoke(browser.id, { tool_ref: subscribe.tool_ref, input: {} })).rejects.toMatchObject({ status: 409, code: "tool_ref_stale" });
  });

  it("refuses input over 1 MiB serialized and bodies over 1 MiB + 4 KiB with 413 before invoking anything", async () => {
    const url = pages.url("/tools");
    const page = await open(url);
    const add = toolNamed(await toolsOf(url, 4), "add");
    const bigInput = { a: 1, b: 2, pad: "x".repeat(1024 * 1024) };
    await expect(client.webmcp.invoke(browser.id, { tool_ref: add.tool_ref, input: bigInput })).rejects.toMatchObject({
      status: 413,
      code: "payload_too_large",
    });
    const hugeBody = { tool_ref: add.tool_ref, input: { a: 1, b: 2 }, pad: "x".repeat(1024 * 1024 + 8 * 1024) };
    const response = await fetch(`${t.url}/browsers/${browser.id}/webmcp/invoke`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
      body: JSON.stringify(hugeBody),
    });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ code: "payload_too_large" });
    expect(await page.evaluate(() => (window as unknown as { calls: { add: number } }).calls.add)).toBe(0);
    await expect(client.webmcp.invoke(browser.id, { tool_ref: add.tool_ref, input: {}, timeout_sec: 0 })).rejects.toMatchObject({
      status: 400,
      code: "bad_request",
    });
    await expect(client.webmcp.invoke(browser.id, { tool_ref: add.tool_ref, input: {}, timeout_sec: 121 })).rejects.toMatchObject({
      status: 400,
      code: "bad_request",
    });
  });

  it("refuses input the browser cannot carry unchanged with 400 before invoking anything; what it can carry reaches the tool", async () => {
    const url = pages.url("/tools");
    const page = await open(url);
    const add = toolNamed(await toolsOf(url, 4), "add");
    const invoke = (input: string) =>
      fetch(`${t.url}/browsers/${browser.id}/webmcp/invoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
        body: `{"tool_ref":"${add.tool_ref}","input":${input}}`,
      });
    // Chromium answered each of these with "Invalid parameters" (a 500), no answer for 30 s (a 504), or a changed string.
    for (const [input, detail] of [
      ['{"a":1,"b":2,"caf\\u00e9":1}', "non_ascii_property_name"],
      ['{"a":1,"b":2,"x":{"\\ud83d\\ude00":true}}', "non_ascii_property_name"],
      ['{"a":1,"b":2,"s":["ok","\\ud800"]}', "invalid_unicode"],
      [`{"a":1,"b":2,"deep":${'{"d":'.repeat(99)}{}${"}".repeat(99)}}`, "maxDepth"],
      [`{"a":1,"b":2,"deep":${"[".repeat(100_000)}${"]".repeat(100_000)}}`, "maxDepth"],
    ] as const) {
      const response = await invoke(input);
      expect(response.status, detail).toBe(400);
      expect(((await response.json()) as { details: { code: string }[] }).details.map((d) => d.code)).toEqual([detail]);
    }
    expect(await page.evaluate(() => (window as unknown as { calls: { add: number } }).calls.add)).toBe(0);
    // 100 levels, any script in string values, a well-formed pair: all reach the page.
    const response = await invoke(`{"a":20,"b":22,"note":"caf\\u00e9 \\u540d \\ud83d\\ude00","deep":${'{"d":'.repeat(98)}{}${"}".repeat(98)}}`);
    expect(await response.json()).toMatchObject({ status: "completed", output: { sum: 42 } });
    expect(await page.evaluate(() => (window as unknown as { calls: { add: number } }).calls.add)).toBe(1);
  });

  it("runs concurrent invocations of one tool each exactly once", async () => {
    const url = pages.url("/tools");
    const page = await open(url);
    const add = toolNamed(await toolsOf(url, 4), "add");
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => client.webmcp.invoke(browser.id, { tool_ref: add.tool_ref, input: { a: i, b: 100 } })),
    );
    expect(results.map((result) => (result.output as { sum: number }).sum)).toEqual(Array.from({ length: 8 }, (_, i) => i + 100));
    expect(new Set(results.map((result) => result.invocation_id)).size).toBe(8);
    expect(await page.evaluate(() => (window as unknown as { calls: { add: number } }).calls.add)).toBe(8);
  });
});

describe("browser process", () => {
  it("a crash ends an invocation in flight with 504, then WebMCP answers 409 conflict", async () => {
    const fragile = await client.browsers.create({ name: "webmcp-fragile" });
    const own = await drive(fragile.cdp_ws_url);
    const launched = launcher.latest();
    try {
      const url = pages.url("/tools");
      const page = await own.open(url);
      const hang = toolNamed(await waitForTools(client, fragile.id, (tools) => tools.length === 4), "hang");
      const pending = client.webmcp.invoke(fragile.id, { tool_ref: hang.tool_ref, input: {}, timeout_sec: 20 }).catch((caught: unknown) => caught);
      await page.waitForFunction(() => (window as unknown as { calls: { hang: number } }).calls.hang === 1);
      const exited = new Promise((resolve) => launched.onExit(resolve));
      process.kill(launched.pid as number, "SIGKILL");
      await exited;
      expect(await pending).toMatchObject({ status: 504, code: "outcome_unknown" });
      expect((await client.browsers.get(fragile.id)).status).toBe("crashed");
      await expect(client.webmcp.listTools(fragile.id)).rejects.toMatchObject({ status: 409, code: "conflict" });
      await expect(client.webmcp.invoke(fragile.id, { tool_ref: hang.tool_ref, input: {} })).rejects.toMatchObject({ status: 409, code: "conflict" });
    } finally {
      if (own.playwright.isConnected()) await own.disconnect();
      await client.browsers.delete(fragile.id);
    }
  });
});
