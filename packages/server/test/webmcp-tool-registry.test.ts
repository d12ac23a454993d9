import { describe, expect, it } from "vitest";
import type { PageFrameTree, TargetInfo } from "../src/webmcp/cdp-protocol.js";
import { definitionBytes, type OmissionReason, PAGE_DATA_LIMITS, type ToolDefinition, toToolDefinition } from "../src/webmcp/page-data.js";
import { SourceNumbers } from "../src/webmcp/source-numbers.js";
import { ToolRefTable } from "../src/webmcp/tool-refs.js";
import { type Registration, ToolRegistry } from "../src/webmcp/tool-registry.js";

// The browser-wide registry of WebMCP tools (ToolRegistry) fed the DevTools events it is
// built from, with no browser: which registrations it lists, which refs stay live, what
// it counts as omitted, and when its version moves. The HTTP tests reach the same rules
// through real pages; here each rule is one event away.

function setUp() {
  const refs = new ToolRefTable<Registration>();
  const numbers = new SourceNumbers();
  const warnings: object[] = [];
  const registry = new ToolRegistry(refs, numbers, { warn: (details) => void warnings.push(details) });
  const gone: [string, string | undefined][] = [];
  registry.onGone((sessionId, frameId) => gone.push([sessionId, frameId]));
  return { refs, numbers, registry, warnings, gone };
}

const target = (targetId: string, url = `https://${targetId.toLowerCase()}.test/`, type = "page"): TargetInfo => ({ targetId, type, title: "", url });
const tool = (name: string, frameId: string, fields: object = {}) => ({ name, description: `${name}.`, frameId, ...fields });
/** `count` tools named `<prefix><i>` in one frame. */
const tools = (prefix: string, frameId: string, count: number) => Array.from({ length: count }, (_, i) => tool(`${prefix}${i}`, frameId));

/** What a listing shows of each registration: tab number, frame, name. */
const listed = (registry: ToolRegistry): string[] => registry.registrations().map((each) => `${each.session.tab.tabNumber} ${each.frameId} ${each.tool.name}`);
const omitted = (registry: ToolRegistry): Partial<Record<OmissionReason, number>> => Object.fromEntries(registry.omissions());
const stateOf = (refs: ToolRefTable<Registration>, ref: string) => refs.lookup(ref).state;

/** A tab whose main frame (id = its target id) holds one same-process child frame, `<id>-child`. */
function openTab(registry: ToolRegistry, sessionId: string, targetId: string): void {
  registry.addPageSession(sessionId, target(targetId), Promise.resolve(1));
  const tree: PageFrameTree = {
    frame: { id: targetId, url: `https://${targetId.toLowerCase()}.test/` },
    childFrames: [{ frame: { id: `${targetId}-child`, parentId: targetId, url: "https://child.test/page#part" } }],
  };
  registry.applyFrameTree(sessionId, tree);
}

