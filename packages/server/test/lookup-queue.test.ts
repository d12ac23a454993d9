import { describe, expect, it } from "vitest";
import { LookupQueue, LookupQueueFullError, MAX_LOOKUPS_AT_ONCE, MAX_WAITING_LOOKUPS } from "../src/egress/lookup-queue.js";

/** A resolver whose answers the test releases one by one, recording what ran when. */
function heldResolver() {
  const running: string[] = [];
  const started: string[] = [];
  const release = new Map<string, () => void>();
  const lookup = (hostname: string) =>
    new Promise<{ address: string; family: number }[]>((resolve) => {
      running.push(hostname);
      started.push(hostname);
      release.set(hostname, () => {
        running.splice(running.indexOf(hostname), 1);
        resolve([{ address: "192.0.2.1", family: 4 }]);
      });
    });
  return { lookup, running, started, release: (hostname: string) => release.get(hostname)?.() };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("LookupQueue", () => {
  it("runs at most two lookups at once, one per browser, and lets a flooding browser delay only itself", async () => {
    const resolver = heldResolver();
    const queue = new LookupQueue(resolver.lookup);
    // A hostile page asks for 10 names that never answer; then two other browsers ask for one each.
    const flood = Array.from({ length: 10 }, (_, i) => queue.lookup("hostile", `never-${i}.test`));
    const other = queue.lookup("other", "shop.test");
    const third = queue.lookup("third", "docs.test");
    await settle();
    expect(MAX_LOOKUPS_AT_ONCE).toBe(2);
    expect(resolver.running).toEqual(["never-0.test", "shop.test"]);
    resolver.release("shop.test");
    await expect(other).resolves.toEqual([{ address: "192.0.2.1", family: 4 }]);
    await settle();
    // The third browser's turn comes before the flood's second name.
    expect(resolver.running).toEqual(["never-0.test", "docs.test"]);
    resolver.release("docs.test");
    await third;
    for (let i = 0; i < 10; i++) {
      resolver.release(`never-${i}.test`);
      await settle();
    }
    await Promise.all(flood);
    expect(resolver.started.filter((name) => name.startsWith("never-"))).toHaveLength(10);
  });

  it("refuses a lookup past the browser's waiting cap at once, and passes on a resolver's failure", async () => {
    const queue = new LookupQueue(() => new Promise(() => undefined));
    const waiting = Array.from({ length: MAX_WAITING_LOOKUPS + 1 }, (_, i) => queue.lookup("hostile", `n${i}.test`));
    void waiting;
    // One is running; MAX_WAITING_LOOKUPS wait; the next is refused.
    await expect(queue.lookup("hostile", "one-more.test")).rejects.toBeInstanceOf(LookupQueueFullError);
    const failing = new LookupQueue(() => Promise.reject(new Error("ENOTFOUND")));
    await expect(failing.lookup("a", "x.test")).rejects.toThrow("ENOTFOUND");
    await expect(failing.lookup("a", "y.test")).rejects.toThrow("ENOTFOUND");
  });
});
