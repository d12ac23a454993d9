import type { BrowserServiceClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import { type Browser, limits, type WebMcpTool, type WebMcpToolList } from "@browser-service/types";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "./support/test-server.js";
import { type DrivenBrowser, drive, omittedCount } from "./support/webmcp-driver.js";

// The browser-wide caps of the spec's WebMcpToolList, each reached with real pages.
const { maxBytes: RESPONSE_BYTES, tools: TOOL_CAPS } = limits.schemas.WebMcpToolList;

/** Registers `count` tools named `<prefix><i>` (prefix from the URL's `prefix`), each with the description and input schema the URL asks for. */
const REGISTERING = `<!doctype html><title>caps</title><script>
  const query = new URLSearchParams(location.search);
  const prefix = query.get("prefix");
  const description = "D".repeat(Number(query.get("description") ?? 1));
  const inputSchema = { type: "object", description: "S".repeat(Number(query.get("schema") ?? 1)) };
  for (let i = 0; i < Number(query.get("count")); i++) document.modelContext.registerTool({ name: prefix + i, description, inputSchema, execute: async () => ({}) });
</script>`;

let pages: PageServer;
let client: BrowserServiceClient;
let browser: Browser;
let driven: DrivenBrowser;
const opened: Page[] = [];

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/registering", REGISTERING);
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages?.close();
});

const t = useTestServer();

beforeAll(async () => {
  client = t.client();
  browser = await client.browsers.create({ name: "caps" });
  driven = await drive(browser.cdp_ws_url);
});

afterEach(async () => {
  for (const page of opened.splice(0)) await page.close();
  await snapshotWhen((list) => list.tools.length === 0 && list.omitted === undefined);
});

afterAll(async () => {
  await driven?.disconnect();
});

async function open(query: Record<string, string | number>): Promise<void> {
  const search = new URLSearchParams(Object.entries(query).map(([key, value]) => [key, String(value)]));
  opened.push(await driven.open(pages.url(`/registering?${search}`)));
}

/** The snapshot, raw: its size in bytes and the list. */
async function snapshot(): Promise<{ bytes: number; list: WebMcpToolList }> {
  const response = await fetch(`${t.url}/browsers/${browser.id}/webmcp/tools`, { headers: { authorization: `Bearer ${t.orgKey}` } });
  const body = Buffer.from(await response.arrayBuffer());
  return { bytes: body.length, list: JSON.parse(body.toString("utf8")) as WebMcpToolList };
}

async function snapshotWhen(ready: (list: WebMcpToolList) => boolean): Promise<{ bytes: number; list: WebMcpToolList }> {
  let last = await snapshot();
  for (let attempt = 0; attempt < 600 && !ready(last.list); attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await snapshot();
  }
  if (!ready(last.list))
    throw new Error(`The snapshot never reached the expected state: ${last.list.tools.length} tools, omitted ${JSON.stringify(last.list.omitted)}`);
  return last;
}

/** A registration's definition as the spec measures it: name, description, input_schema and annotations as one object, serialized. */
const definitionBytes = (tool: Pick<WebMcpTool, "name" | "description" | "input_schema" | "annotations">) =>
  Buffer.byteLength(
    JSON.stringify({
      name: tool.name,
      description: tool.description,
      input_schema: tool.input_schema,
      ...(tool.annotations ? { annotations: tool.annotations } : {}),
    }),
  );

describe("the browser-wide caps of a tool snapshot", () => {
  it("keeps 5,000 registrations of one browser (maxItems) and counts the rest as browser_limit", async () => {
    // Six tabs of 1,000: each within its document's and its tab's cap, the browser's passed by the sixth.
    for (let tab = 0; tab < 6; tab++) await open({ prefix: `t${tab}_`, count: 1000 });
    const { list } = await snapshotWhen((each) => each.tools.length + omittedCount(each, "browser_limit") === 6000);
    expect(TOOL_CAPS.maxItems).toBe(5000);
    expect(list.tools).toHaveLength(5000);
    expect(list.omitted).toEqual([{ reason: "browser_limit", count: 1000 }]);
    // The tabs registered one after the other: the last one's are those left out.
    expect(list.tools.some((tool) => tool.name.startsWith("t5_"))).toBe(false);
  }, 180_000);

  it("keeps 24 MiB of tool definitions of one browser (x-max-definition-bytes) and counts the rest as browser_limit", async () => {
    // 400 tools of about 68 KB each (an 8 KiB description and a 60 KB schema): about 27 MB.
    const count = 400;
    await open({ prefix: "b", count, description: 8192, schema: 60_000 });
    const { list } = await snapshotWhen((each) => each.tools.length + omittedCount(each, "browser_limit") === count);
    const kept = list.tools.length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(count);
    expect(list.omitted).toEqual([{ reason: "browser_limit", count: count - kept }]);
    // The first ones kept, as many as fit: one more would pass the cap.
    expect(list.tools.map((tool) => tool.name)).toEqual(Array.from({ length: kept }, (_, i) => `b${i}`));
    const keptBytes = list.tools.reduce((sum, tool) => sum + definitionBytes(tool), 0);
    const next = { ...(list.tools[0] as WebMcpTool), name: `b${kept}` };
    expect(keptBytes).toBeLessThanOrEqual(TOOL_CAPS.maxDefinitionBytes);
    expect(keptBytes + definitionBytes(next)).toBeGreaterThan(TOOL_CAPS.maxDefinitionBytes);
  }, 180_000);

  it("keeps a GET's body within 32 MiB (x-max-bytes) and counts the registrations left out of it as response_limit", async () => {
    // Definitions alone cannot pass the body's cap: at most 24 MiB of them plus 5,000
    // sources of a few hundred bytes. The sources can: each listed tool repeats its
    // tab's URL (up to 8 KiB), so 5,000 tools of tabs with 8 KiB URLs make about 42 MB.
    const pad = "p".repeat(8192);
    for (let tab = 0; tab < 5; tab++) await open({ prefix: `u${tab}_`, count: 1000, pad });
    const { bytes, list } = await snapshotWhen((each) => each.tools.length + omittedCount(each, "response_limit") === 5000);
    const listed = list.tools.length;
    expect(listed).toBeGreaterThan(0);
    expect(list.omitted).toEqual([{ reason: "response_limit", count: 5000 - listed }]);
    expect(bytes).toBeLessThanOrEqual(RESPONSE_BYTES);
    // Full but for less than two more tools.
    const partBytes = Math.max(...list.tools.map((tool) => Buffer.byteLength(JSON.stringify(tool)) + 1));
    expect(bytes + 2 * partBytes).toBeGreaterThan(RESPONSE_BYTES);
  }, 180_000);
});