describe("registrations", () => {
  it("lists every registration by tab and then in order of arrival, each named by a live ref of its own", () => {
    const { refs, registry } = setUp();
    openTab(registry, "S1", "T1");
    openTab(registry, "S2", "T2");
    // Tab 1's out-of-process frame is followed after tab 2.
    registry.addFrameSession("S1", "S1-oopif", target("OOPIF", "https://oopif.test/", "iframe"));
    registry.toolsAdded("S2", [tool("b1", "T2")]);
    registry.toolsAdded("S1", [tool("a1", "T1"), tool("a2", "T1-child")]);
    registry.toolsAdded("S1-oopif", [tool("x", "OOPIF")]);
    registry.toolsAdded("S2", [tool("b2", "T2")]);
    registry.toolsAdded("S1", [tool("a3", "T1")]);
    expect(listed(registry)).toEqual(["1 T1 a1", "1 T1-child a2", "1 OOPIF x", "1 T1 a3", "2 T2 b1", "2 T2 b2"]);
    const registrations = registry.registrations();
    expect(new Set(registrations.map((each) => each.ref)).size).toBe(6);
    for (const each of registrations) expect(refs.lookup(each.ref)).toEqual({ state: "live", target: each });
  });

  it("tells a tab's top-level registrations from a frame's, and gives each frame's URL without its fragment", () => {
    const { registry } = setUp();
    openTab(registry, "S1", "T1");
    registry.toolsAdded("S1", [tool("top", "T1"), tool("inner", "T1-child")]);
    const [top, inner] = registry.registrations() as [Registration, Registration];
    expect([registry.isTopLevel(top), registry.isTopLevel(inner)]).toEqual([true, false]);
    expect([registry.frameUrl(top), registry.frameUrl(inner)]).toEqual(["https://t1.test/", "https://child.test/page"]);
  });

  it("learns frames from a frame tree, except what events said since: an out-of-process frame's URL after a redirect; a newer navigation", () => {
    const { registry } = setUp();
    registry.addPageSession("S1", target("T1"), Promise.resolve(1));
    registry.addFrameSession("S1", "S1-oopif", target("OOPIF", "https://oopif.test/start", "iframe"));
    registry.frameNavigated("S1", { id: "T1-child", parentId: "T1", url: "https://child.test/newer" });
    registry.applyFrameTree("S1", {
      frame: { id: "T1", url: "https://t1.test/" },
      childFrames: [{ frame: { id: "T1-child", parentId: "T1", url: "https://child.test/older" } }],
    });
    registry.applyFrameTree("S1-oopif", { frame: { id: "OOPIF", parentId: "T1", url: "https://oopif.test/redirected" } });
    registry.toolsAdded("S1", [tool("inner", "T1-child")]);
    registry.toolsAdded("S1-oopif", [tool("remote", "OOPIF")]);
    const [inner, remote] = registry.registrations() as [Registration, Registration];
    expect([registry.frameUrl(inner), registry.frameUrl(remote)]).toEqual(["https://child.test/newer", "https://oopif.test/redirected"]);
    expect([registry.isTopLevel(inner), registry.isTopLevel(remote)]).toEqual([false, false]);
  });

  it("keeps one registration per name and document: the same name again replaces it (its old ref goes stale); another frame's is another", () => {
    const { refs, registry } = setUp();
    openTab(registry, "S1", "T1");
    registry.toolsAdded("S1", [tool("search", "T1"), tool("search", "T1-child")]);
    const [first] = registry.registrations() as [Registration];
    registry.toolsAdded("S1", [tool("search", "T1", { description: "Again." })]);
    expect(listed(registry)).toEqual(["1 T1-child search", "1 T1 search"]);
    expect(stateOf(refs, first.ref)).toBe("stale");
    expect(registry.isRegistered(first)).toBe(false);
    expect(registry.registrations().find((each) => each.frameId === "T1")?.tool.description).toBe("Again.");
  });

  it("ends a registration on toolsRemoved or forget: it leaves the listing and its ref answers stale", () => {
    const { refs, registry } = setUp();
    openTab(registry, "S1", "T1");
    registry.toolsAdded("S1", [tool("a", "T1"), tool("b", "T1"), tool("a", "T1-child")]);
    const [a, b, childA] = registry.registrations() as [Registration, Registration, Registration];
    // Only the named frame's registration ends; entries that name nothing change nothing.
    registry.toolsRemoved("S1", [{ name: "a", frameId: "T1" }, { name: "nope", frameId: "T1" }, { name: 5, frameId: "T1" }, null]);
    registry.toolsRemoved("S1", "not a list");
    expect(listed(registry)).toEqual(["1 T1 b", "1 T1-child a"]);
    expect([stateOf(refs, a.ref), stateOf(refs, b.ref), stateOf(refs, childA.ref)]).toEqual(["stale", "live", "live"]);
    registry.forget(b);
    expect(listed(registry)).toEqual(["1 T1-child a"]);
    expect(stateOf(refs, b.ref)).toBe("stale");
  });

  it("ignores tools without a frame id and events of sessions it does not know", () => {
    const { registry } = setUp();
    openTab(registry, "S1", "T1");
    registry.toolsAdded("S1", [
      { name: "no-frame", description: "" },
      { name: "bad-frame", frameId: 7 },
    ]);
    registry.toolsAdded("S-unknown", [tool("a", "T1")]);
    registry.toolsAdded("S1", { not: "a list" });
    expect(listed(registry)).toEqual([]);
    expect(omitted(registry)).toEqual({});
  });

  it("counts a tool it cannot list as omitted (invalid), and logs each reason once per browser", () => {
    const { registry, warnings } = setUp();
    openTab(registry, "S1", "T1");
    registry.toolsAdded("S1", [tool("", "T1"), tool("n".repeat(PAGE_DATA_LIMITS.toolNameChars + 1), "T1"), tool("ok", "T1")]);
    expect(listed(registry)).toEqual(["1 T1 ok"]);
    expect(omitted(registry)).toEqual({ invalid: 2 });
    expect(warnings).toEqual([expect.objectContaining({ frameId: "T1" })]);
  });
});

