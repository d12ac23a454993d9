import { describe, expect, it } from "vitest";
import { maxToolNameLength, sanitizeToolName, ToolNames } from "../../src/tool-names.js";
import { tool } from "../support/tools.js";

const mcpName = /^[A-Za-z0-9_.-]{1,128}$/;

describe("sanitizeToolName", () => {
  it("keeps an MCP-valid name and replaces everything else", () => {
    expect(sanitizeToolName("add_to-cart.v2")).toBe("add_to-cart.v2");
    expect(sanitizeToolName("add to cart/now ✓")).toBe("add_to_cart_now__");
    expect(sanitizeToolName("")).toBe("tool");
    expect(sanitizeToolName("x".repeat(500))).toHaveLength(maxToolNameLength);
  });
});

describe("ToolNames", () => {
  it("gives a name unique in the snapshot to its tool as it is", () => {
    expect(new ToolNames().assign([tool("search", 1), tool("checkout", 1)])).toEqual(["search", "checkout"]);
  });

  it("adds where it lives to a name that repeats: tab, or tab and frame", () => {
    const frame = { id: 4, url: "http://localhost:9001/widget" };
    expect(new ToolNames().assign([tool("search", 1), tool("search", 2), tool("search", 2, { frame })])).toEqual(["search.t1", "search.t2", "search.t2.f4"]);
  });

  it("keeps a name while its registration lives, even when the name starts to repeat", () => {
    const names = new ToolNames();
    const first = tool("search", 1);
    expect(names.assign([first])).toEqual(["search"]);
    expect(names.assign([first, tool("search", 2)])).toEqual(["search", "search.t2"]);
    // Tab 1 closes: tab 2 keeps its suffix while its registration lives.
    const second = tool("search", 2);
    expect(names.assign([second])).toEqual(["search.t2"]);
  });

  it("never hands a name to another registration, even once the first is gone: the newcomer gets a qualified name", () => {
    const names = new ToolNames();
    expect(names.assign([tool("search", 1)])).toEqual(["search"]);
    expect(names.assign([])).toEqual([]);
    // Another tab's tool, alone in the snapshot: under the old name a client holding the old list would call it.
    expect(names.assign([tool("search", 3)])).toEqual(["search.t3"]);
    // Another document in tab 3 (other description), then another again: each its own name.
    expect(names.assign([tool("search", 3, { description: "Search the blog." })])).toEqual(["search.t3.2"]);
    expect(names.assign([tool("search", 3, { description: "Search the forum." })])).toEqual(["search.t3.3"]);
    expect(names.given("search")).toBe(true);
    expect(names.given("search.t9")).toBe(false);
  });

  it("gives a registration's name back to the same tool of the same document (a reload), and only to it", () => {
    const names = new ToolNames();
    expect(names.assign([tool("search", 1), tool("search", 2)])).toEqual(["search.t1", "search.t2"]);
    // New tool_refs, same registrations: same names, whatever the order.
    expect(names.assign([tool("search", 2), tool("search", 1)])).toEqual(["search.t2", "search.t1"]);
    // Gone, then back (a reload that the poll saw in between): the same name again.
    expect(names.assign([])).toEqual([]);
    expect(names.assign([tool("search", 1)])).toEqual(["search.t1"]);
  });

  it.each<[string, Parameters<typeof tool>[2]]>([
    ["another description", { description: "Search, then check out with the saved card." }],
    ["another input schema", { inputSchema: { type: "object", properties: { card: { type: "string" } } } }],
    ["other hints", { annotations: { consequential: true } }],
    ["another page URL on the same origin", { pageUrl: "http://127.0.0.1:9000/other" }],
    ["another origin", { pageUrl: "http://localhost:9001/tab1" }],
    ["a frame", { frame: { id: 4, url: "http://127.0.0.1:9000/frame" } }],
  ])("names the same page name in the same tab with %s as another tool", (_, options) => {
    const names = new ToolNames();
    expect(names.assign([tool("search", 1)])).toEqual(["search"]);
    const [other] = names.assign([tool("search", 1, options)]);
    expect(other).not.toBe("search");
    expect(other).toMatch(/^search\.t1(\.f4)?$/);
  });

  it("keeps the name of a registration whose page URL changes (pushState: same tool_ref), and of a reload at the new URL", () => {
    const names = new ToolNames();
    const before = tool("search", 1, { pageUrl: "http://127.0.0.1:9000/a" });
    expect(names.assign([before])).toEqual(["search"]);
    const moved = { ...before, source: { ...before.source, page_url: "http://127.0.0.1:9000/b" } };
    expect(names.assign([moved])).toEqual(["search"]);
    expect(names.assign([tool("search", 1, { pageUrl: "http://127.0.0.1:9000/b" })])).toEqual(["search"]);
  });

  it("never gives two tools one name, whatever names pages choose", () => {
    const names = new ToolNames();
    const tools = [
      tool("search.t2", 1),
      tool("search", 2),
      tool("search", 3),
      tool("search t2", 1),
      tool("x".repeat(300), 1),
      tool("x".repeat(301), 2),
      tool("", 3),
      tool("\u202e", 3),
    ];
    const assigned = names.assign(tools);
    expect(new Set(assigned).size).toBe(tools.length);
    for (const name of assigned) expect(name).toMatch(mcpName);
    expect(assigned.slice(0, 4)).toEqual(["search.t2", "search.t2.2", "search.t3", "search_t2"]);
  });

  it("gives at most maxNames names: a page that churns registrations gets no more, and no name given is given again", () => {
    const names = new ToolNames(3);
    expect(names.assign([tool("a", 1), tool("b", 1)])).toEqual(["a", "b"]);
    expect(names.assign([tool("c", 1)])).toEqual(["c"]);
    // Names ran out: new registrations get none, old names name nothing new, live ones keep theirs.
    const kept = tool("c", 1);
    expect(names.assign([kept, tool("a", 2), tool("d", 1)])).toEqual(["c", undefined, undefined]);
    expect(names.given("a.t2")).toBe(false);
    expect(names.given("d")).toBe(false);
  });
});
