import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PageServer } from "@browser-service/test-pages";
import { chromium } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ReadyBrowser } from "../src/browsers/ready-browser.js";
import { WarmBrowserRecords } from "../src/browsers/warm-browser-records.js";
import { WarmPool } from "../src/browsers/warm-pool.js";
import { ChromiumLauncher, type LaunchedBrowser } from "../src/index.js";
import { spawnServer } from "./support/child-server.js";
import { chromiumBrowserPids, commandLine, processesNaming } from "./support/chromium-processes.js";
import { startTestServer, type TestServer, tempDataDir, useTestServer } from "./support/test-server.js";
import { processExists, TrackingLauncher } from "./support/tracking-launcher.js";
import { named, waitForTools } from "./support/webmcp-driver.js";

const POOL = 2;

const TOOL_PAGE = `<!doctype html><title>Tool page</title>
<script>document.modelContext.registerTool({ name: "echo", description: "Echoes.", execute: async (input) => input });</script>`;

let launcher: TrackingLauncher;
let pages: PageServer;

/** Polls `condition` until it holds (bounded: a miss fails the test, whatever the machine's speed). */
async function until(what: string, condition: () => boolean | Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (await condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`Never happened: ${what}.`);
}

const poolFull = (server: TestServer) => until(`${POOL} warm browsers ready`, () => server.server.warmPoolStats().ready === POOL);

/** The page target ids of a browser, asked on its pipe directly (not through the server). */
async function pageTargets(launched: LaunchedBrowser): Promise<string[]> {
  const { targetInfos } = (await launched.cdp.call("Target.getTargets")) as { targetInfos: { targetId: string; type: string }[] };
  return targetInfos.filter((target) => target.type === "page").map((target) => target.targetId);
}

/** The URLs of a browser's tabs, asked on its pipe directly. */
async function tabUrls(launched: LaunchedBrowser): Promise<string[]> {
  const { targetInfos } = (await launched.cdp.call("Target.getTargets")) as { targetInfos: { type: string; url: string }[] };
  return targetInfos.filter((target) => target.type === "page").map((target) => target.url);
}

/** Which launched process serves a browser of the API: the one whose tab ids its DevTools URL shows. */
async function processOf(cdpWsUrl: string): Promise<LaunchedBrowser> {
  const playwright = await chromium.connectOverCDP(cdpWsUrl);
  try {
    const cdp = await playwright.newBrowserCDPSession();
    const { targetInfos } = await cdp.send("Target.getTargets");
    const ids = new Set(targetInfos.filter((target) => target.type === "page").map((target) => target.targetId));
    for (const launched of launcher.launched) {
      if (launched.cdp.closed) continue;
      let targets: string[];
      try {
        targets = await pageTargets(launched);
      } catch (error) {
        // One that closed while asked (an earlier test's, being ended) is not the one this URL serves.
        if (launched.cdp.closed) continue;
        throw error;
      }
      if (targets.some((id) => ids.has(id))) return launched;
    }
  } finally {
    await playwright.close();
  }
  throw new Error("No launched browser serves this DevTools URL.");
}

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/start", "<!doctype html><title>start</title><p>start");
  pages.serve("/second", "<!doctype html><title>second</title><p>second");
  pages.serve("/tool", TOOL_PAGE);
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages.close();
});

const t = useTestServer(() => {
  launcher = new TrackingLauncher();
  return { launcher, warmBrowsers: POOL };
});

afterEach(async () => {
  const client = t.client();
  for (const browser of await client.browsers.list({ limit: 100 })) await client.browsers.delete(browser.id);
  await client.projects.updateLimits("Default", { max_concurrent_sessions: 0 });
});