describe("what ends a document's registrations", () => {
  it("a navigation ends the frame's and its descendants' registrations and omissions; other frames keep theirs", () => {
    const { refs, registry } = setUp();
    openTab(registry, "S1", "T1");
    openTab(registry, "S2", "T2");
    registry.toolsAdded("S1", [tool("top", "T1"), tool("inner", "T1-child"), tool("", "T1-child")]);
    registry.toolsAdded("S2", [tool("other", "T2")]);
    const refsBefore = registry.registrations().map((each) => each.ref);

    registry.frameNavigated("S1", { id: "T1-child", parentId: "T1", url: "https://child.test/next" });
    expect(listed(registry)).toEqual(["1 T1 top", "2 T2 other"]);
    expect(omitted(registry)).toEqual({});

    // The main frame's navigation takes the whole tab's documents, its child frames with them.
    registry.toolsAdded("S1", [tool("inner2", "T1-child")]);
    registry.frameNavigated("S1", { id: "T1", url: "https://t1.test/next#x" });
    expect(listed(registry)).toEqual(["2 T2 other"]);
    expect(refsBefore.map((ref) => stateOf(refs, ref))).toEqual(["stale", "stale", "live"]);
    registry.toolsAdded("S1", [tool("again", "T1")]);
    const [again] = registry.registrations() as [Registration];
    expect(registry.frameUrl(again)).toBe("https://t1.test/next");
    expect(again.session.tab.url).toBe("https://t1.test/next");
  });

  it("a same-document navigation keeps the registrations and changes only the URL", () => {
    const { refs, registry } = setUp();
    openTab(registry, "S1", "T1");
    registry.toolsAdded("S1", [tool("top", "T1")]);
    const [top] = registry.registrations() as [Registration];
    registry.navigatedWithinDocument("S1", "T1", "https://t1.test/route#anchor");
    expect(registry.registrations()).toEqual([top]);
    expect(stateOf(refs, top.ref)).toBe("live");
    expect(registry.frameUrl(top)).toBe("https://t1.test/route");
    expect(top.session.tab.url).toBe("https://t1.test/route");
  });

  it("a removed frame takes its registrations and is reported gone; a frame swapped to another process is not gone", () => {
    const { refs, registry, gone } = setUp();
    openTab(registry, "S1", "T1");
    registry.toolsAdded("S1", [tool("inner", "T1-child")]);
    const [inner] = registry.registrations() as [Registration];
    registry.frameDetached("S1", "T1-child", "swap");
    expect(listed(registry)).toEqual([]);
    expect(stateOf(refs, inner.ref)).toBe("stale");
    expect(gone).toEqual([]);

    openTab(registry, "S2", "T2");
    registry.toolsAdded("S2", [tool("inner", "T2-child")]);
    registry.frameDetached("S2", "T2-child", "remove");
    expect(listed(registry)).toEqual([]);
    expect(gone).toEqual([["S2", "T2-child"]]);
  });

  it("a renderer crash ends every document of the session and of the out-of-process frames below it; the sessions stay for what registers next", () => {
    const { refs, registry, gone } = setUp();
    openTab(registry, "S1", "T1");
    registry.addFrameSession("S1", "S1-oopif", target("OOPIF", "https://oopif.test/", "iframe"));
    registry.toolsAdded("S1", [tool("top", "T1")]);
    registry.toolsAdded("S1-oopif", [tool("remote", "OOPIF")]);
    registry.messageDropped("S1");
    const before = registry.registrations();
    expect(listed(registry)).toEqual(["1 T1 top", "1 OOPIF remote"]);

    registry.documentsLost("S1");
    expect(listed(registry)).toEqual([]);
    expect(omitted(registry)).toEqual({});
    expect(before.map((each) => stateOf(refs, each.ref))).toEqual(["stale", "stale"]);
    expect(gone).toEqual([
      ["S1", undefined],
      ["S1-oopif", undefined],
    ]);
    registry.toolsAdded("S1-oopif", [tool("reloaded", "OOPIF")]);
    expect(listed(registry)).toEqual(["1 OOPIF reloaded"]);
  });

  it("a closed tab takes its frame sessions along, and its tab number is never handed out again", () => {
    const { refs, registry, gone, numbers } = setUp();
    openTab(registry, "S1", "T1");
    registry.addFrameSession("S1", "S1-oopif", target("OOPIF", "https://oopif.test/", "iframe"));
    registry.toolsAdded("S1-oopif", [tool("remote", "OOPIF")]);
    const [remote] = registry.registrations() as [Registration];
    const frameNumber = numbers.frame("OOPIF");

    registry.removeSession("S1");
    expect(listed(registry)).toEqual([]);
    expect(stateOf(refs, remote.ref)).toBe("stale");
    expect(gone).toEqual([
      ["S1-oopif", undefined],
      ["S1", undefined],
    ]);
    registry.toolsAdded("S1-oopif", [tool("late", "OOPIF")]);
    expect(registry.addFrameSession("S1", "S1-late", target("LATE", "https://late.test/", "iframe"))).toBeUndefined();
    expect(listed(registry)).toEqual([]);
    // A tab that opens later, even one reusing the target id, is a new tab, with new frames.
    expect(registry.addPageSession("S3", target("T1"), Promise.resolve(1)).tab.tabNumber).toBe(2);
    expect(numbers.frame("OOPIF")).not.toBe(frameNumber);
  });

  it("an out-of-process frame leaving its session (back into its parent's process) ends its registrations; the frame keeps its number, the tab goes on", () => {
    const { registry, numbers } = setUp();
    const tab = registry.addPageSession("S1", target("T1"), Promise.resolve(1)).tab;
    registry.addFrameSession("S1", "S1-oopif", target("OOPIF", "https://oopif.test/", "iframe"));
    registry.toolsAdded("S1-oopif", [tool("remote", "OOPIF")]);
    const frameNumber = numbers.frame("OOPIF");
    registry.removeSession("S1-oopif");
    expect(listed(registry)).toEqual([]);
    expect(numbers.frame("OOPIF")).toBe(frameNumber);
    registry.toolsAdded("S1", [tool("top", "T1")]);
    expect(listed(registry)).toEqual([`${tab.tabNumber} T1 top`]);
  });

  it("clearing (the connection closed) ends everything but keeps tab numbers for the same tabs", () => {
    const { refs, registry } = setUp();
    openTab(registry, "S1", "T1");
    openTab(registry, "S2", "T2");
    registry.toolsAdded("S1", [tool("a", "T1")]);
    registry.toolsAdded("S2", [tool("b", "T2")]);
    const before = registry.registrations();
    registry.clear();
    expect(listed(registry)).toEqual([]);
    expect(before.map((each) => stateOf(refs, each.ref))).toEqual(["stale", "stale"]);
    expect(registry.addPageSession("S9", target("T2"), Promise.resolve(1)).tab.tabNumber).toBe(2);
  });
});

