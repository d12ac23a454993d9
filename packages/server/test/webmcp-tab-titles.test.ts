import { limits } from "@browser-service/types";
import { describe, expect, it } from "vitest";
import { PAGE_DATA_LIMITS } from "../src/webmcp/page-data.js";
import { SourceNumbers } from "../src/webmcp/source-numbers.js";
import { type TabTitle, TabTitles, TITLE_MAX_AGE_MS, type TitlesRead } from "../src/webmcp/tab-titles.js";
import { buildToolList } from "../src/webmcp/tool-list-body.js";
import { ToolRefTable } from "../src/webmcp/tool-refs.js";
import { type Registration, ToolRegistry } from "../src/webmcp/tool-registry.js";

/** A browser whose titles are read by hand: each read waits until the test answers it. */
function browser() {
  const reads: { answer(titles: Record<string, string>): void; fail(error: Error): void }[] = [];
  const read = () =>
    new Promise<Map<string, TabTitle>>((resolve, reject) => {
      reads.push({
        answer: (titles) => resolve(new Map(Object.entries(titles).map(([id, title]) => [id, { title, url: `https://${id}.test/` }]))),
        fail: reject,
      });
    });
  return { read, reads };
}

/** The titles of a read, by target id. */
const titlesOf = async (read: Promise<TitlesRead>) => Object.fromEntries([...(await read).titles].map(([id, { title }]) => [id, title]));

describe("the tab titles a listing shows", () => {
  it("are at most the spec's page_title x-max-age-ms old", () => {
    expect(TITLE_MAX_AGE_MS).toBe(limits.schemas.WebMcpToolSource.page_title.maxAgeMs);
    expect(TITLE_MAX_AGE_MS).toBe(500);
  });

  it("are read once for every listing within the age at the same version, then read again", async () => {
    const { read, reads } = browser();
    let now = 1000;
    const titles = new TabTitles(read, { maxAgeMs: 500, now: () => now });
    const first = titles.current(7);
    reads[0]!.answer({ t1: "Cart" });
    expect(await titlesOf(first)).toEqual({ t1: "Cart" });
    expect((await first).version).toBe(7);
    now += 499;
    expect(await titlesOf(titles.current(7))).toEqual({ t1: "Cart" });
    expect(reads).toHaveLength(1);
    // At the age (counted from when the read was sent): the browser is asked again.
    now += 1;
    const second = titles.current(7);
    expect(reads).toHaveLength(2);
    reads[1]!.answer({ t1: "Checkout" });
    expect(await titlesOf(second)).toEqual({ t1: "Checkout" });
  });

  it("are read again as soon as the registry's version changes (a tab or document came or went)", async () => {
    const { read, reads } = browser();
    const titles = new TabTitles(read, { maxAgeMs: 500, now: () => 0 });
    const first = titles.current(1);
    reads[0]!.answer({ t1: "Old page" });
    await first;
    const second = titles.current(2);
    expect(reads).toHaveLength(2);
    reads[1]!.answer({ t1: "New page", t2: "New tab" });
    expect(await titlesOf(second)).toEqual({ t1: "New page", t2: "New tab" });
    expect((await second).version).toBe(2);
  });

  it("share one read among listings that ask while it runs", async () => {
    const { read, reads } = browser();
    const titles = new TabTitles(read, { maxAgeMs: 500, now: () => 0 });
    const asked = [titles.current(3), titles.current(3), titles.current(3)];
    expect(reads).toHaveLength(1);
    reads[0]!.answer({ t1: "Shared" });
    for (const answer of asked) expect(await titlesOf(answer)).toEqual({ t1: "Shared" });
  });

  it("do not keep a read that failed: the next listing asks the browser again", async () => {
    const { read, reads } = browser();
    const titles = new TabTitles(read, { maxAgeMs: 500, now: () => 0 });
    const failed = titles.current(1);
    reads[0]!.fail(new Error("the connection closed"));
    await expect(failed).rejects.toThrow("the connection closed");
    const next = titles.current(1);
    expect(reads).toHaveLength(2);
    reads[1]!.answer({ t1: "Back" });
    expect(await titlesOf(next)).toEqual({ t1: "Back" });
  });

  it("with an age of 0, are read for every listing, even two at the same instant", async () => {
    const { read, reads } = browser();
    const titles = new TabTitles(read, { maxAgeMs: 0, now: () => 0 });
    void titles.current(1);
    reads[0]!.answer({});
    await Promise.resolve();
    void titles.current(1);
    expect(reads).toHaveLength(2);
    reads[1]!.answer({});
  });
});

describe("the page_title a body shows", () => {
  /** A registry with one tab (target T1, on https://t1.test/shop) holding one tool. */
  async function oneTab() {
    const numbers = new SourceNumbers();
    const registry = new ToolRegistry(new ToolRefTable<Registration>(), numbers, { warn: () => undefined });
    registry.addPageSession("S1", { targetId: "T1", type: "page", title: "", url: "https://t1.test/shop#top" }, Promise.resolve(1));
    registry.toolsAdded("S1", [{ name: "buy", description: "Buys.", frameId: "T1" }]);
    await registry.windowsKnown();
    return { registry, numbers };
  }
  const pageTitle = async (titles: Map<string, TabTitle>, navigateAfterRead = false) => {
    const { registry, numbers } = await oneTab();
    const titlesVersion = registry.version;
    if (navigateAfterRead) {
      // The tab's document commits again (same URL) after the titles were asked for.
      registry.frameNavigated("S1", { id: "T1", url: "https://t1.test/shop" });
      registry.toolsAdded("S1", [{ name: "buy", description: "Buys.", frameId: "T1" }]);
    }
    const body = await buildToolList({ registry, titles, titlesVersion, numbers, etag: undefined });
    return (JSON.parse(body.json.toString("utf8")) as { tools: { source: { page_title: string } }[] }).tools[0]?.source.page_title;
  };

  it("is the title read of the document it lists (its URL, without the fragment, the same)", async () => {
    expect(await pageTitle(new Map([["T1", { title: "Shop", url: "https://t1.test/shop" }]]))).toBe("Shop");
  });

  it("is empty, never the title of another document, when the title was read before the tab navigated", async () => {
    expect(await pageTitle(new Map([["T1", { title: "Previous page", url: "https://t1.test/before" }]]))).toBe("");
    expect(await pageTitle(new Map())).toBe("");
  });

  it("is empty when the tab's document committed after the titles were asked for, even at the same URL", async () => {
    // While a navigation the browser started is pending, Chromium reports its URL with the old page's title.
    expect(await pageTitle(new Map([["T1", { title: "Previous page", url: "https://t1.test/shop" }]]), true)).toBe("");
  });

  it("is cut before a character that would pass the cap, never between the halves of a surrogate pair", async () => {
    const title = await pageTitle(new Map([["T1", { title: "😀".repeat(600), url: "https://t1.test/shop" }]]));
    expect(title).toBe(`${"😀".repeat(511)}…`);
    expect(title?.length).toBeLessThanOrEqual(PAGE_DATA_LIMITS.titleChars);
    // No lone surrogate: a high one not followed by a low one, or a low one not after a high one.
    expect(title).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
  });
});
