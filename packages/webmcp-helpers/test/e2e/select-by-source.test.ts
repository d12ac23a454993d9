import type { WebMcpTool } from "@browser-service/types";
import { describe, expect, it } from "vitest";
import { AmbiguousToolError, type CompletedResult, invokeTool, listTools, selectTool, type ToolCriteria } from "../../src/index.js";
import { useHarness, waitForPage, waitForTools } from "../support/harness.js";

const h = useHarness();

function ambiguity(tools: WebMcpTool[], criteria: ToolCriteria): AmbiguousToolError {
  try {
    selectTool(tools, criteria);
  } catch (error) {
    if (error instanceof AmbiguousToolError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(criteria)} selected one tool`);
}

describe("selecting by source against the reference server", () => {
  it("tells apart one name in two pages, a cross-origin frame and two tabs of one URL, and invokes the one chosen", async () => {
    const shop = h.pages.url("/shop");
    const first = await h.open(shop);
    const second = await h.open(shop);
    await h.open(h.pages.url("/blog"));
    await h.open(h.pages.url("/widget-host"));
    await first.evaluate(() => ((window as unknown as { tabMarker: string }).tabMarker = "first"));
    await second.evaluate(() => ((window as unknown as { tabMarker: string }).tabMarker = "second"));
    await waitForTools(h.client, h.browser, (tools) => tools.length === 13);

    const tools = await listTools(h.client, h.browser);
    const searches = ambiguity(tools, { name: "search" });
    expect(searches.candidates).toHaveLength(5);
    expect(searches.candidates.filter((c) => c.origin === h.pages.origin("localhost")).map((c) => c.frame)).toEqual([
      { frameId: expect.any(Number), url: h.pages.url("/widget", "localhost") },
    ]);

    // The frame's origin is not its page's: asking for the localhost origin reaches the frame.
    const widget = (await invokeTool(h.client, h.browser, {
      select: { name: "search", origin: h.pages.origin("localhost") },
      input: { q: "lamp" },
    })) as CompletedResult;
    expect(widget).toMatchObject({ status: "completed", output: { where: "widget", origin: h.pages.origin("localhost") }, rediscovered: false });
    expect(widget.tool.source.frame?.url).toBe(h.pages.url("/widget", "localhost"));
    const blog = await invokeTool(h.client, h.browser, { select: { name: "search", pageUrl: "http://127.0.0.1:*/blog" }, input: { q: "lamp" } });
    expect(blog).toMatchObject({ status: "completed", output: { where: "blog" } });
    expect([h.pages.runs("widget.search"), h.pages.runs("blog.search"), h.pages.runs("host.search"), h.pages.runs("shop.search")]).toEqual([1, 1, 0, 0]);

    // Identical URLs: the error says windowId + tabId, and each suggestion reaches its own tab.
    const carts = ambiguity(tools, { name: "add_to_cart", pageUrl: shop });
    expect(carts.settledBy).toEqual(["windowId", "tabId"]);
    const markers = [];
    for (const candidate of carts.candidates) {
      const result = await invokeTool(h.client, h.browser, { select: candidate.criteria as ToolCriteria, input: { sku: "AB-123" } });
      markers.push((result as CompletedResult).output);
    }
    expect(markers.map((output) => (output as { tab: string }).tab).sort()).toEqual(["first", "second"]);
    expect(h.pages.runs("add_to_cart")).toBe(2);
  });

  it("refuses to guess: an ambiguous selection invokes nothing", async () => {
    const shop = h.pages.url("/shop");
    await h.open(shop);
    await h.open(shop);
    await waitForPage(h, shop, 10);
    await expect(invokeTool(h.client, h.browser, { select: { name: "add_to_cart" }, input: { sku: "AB-123" } })).rejects.toThrow(AmbiguousToolError);
    expect(h.pages.runs("add_to_cart")).toBe(0);
  });

  it("lists a fresh snapshot on every call: a closed tab's tools are gone at once", async () => {
    const blog = h.pages.url("/blog");
    const tab = await h.open(blog);
    await waitForPage(h, blog, 1);
    expect((await listTools(h.client, h.browser)).map((tool) => tool.name)).toEqual(["search"]);
    await tab.close();
    await waitForTools(h.client, h.browser, (tools) => tools.length === 0);
    expect(await listTools(h.client, h.browser)).toEqual([]);
  });
});