describe("caps and omitted counts", () => {
  it("keeps registrationsPerDocument per document, then counts document_limit; another frame of the tab still registers", () => {
    const { registry } = setUp();
    openTab(registry, "S1", "T1");
    const cap = PAGE_DATA_LIMITS.registrationsPerDocument;
    registry.toolsAdded("S1", tools("t", "T1", cap + 3));
    registry.toolsAdded("S1", [tool("inner", "T1-child")]);
    expect(registry.registrations().filter((each) => each.frameId === "T1")).toHaveLength(cap);
    expect(listed(registry)).toContain("1 T1-child inner");
    expect(omitted(registry)).toEqual({ document_limit: 3 });
  });

  it("keeps registrationsPerTab per tab over all its frames, then counts tab_limit; another tab still registers", () => {
    const { registry } = setUp();
    openTab(registry, "S1", "T1");
    openTab(registry, "S2", "T2");
    const perTab = PAGE_DATA_LIMITS.registrationsPerTab;
    const perDocument = PAGE_DATA_LIMITS.registrationsPerDocument;
    // Spread over three documents so that no document's own cap is reached first.
    registry.toolsAdded("S1", tools("t", "T1", perDocument));
    registry.toolsAdded("S1", tools("c", "T1-child", perTab - perDocument - 1));
    registry.toolsAdded("S1", tools("o", "T1-other", 3));
    registry.toolsAdded("S2", [tool("other", "T2")]);
    expect(registry.registrations().filter((each) => each.session.sessionId === "S1")).toHaveLength(perTab);
    expect(listed(registry)).toContain("2 T2 other");
    expect(omitted(registry)).toEqual({ tab_limit: 2 });
  });

  it("keeps registrationsPerBrowser over all tabs, then counts browser_limit", () => {
    const { registry } = setUp();
    const perBrowser = PAGE_DATA_LIMITS.registrationsPerBrowser;
    const perDocument = PAGE_DATA_LIMITS.registrationsPerDocument;
    // One document per tab, each within the document's and the tab's caps.
    const tabs = Math.ceil(perBrowser / perDocument) + 1;
    for (let i = 0; i < tabs; i++) {
      registry.addPageSession(`S${i}`, target(`T${i}`), Promise.resolve(1));
      registry.toolsAdded(`S${i}`, tools("t", `T${i}`, perDocument));
    }
    expect(registry.registrations()).toHaveLength(perBrowser);
    expect(omitted(registry)).toEqual({ browser_limit: tabs * perDocument - perBrowser });
  });

  it("keeps definitionBytesPerBrowser of definitions, the cap itself included, then counts browser_limit; a removal makes room again", () => {
    const { registry } = setUp();
    // Tools of exactly 64 KiB of definition each (names of one length, a padded schema), so that they fill the cap exactly.
    const perTool = 64 * 1024;
    const fit = PAGE_DATA_LIMITS.definitionBytesPerBrowser / perTool;
    expect(Number.isInteger(fit)).toBe(true);
    const bare = definitionBytes((toToolDefinition(tool("t000", "X", { inputSchema: { type: "object", description: "" } })) as { tool: ToolDefinition }).tool);
    const schema = { type: "object", description: "s".repeat(perTool - bare) };
    // Tabs of one document each, within the count caps, so that bytes are the only cap reached.
    const perTab = 300;
    const total = fit + 5;
    for (let start = 0, i = 0; start < total; start += perTab, i++) {
      registry.addPageSession(`S${i}`, target(`T${i}`), Promise.resolve(1));
      const count = Math.min(perTab, total - start);
      registry.toolsAdded(
        `S${i}`,
        Array.from({ length: count }, (_, k) => tool(`t${String(start + k).padStart(3, "0")}`, `T${i}`, { inputSchema: schema })),
      );
    }
    const kept = registry.registrations();
    expect(kept.reduce((sum, each) => sum + definitionBytes(each.tool), 0)).toBe(PAGE_DATA_LIMITS.definitionBytesPerBrowser);
    expect(kept).toHaveLength(fit);
    expect(omitted(registry)).toEqual({ browser_limit: 5 });
    registry.forget(kept[0] as Registration);
    registry.toolsAdded("S0", [tool("late", "T0", { inputSchema: schema })]);
    expect(registry.registrations()).toHaveLength(fit);
    expect(listed(registry)).toContain("1 T0 late");
  });

  it("a registration that ends makes room in its document; removing an omitted one takes one from the count", () => {
    const { registry } = setUp();
    openTab(registry, "S1", "T1");
    const cap = PAGE_DATA_LIMITS.registrationsPerDocument;
    registry.toolsAdded("S1", tools("t", "T1", cap + 2));
    expect(omitted(registry)).toEqual({ document_limit: 2 });
    // The page unregisters one tool that was listed and one that was not.
    registry.toolsRemoved("S1", [
      { name: "t0", frameId: "T1" },
      { name: `t${cap}`, frameId: "T1" },
    ]);
    expect(omitted(registry)).toEqual({ document_limit: 1 });
    registry.toolsAdded("S1", [tool("late", "T1")]);
    expect(listed(registry)).toContain("1 T1 late");
    expect(omitted(registry)).toEqual({ document_limit: 1 });
  });

  it("counts each DevTools message too large to read as one message_too_large until the session's documents go", () => {
    const { registry, warnings } = setUp();
    openTab(registry, "S1", "T1");
    openTab(registry, "S2", "T2");
    registry.messageDropped("S1");
    registry.messageDropped("S1");
    registry.messageDropped("S2");
    registry.messageDropped("S-unknown");
    expect(omitted(registry)).toEqual({ message_too_large: 3 });
    expect(warnings).toHaveLength(1);
    registry.documentsLost("S1");
    expect(omitted(registry)).toEqual({ message_too_large: 1 });
    registry.removeSession("S2");
    expect(omitted(registry)).toEqual({});
  });

  it("forgets a message_too_large once the session's top document navigates, not when one of its child frames does", () => {
    const { registry } = setUp();
    openTab(registry, "S1", "T1");
    registry.messageDropped("S1");
    registry.frameNavigated("S1", { id: "T1-child", parentId: "T1", url: "https://child.test/next" });
    expect(omitted(registry)).toEqual({ message_too_large: 1 });
    registry.frameNavigated("S1", { id: "T1", url: "https://t1.test/next" });
    expect(omitted(registry)).toEqual({});
  });
});

