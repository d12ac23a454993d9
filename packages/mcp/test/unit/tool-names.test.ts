import { describe, expect, it } from "vitest";
import { maxToolNameLength, sanitizeToolName, ToolNames } from "../../src/index.js";
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
    // A slot that went away frees its name; a new registration that is unique gets the bare name.
    expect(names.assign([])).toEqual([]);
    expect(names.assign([tool("search", 3)])).toEqual(["search"]);
  });

  it("keeps the name when a page registers the same tool again in the same place (a reload)", () => {
    const names = new ToolNames();
    expect(names.assign([tool("search", 1), tool("search", 2)])).toEqual(["search.t1", "search.t2"]);
    // New tool_refs, same slots: same names.
    expect(names.assign([tool("search", 2), tool("search", 1)])).toEqual(["search.t2", "search.t1"]);
  });

  it("names a tool of another origin in the same tab afresh: another site's tool is another tool", () => {
    const sameOrigin = new ToolNames();
    sameOrigin.assign([tool("search", 1), tool("search", 2)]);
    expect(sameOrigin.assign([tool("search", 1, { pageUrl: "http://127.0.0.1:9000/next" })])).toEqual(["search.t1"]);
    const otherOrigin = new ToolNames();
    otherOrigin.assign([tool("search", 1), tool("search", 2)]);
    expect(otherOrigin.assign([tool("search", 1, { pageUrl: "http://localhost:9001/other" })])).toEqual(["search"]);
  });

  it("never gives two tools one name, whatever names pages choose", () => {
    const names = new ToolNames();
    const tools = [tool("search.t2", 1), tool("search", 2), tool("search", 3), tool("search t2", 1), tool("x".repeat(300), 1), tool("x".repeat(301), 2), tool("", 3), tool("\u202e", 3)];
    const assigned = names.assign(tools);
    expect(new Set(assigned).size).toBe(tools.length);
    for (const name of assigned) expect(name).toMatch(mcpName);
    expect(assigned.slice(0, 4)).toEqual(["search.t2", "search.t2.2", "search.t3", "search_t2"]);
  });
});
