import { readFileSync } from "node:fs";
import type { WebMcpTool } from "@browser-service/types";
import { describe, expect, it } from "vitest";
import { AmbiguousToolError, findTools, registrationOrigin, selectTool, type ToolCriteria, ToolNotFoundError, UsageError } from "../../src/index.js";

/** A snapshot recorded from the reference server with Chromium (see test/fixtures/README.md). */
const snapshot = (name: string): WebMcpTool[] =>
  (JSON.parse(readFileSync(new URL(`../fixtures/snapshots/${name}.json`, import.meta.url), "utf8")) as { tools: WebMcpTool[] }).tools;

const tabs = snapshot("tabs");
const identical = snapshot("identical-urls");
const frames = snapshot("frames");
const mixed = snapshot("mixed");
const empty = snapshot("empty");

function ambiguity(tools: WebMcpTool[], criteria: ToolCriteria): AmbiguousToolError {
  try {
    selectTool(tools, criteria);
  } catch (error) {
    if (error instanceof AmbiguousToolError) return error;
    throw error;
  }
  throw new Error(`${JSON.stringify(criteria)} selected one tool`);
}

/** Every candidate's suggested criteria select that candidate, and only it. */
function expectEachSettles(tools: WebMcpTool[], error: AmbiguousToolError): void {
  for (const candidate of error.candidates) {
    expect(candidate.criteria).toBeDefined();
    expect(selectTool(tools, candidate.criteria as ToolCriteria).tool_ref).toBe(candidate.toolRef);
  }
}