describe("the warm pool", () => {
  it("hands over a browser launched before the request: start_url is its one tab, with one history entry, and the pool refills", async () => {
    await poolFull(t);
    const warm = launcher.launched.filter((launched) => !launched.cdp.closed);
    const browser = await t.client().browsers.create({ name: "warm", start_url: pages.url("/start") });
    expect(warm).toContain(await processOf(browser.cdp_ws_url));
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    try {
      const [page, ...others] = playwright.contexts()[0]?.pages() ?? [];
      expect(others).toEqual([]);
      await until("the tab shows start_url", () => page?.url() === pages.url("/start"));
      // The about:blank the warm browser waited on is gone from the history, as after a cold launch.
      await until("one history entry", async () => (await page?.evaluate(() => history.length)) === 1);
    } finally {
      await playwright.close();
    }
    await poolFull(t);
  });

  it("shares nothing between browsers: cookies, storage and history of one are absent in the next, and profiles differ", async () => {
    const client = t.client();
    await poolFull(t);
    const first = await client.browsers.create({ start_url: pages.url("/start") });
    const firstProcess = await processOf(first.cdp_ws_url);
    let playwright = await chromium.connectOverCDP(first.cdp_ws_url);
    const page = playwright.contexts()[0]?.pages()[0];
    if (!page) throw new Error("no tab");
    await until("start_url loaded", () => page.url() === pages.url("/start"));
    await page.evaluate(() => {
      // biome-ignore lint/suspicious/noDocumentCookie: the test plants a cookie in the first browser on purpose, to show the next one does not see it.
      document.cookie = "secret=first; max-age=3600";
      localStorage.setItem("secret", "first");
      sessionStorage.setItem("secret", "first");
    });
    await page.goto(pages.url("/second"));
    expect(await page.evaluate(() => history.length)).toBe(2);
    await playwright.close();
    await client.browsers.delete(first.id);
    expect(existsSync(firstProcess.userDataDir as string)).toBe(false);

    await poolFull(t);
    const second = await client.browsers.create({ start_url: pages.url("/start") });
    const secondProcess = await processOf(second.cdp_ws_url);
    expect(secondProcess).not.toBe(firstProcess);
    expect(secondProcess.userDataDir).not.toBe(firstProcess.userDataDir);
    playwright = await chromium.connectOverCDP(second.cdp_ws_url);
    try {
      const context = playwright.contexts()[0];
      const tab = context?.pages()[0];
      if (!context || !tab) throw new Error("no tab");
      await until("start_url loaded", () => tab.url() === pages.url("/start"));
      await until("one history entry", async () => (await tab.evaluate(() => history.length)) === 1);
      expect(await context.cookies()).toEqual([]);
      expect(await tab.evaluate(() => [document.cookie, localStorage.length, sessionStorage.length])).toEqual(["", 0, 0]);
    } finally {
      await playwright.close();
    }
  });

  it("follows the WebMCP tools of start_url once taken", async () => {
    await poolFull(t);
    const client = t.client();
    const browser = await client.browsers.create({ start_url: pages.url("/tool") });
    const tools = await waitForTools(client, browser.id, (list) => named(list, "echo").length === 1);
    expect(named(tools, "echo")[0]?.source).toMatchObject({ tab_id: 1, page_url: pages.url("/tool") });
  });

  it("counts against no limit and is not listed: only the browsers created are", async () => {
    const client = t.client();
    await poolFull(t);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
    expect(await client.browsers.list()).toEqual([]);
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 1 });
    const only = await client.browsers.create({ name: "only" });
    const taken = t.server.warmPoolStats().taken;
    await expect(client.browsers.create({ name: "over" })).rejects.toMatchObject({ status: 429, code: "concurrency_limit_exceeded" });
    // The refused create held a warm browser while its reservation was written, and gave it back.
    expect(t.server.warmPoolStats().taken).toBe(taken);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(1);
    expect((await client.browsers.list()).map((each) => each.id)).toEqual([only.id]);
  });

  it("serves a burst larger than the pool with cold launches, and refills to exactly its size", async () => {
    await poolFull(t);
    const takenBefore = t.server.warmPoolStats().taken;
    let most = 0;
    const sampler = setInterval(() => {
      const { ready, launching } = t.server.warmPoolStats();
      most = Math.max(most, ready + launching);
    }, 5);
    try {
      const burst = await Promise.all(
        Array.from({ length: POOL + 2 }, (_, index) => t.client().browsers.create({ name: `burst-${index}`, start_url: pages.url("/start") })),
      );
      expect(burst.map((browser) => browser.status)).toEqual(Array(POOL + 2).fill("running"));
      await poolFull(t);
    } finally {
      clearInterval(sampler);
    }
    expect(most).toBeLessThanOrEqual(POOL);
    // Each of the pool's browsers served one create; a refill may have served one more.
    expect(t.server.warmPoolStats().taken - takenBefore).toBeGreaterThanOrEqual(POOL);
    expect(t.server.warmPoolStats().taken - takenBefore).toBeLessThanOrEqual(POOL + 2);
    // Every live process is a session's or one of the pool's.
    const alive = launcher.launched.filter((launched) => processExists(launched.pid as number));
    expect(alive.length).toBe(POOL + 2 + POOL);
  });

  it("replaces a warm browser that dies while waiting", async () => {
    await poolFull(t);
    const before = launcher.launched.length;
    const victim = launcher.launched.filter((launched) => !launched.cdp.closed).at(-1) as LaunchedBrowser;
    process.kill(victim.pid as number, "SIGKILL");
    await until("the dead one replaced", () => launcher.launched.length === before + 1 && t.server.warmPoolStats().ready === POOL);
    expect(processExists(victim.pid as number)).toBe(false);
    await until("its profile removed", () => !existsSync(victim.userDataDir as string));
    expect((await t.client().browsers.create({})).status).toBe("running");
  });
});