describe("the version a listing is built at", () => {
  it("moves with every event that may change a listing, and not with reads", async () => {
    const { registry } = setUp();
    const versions = [registry.version];
    const moved = (): boolean => {
      if (registry.version === versions.at(-1)) return false;
      versions.push(registry.version);
      return true;
    };
    let tellWindow = (_id: number | undefined): void => undefined;
    registry.addPageSession("S1", target("T1"), new Promise((resolve) => (tellWindow = resolve)));
    expect(moved()).toBe(true);
    registry.applyFrameTree("S1", { frame: { id: "T1", url: "https://t1.test/" } });
    expect(moved()).toBe(true);
    registry.toolsAdded("S1", [tool("a", "T1")]);
    expect(moved()).toBe(true);
    const [a] = registry.registrations() as [Registration];
    // Reads.
    registry.omissions();
    registry.isRegistered(a);
    registry.isTopLevel(a);
    registry.frameUrl(a);
    expect(moved()).toBe(false);
    // The tab becomes listable once its window is known.
    expect(a.session.tab.windowId).toBeUndefined();
    tellWindow(4);
    await registry.windowsKnown();
    expect(a.session.tab.windowId).toBe(4);
    expect(moved()).toBe(true);
    registry.navigatedWithinDocument("S1", "T1", "https://t1.test/#b");
    expect(moved()).toBe(true);
    registry.toolsRemoved("S1", [{ name: "a", frameId: "T1" }]);
    expect(moved()).toBe(true);
    registry.messageDropped("S1");
    expect(moved()).toBe(true);
    registry.frameNavigated("S1", { id: "T1", url: "https://t1.test/next" });
    expect(moved()).toBe(true);
    registry.removeSession("S1");
    expect(moved()).toBe(true);
    registry.clear();
    expect(moved()).toBe(true);
    // Never back to a version already seen: a listing remembered by its version stays right.
    expect(new Set(versions).size).toBe(versions.length);
  });
});