describe("selectTool on recorded snapshots", () => {
  it("across tabs: the same name on two pages is ambiguous, and pageUrl settles it", () => {
    const error = ambiguity(tabs, { name: "search" });
    expect(error.code).toBe("ambiguous_tool");
    expect(error.candidates.map((c) => new URL(c.pageUrl).pathname)).toEqual(["/shop", "/blog"]);
    expect(error.settledBy).toEqual(["pageUrl"]);
    expect(error.differingFields).toEqual(["pageUrl", "title", "tabId"]);
    expect(error.message).toContain('2 tools match { name: "search" }. Add pageUrl to choose one:');
    expectEachSettles(tabs, error);
    const blog = tabs.find((tool) => tool.source.page_title === "Blog") as WebMcpTool;
    expect(selectTool(tabs, { name: "search", pageUrl: blog.source.page_url })).toBe(blog);
  });

  it("identical URLs in two tabs and a second window: windowId + tabId settle it", () => {
    const error = ambiguity(identical, { name: "add_to_cart" });
    expect(new Set(error.candidates.map((c) => c.pageUrl)).size).toBe(1);
    expect(error.settledBy).toEqual(["windowId", "tabId"]);
    expect(error.differingFields).toEqual(["windowId", "tabId"]);
    expect(error.message).toMatch(/Add windowId \+ tabId to choose one:\n {2}- windowId \d+, tabId \d+ → \{ name: "add_to_cart", windowId: \d+, tabId: \d+ \}/);
    expectEachSettles(identical, error);
  });

  it("frames: a frame's origin differs from its page's, and origin settles it", () => {
    const [top, frame] = frames as [WebMcpTool, WebMcpTool];
    expect(frame.source.page_url).toBe(top.source.page_url);
    expect(registrationOrigin(frame)).toBe(new URL(frame.source.frame?.url as string).origin);
    expect(registrationOrigin(frame)).not.toBe(registrationOrigin(top));
    const error = ambiguity(frames, { name: "search" });
    expect(error.settledBy).toEqual(["origin"]);
    expect(error.differingFields).toEqual(["origin", "frame"]);
    expectEachSettles(frames, error);
    expect(selectTool(frames, { name: "search", frame: "top" })).toBe(top);
    expect(selectTool(frames, { frame: frame.source.frame?.frame_id as number })).toBe(frame);
    expect(selectTool(frames, { frame: frame.source.frame?.url as string })).toBe(frame);
    expect(selectTool(frames, { frame: registrationOrigin(frame) })).toBe(frame);
    expect(selectTool(frames, { origin: `${registrationOrigin(frame)}/` })).toBe(frame);
    // The page's origin is the top document's, not the frame's.
    expect(selectTool(frames, { origin: new URL(top.source.page_url).origin })).toBe(top);
  });

  it("an empty snapshot: not found, saying why a snapshot can be empty", () => {
    expect(findTools(empty, { name: "search" })).toEqual([]);
    const attempt = () => selectTool(empty, { name: "search" });
    expect(attempt).toThrow(ToolNotFoundError);
    expect(attempt).toThrow(expect.objectContaining({ code: "no_matching_tool", snapshotSize: 0 }));
    expect(attempt).toThrow(/may lack WebMCP support, may not have registered its tools yet, or may use an outdated WebMCP API/);
  });

  it("not found among other tools: lists where that name is registered", () => {
    const forms = mixed.find((tool) => tool.name === "order") as WebMcpTool;
    const attempt = () => selectTool(mixed, { name: "search", pageUrl: forms.source.page_url });
    expect(attempt).toThrow(expect.objectContaining({ code: "no_matching_tool", snapshotSize: 14 }));
    const error = (() => {
      try {
        attempt();
      } catch (caught) {
        return caught as ToolNotFoundError;
      }
      return undefined;
    })();
    expect(error?.sameName.map((s) => `${new URL(s.pageUrl).pathname} ${s.frame === "top" ? "top" : "frame"}`)).toEqual([
      "/shop top",
      "/blog top",
      "/widget-host top",
      "/widget-host frame",
      "/shop top",
    ]);
    expect(() => selectTool(mixed, { name: "no_such_tool" })).toThrow(/The snapshot's tool names:\n {2}- "add_to_cart"/);
  });

  it("no source field tells apart two registrations of one document: toolRef is the way", () => {
    const [top] = frames as [WebMcpTool];
    const twin = { ...top, tool_ref: "wmt_twin" };
    const error = ambiguity([top, twin], { name: "search" });
    expect(error.settledBy).toEqual([]);
    expect(error.candidates.map((c) => c.criteria)).toEqual([undefined, undefined]);
    expect(error.message).toContain("pass one of their tool_refs as toolRef:\n  - windowId");
    expect(error.message).toContain('→ toolRef "wmt_twin"');
  });
});

describe("criteria", () => {
  const shops = mixed.filter((tool) => tool.name === "add_to_cart");
  const [first] = shops as [WebMcpTool];
  const port = new URL(first.source.page_url).port;

  it("pageUrl: exact after normalization, * wildcards, or a RegExp (flags /g and /y do not carry state)", () => {
    expect(findTools(mixed, { pageUrl: first.source.page_url })).toHaveLength(10);
    expect(findTools(mixed, { name: "add_to_cart", pageUrl: `http://127.0.0.1:${port}/sh*` })).toEqual(shops);
    expect(findTools(mixed, { pageUrl: "http://127.0.0.1:*/widget-*" }).map((tool) => tool.source.page_title)).toEqual(["Widget host", "Widget host"]);
    expect(findTools(mixed, { pageUrl: `http://127.0.0.1:${port}/blog#comments` })).toHaveLength(1);
    expect(findTools(mixed, { pageUrl: `HTTP://127.0.0.1:${port}/blog` })).toHaveLength(1);
    const blog = /\/blog$/g;
    expect(findTools(mixed, { pageUrl: blog })).toHaveLength(1);
    expect(findTools(mixed, { pageUrl: blog })).toHaveLength(1);
  });

  it("windowId, tabId and title", () => {
    const windows = [...new Set(mixed.map((tool) => tool.source.window_id))];
    expect(windows).toHaveLength(2);
    expect(
      findTools(mixed, { windowId: windows[1] as number })
        .map((tool) => tool.name)
        .sort(),
    ).toEqual(["add_to_cart", "checkout", "reviews", "search", "wait_for_stock"]);
    expect(findTools(mixed, { tabId: first.source.tab_id })).toHaveLength(5);
    expect(selectTool(mixed, { title: "Order form" }).name).toBe("order");
    expect(findTools(mixed, { title: /^Widget/ })).toHaveLength(2);
  });

  it.each([
    [{ tab_id: 3 }, /Unknown criterion "tab_id"/],
    [{ tabId: "3" }, /tabId must be a non-negative integer/],
    [{ windowId: -1 }, /windowId must be a non-negative integer/],
    [{ origin: "http://localhost:9000/widget" }, /origin must be an origin such as/],
    [{ origin: "localhost" }, /origin must be an origin such as/],
    [{ frame: {} }, /frame must be "top", a frame_id or a frame URL or origin/],
    [{ pageUrl: 5 }, /pageUrl must be a string or a RegExp/],
    [null, /Criteria must be an object/],
  ])("refuses %j with invalid_criteria", (criteria, message) => {
    const attempt = () => findTools(mixed, criteria as ToolCriteria);
    expect(attempt).toThrow(UsageError);
    expect(attempt).toThrow(expect.objectContaining({ code: "invalid_criteria" }));
    expect(attempt).toThrow(message);
  });
});