describe("the warm pool's end", () => {
  it("shutdown closes every warm browser and removes its profile and record", async () => {
    const ownLauncher = new TrackingLauncher();
    const server = await startTestServer({ launcher: ownLauncher, warmBrowsers: POOL });
    await poolFull(server);
    expect(readdirSync(join(server.dataDir, "warm-browsers"))).toHaveLength(POOL);
    await server.close({ keepData: true });
    for (const launched of ownLauncher.launched) {
      expect(processExists(launched.pid as number)).toBe(false);
      expect(existsSync(launched.userDataDir as string)).toBe(false);
    }
    expect(readdirSync(join(server.dataDir, "warm-browsers"))).toEqual([]);
    rmSync(server.dataDir, { recursive: true, force: true });
  });

  it("after a SIGKILL of the server, its warm browsers end with it and the next start removes what they left", async () => {
    const dataDir = tempDataDir();
    let server = await spawnServer(dataDir, ["--warm-browsers", "1"]);
    // This server's browsers only (its descendants): other runs may have Chromium running on the machine.
    let orphans: number[] = [];
    let profile = "";
    await until("a warm browser recorded", () => {
      orphans = chromiumBrowserPids(server.child.pid as number);
      const records = readdirSync(join(dataDir, "warm-browsers"));
      if (orphans.length !== 1 || records.length !== 1) return false;
      try {
        profile = (JSON.parse(readFileSync(join(dataDir, "warm-browsers", records[0] as string), "utf8")) as { user_data_dir: string }).user_data_dir;
        return true;
      } catch (error) {
        // The record is created empty, then written.
        if (error instanceof SyntaxError) return false;
        throw error;
      }
    });
    // The recorded browser is the one running. Its profile, a fresh temporary directory,
    // is named by the command lines of its sandbox (bwrap), Chromium and its helpers.
    expect(commandLine(orphans[0] as number)).toContain(`--user-data-dir=${profile}`);
    await server.kill();
    // Its sandbox ends with the server (bwrap --die-with-parent): nothing runs unowned. Once
    // re-parented, its processes no longer descend from the server: none may name its profile.
    await until("the warm browser ended with the server", () => !processExists(orphans[0] as number) && processesNaming(profile).length === 0);
    expect(existsSync(profile)).toBe(true);
    server = await spawnServer(dataDir);
    try {
      expect(existsSync(profile)).toBe(false);
      expect(readdirSync(join(dataDir, "warm-browsers"))).toEqual([]);
    } finally {
      expect(await server.stop()).toBe(0);
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("never holds more than its size, ready or launching, however fast browsers are taken", async () => {
    const chromiumLauncher = new ChromiumLauncher({ allowPrivateNetwork: true });
    // The pool's processes: launches under way plus launched ones neither taken nor exited.
    let launching = 0;
    const waiting = new Set<LaunchedBrowser>();
    let most = 0;
    const count = () => (most = Math.max(most, launching + waiting.size));
    const pool = new WarmPool({
      size: POOL,
      log: { info: () => undefined, warn: () => undefined, error: () => undefined },
      launcher: {
        async launch(options) {
          launching++;
          count();
          try {
            const launched = await chromiumLauncher.launch(options);
            waiting.add(launched);
            launched.onExit(() => waiting.delete(launched));
            return launched;
          } finally {
            launching--;
            count();
          }
        },
      },
    });
    pool.start();
    const taken: LaunchedBrowser[] = [];
    try {
      for (let round = 0; round < 4; round++) {
        await until("a warm browser", () => pool.stats().ready > 0);
        for (let next = pool.next(); next !== undefined; next = pool.next()) {
          pool.take(next).warm.handOver(undefined);
          waiting.delete(next.launched);
          taken.push(next.launched);
        }
      }
    } finally {
      await pool.close();
      await Promise.all(taken.map((launched) => launched.close()));
    }
    expect(most).toBe(POOL);
    expect(taken.length).toBeGreaterThanOrEqual(4);
    expect(waiting.size).toBe(0);
  });
});

describe("a warm browser's hand-over", () => {
  it("navigates to start_url only once the create's commit is on disk (after settles), also when it failed", async () => {
    const chromiumLauncher = new ChromiumLauncher({ allowPrivateNetwork: true });
    for (const outcome of ["synced", "sync failed"] as const) {
      const launched = await chromiumLauncher.launch({});
      try {
        const warm = await ReadyBrowser.prepare(launched);
        let settle!: () => void;
        const committed = new Promise<void>((resolve, reject) => {
          settle = outcome === "synced" ? resolve : () => reject(new Error("the disk refused"));
        });
        const start = pages.url(`/start?${outcome === "synced" ? "ok" : "failed"}`);
        warm.handOver(start, committed);
        // Long enough for a navigation sent at once to have committed on any machine here.
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        expect(await tabUrls(launched)).toEqual(["about:blank"]);
        settle();
        await until("the tab at start_url", async () => (await tabUrls(launched))[0] === start);
      } finally {
        await launched.close();
      }
    }
  });
});

describe("a warm browser's failures", () => {
  it("a refused sync becomes no unhandled rejection: without a start_url, or when the browser cannot be handed over", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    const chromiumLauncher = new ChromiumLauncher({ allowPrivateNetwork: true });
    const launched = [await chromiumLauncher.launch({}), await chromiumLauncher.launch({})] as const;
    try {
      const [kept, dead] = await Promise.all(launched.map((each) => ReadyBrowser.prepare(each)));
      kept!.handOver(undefined, Promise.reject(new Error("the disk refused")));
      await launched[1].close();
      expect(() => dead!.handOver(pages.url("/start"), Promise.reject(new Error("the disk refused")))).toThrow(/closed/);
      // Unhandled rejections are reported after the microtask queue drains.
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
      await Promise.all(launched.map((each) => each.close()));
    }
  });

  it("keeps a browser whose WebMCP could not be followed, as a cold launch does, and says so", async () => {
    const warnings: string[] = [];
    const pool = new WarmPool({
      size: 1,
      launcher: new ChromiumLauncher({ allowPrivateNetwork: true }),
      prepare: () => Promise.reject(new Error("no DevTools for WebMCP")),
      log: { info: () => undefined, warn: (_fields: unknown, message: string) => void warnings.push(message), error: () => undefined },
    });
    pool.start();
    try {
      await until("a warm browser", () => pool.stats().ready === 1);
      expect(warnings.join("\n")).toMatch(/could not follow a warm browser's WebMCP tools/);
      const warm = pool.next()!;
      pool.take(warm).warm.handOver(pages.url("/start"));
      await until("the tab at start_url", async () => (await tabUrls(warm.launched))[0] === pages.url("/start"));
      await warm.close();
    } finally {
      await pool.close();
    }
  });
});

// The profile prefix is what the clean-up after a kill trusts; a path elsewhere is never removed.
describe("warm browser records", () => {
  it("removes no directory a record names outside the launcher's profiles", async () => {
    const dir = mkdtempSync(join(tmpdir(), "warm-records-"));
    const precious = mkdtempSync(join(tmpdir(), "precious-"));
    try {
      const records = new WarmBrowserRecords(dir);
      await records.add({ pid: 999_999_999, userDataDir: precious } as LaunchedBrowser);
      expect(records.endLeftOver()).toBe(1);
      expect(existsSync(precious)).toBe(true);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(precious, { recursive: true, force: true });
    }
  });
});
