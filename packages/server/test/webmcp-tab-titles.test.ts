import { limits } from "@browser-service/types";
import { describe, expect, it } from "vitest";
import { TabTitles, TITLE_MAX_AGE_MS } from "../src/webmcp/tab-titles.js";

/** A browser whose titles are read by hand: each read waits until the test answers it. */
function browser() {
  const reads: { answer(titles: Record<string, string>): void; fail(error: Error): void }[] = [];
  const read = () =>
    new Promise<Map<string, string>>((resolve, reject) => {
      reads.push({ answer: (titles) => resolve(new Map(Object.entries(titles))), fail: reject });
    });
  return { read, reads };
}

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
    expect(await first).toEqual(new Map([["t1", "Cart"]]));
    now += 499;
    expect(await titles.current(7)).toEqual(new Map([["t1", "Cart"]]));
    expect(reads).toHaveLength(1);
    // At the age (counted from when the read was sent): the browser is asked again.
    now += 1;
    const second = titles.current(7);
    expect(reads).toHaveLength(2);
    reads[1]!.answer({ t1: "Checkout" });
    expect(await second).toEqual(new Map([["t1", "Checkout"]]));
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
    expect(await second).toEqual(
      new Map([
        ["t1", "New page"],
        ["t2", "New tab"],
      ]),
    );
  });

  it("share one read among listings that ask while it runs", async () => {
    const { read, reads } = browser();
    const titles = new TabTitles(read, { maxAgeMs: 500, now: () => 0 });
    const asked = [titles.current(3), titles.current(3), titles.current(3)];
    expect(reads).toHaveLength(1);
    reads[0]!.answer({ t1: "Shared" });
    for (const answer of await Promise.all(asked)) expect(answer.get("t1")).toBe("Shared");
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
    expect((await next).get("t1")).toBe("Back");
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
