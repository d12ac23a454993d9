import { PageServer } from "@browser-service/test-pages";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { useTestServer } from "./support/test-server.js";

// Every refusal the DevTools edge writes, as the libraries users run receive it: answered
// in the session the command was sent on, as Chromium answers. A refusal answered in
// another session reaches no caller there: Playwright asserts in its message loop and the
// client process ends; Puppeteer waits for the answer forever.

// Past what Playwright and Puppeteer keep awaiting at once while they open a page.
const MAX_PENDING = 64;
let pages: PageServer;

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/plain", "<!doctype html><title>Plain</title><p>plain</p>");
});
afterAll(async () => {
  await pages.close();
});

const t = useTestServer({ cdpLimits: { maxPending: MAX_PENDING } });

/** What a session of either library can do: send a command, and say the answer or the refusal. */
type Send = (method: string, params?: Record<string, unknown>) => Promise<unknown>;

/** Nested `levels` objects deep: past the service's depth bound (200). */
const deep = (levels: number) => {
  let value: Record<string, unknown> = {};
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
};

/**
 * Each refusal path a client's session can reach, then a command that works: the call
 * rejects with the service's own message, and the session (and the client) goes on.
 */
async function everyRefusal(send: Send): Promise<void> {
  const works = async () => expect(await send("Runtime.evaluate", { expression: "6 * 7", returnByValue: true })).toMatchObject({ result: { value: 42 } });
  await works();
  // Command policy: URL rules, a refused method, host files.
  await expect(send("Page.navigate", { url: "file:///etc/passwd" })).rejects.toThrow(/Page\.navigate refuses/);
  await works();
  await expect(send("Browser.crash")).rejects.toThrow(/Browser\.crash/);
  await works();
  await expect(send("Tethering.bind", { port: 9222 })).rejects.toThrow(/Tethering\.bind/);
  await works();
  // A session the client does not own, named in params.
  await expect(send("Target.detachFromTarget", { sessionId: "0123456789ABCDEF0123456789ABCDEF" })).rejects.toThrow(/session/i);
  await works();
  // Shape: nested past the bound, refused before the service parses it.
  await expect(send("Runtime.evaluate", { expression: "1", objectGroup: deep(250) })).rejects.toThrow(/nests deeper than 200 levels/);
  await works();
  // The pending cap: commands awaiting the browser's answer, one more is refused unsent.
  const waiting = Array.from({ length: MAX_PENDING }, () =>
    send("Runtime.evaluate", { expression: "new Promise((resolve) => setTimeout(() => resolve(1), 1500))", awaitPromise: true, returnByValue: true }),
  );
  await expect(send("Runtime.evaluate", { expression: "1" })).rejects.toThrow(/awaiting the browser's answer/);
  for (const answer of await Promise.all(waiting)) expect(answer).toMatchObject({ result: { value: 1 } });
  await works();
}

describe("a refused DevTools command", () => {
  it("rejects its call in a Playwright session, flat child sessions included, and the client goes on working", async () => {
    const browser = await t.client().browsers.create({});
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    try {
      const context = playwright.contexts()[0];
      if (!context) throw new Error("no default context");
      const page = await context.newPage();
      await page.goto(pages.url("/plain"));
      const session = await context.newCDPSession(page);
      await everyRefusal((method, params) => session.send(method as "Runtime.evaluate", params as never));
      // The browser-wide session too.
      const browserSession = await playwright.newBrowserCDPSession();
      await expect(browserSession.send("Browser.crash")).rejects.toThrow(/Browser\.crash/);
      expect((await browserSession.send("Browser.getVersion")).product).toMatch(/Chrome/);
      // And Playwright's own calls still work on the page.
      expect(await page.title()).toBe("Plain");
      expect(await page.evaluate(() => 1 + 1)).toBe(2);
    } finally {
      await playwright.close();
    }
    await t.client().browsers.delete(browser.id);
  });

  it("rejects its call in a Puppeteer session, and the client goes on working", async () => {
    const browser = await t.client().browsers.create({});
    const connected = await puppeteer.connect({ browserWSEndpoint: browser.cdp_ws_url, defaultViewport: null, protocolTimeout: 20_000 });
    try {
      const page = await connected.newPage();
      await page.goto(pages.url("/plain"));
      const session = await page.createCDPSession();
      await everyRefusal((method, params) => session.send(method as "Runtime.evaluate", params as never));
      const browserSession = await connected.target().createCDPSession();
      await expect(browserSession.send("Browser.crash")).rejects.toThrow(/Browser\.crash/);
      expect(await page.title()).toBe("Plain");
      expect(await page.evaluate(() => 1 + 1)).toBe(2);
    } finally {
      await connected.disconnect();
    }
    await t.client().browsers.delete(browser.id);
  });

  it("carries the sessionId of the command it answers, as Chromium's own answers do (raw frames)", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/plain") });
    const ws = new WebSocket(browser.cdp_ws_url, { perMessageDeflate: false });
    const received: Record<string, unknown>[] = [];
    ws.on("message", (data) => received.push(JSON.parse(data.toString())));
    await new Promise((resolve, reject) => {
      ws.once("open", resolve);
      ws.once("error", reject);
    });
    const answer = async (id: number) => {
      await expect.poll(() => received.some((message) => message.id === id)).toBe(true);
      return received.find((message) => message.id === id) as Record<string, unknown>;
    };
    try {
      ws.send(JSON.stringify({ id: 1, method: "Target.getTargets" }));
      const { targetInfos } = (await answer(1)).result as { targetInfos: { targetId: string; type: string }[] };
      const target = targetInfos.find((info) => info.type === "page");
      ws.send(JSON.stringify({ id: 2, method: "Target.attachToTarget", params: { targetId: target?.targetId, flatten: true } }));
      const { sessionId } = (await answer(2)).result as { sessionId: string };
      ws.send(JSON.stringify({ id: 3, method: "Runtime.evaluate", params: { expression: "1" }, sessionId }));
      ws.send(JSON.stringify({ id: 4, method: "Page.navigate", params: { url: "file:///etc/passwd" }, sessionId }));
      ws.send(`{"id":5,"method":"Runtime.evaluate","sessionId":"${sessionId}","params":${JSON.stringify(deep(250))}}`);
      ws.send(`{"id":6,"sessionId":"${sessionId}","method":"Runtime.evaluate","params":{"expression":`);
      ws.send(JSON.stringify({ id: 7, method: "", sessionId }));
      ws.send(JSON.stringify({ id: 8, method: "Page.navigate", params: { url: "file:///etc/passwd" } }));
      expect(await answer(3)).toMatchObject({ sessionId, result: {} });
      for (const id of [4, 5, 6, 7]) expect(await answer(id)).toMatchObject({ id, sessionId, error: {} });
      // A refusal of a command sent without a session has none, as the browser session's answers have none.
      expect(await answer(8)).not.toHaveProperty("sessionId");
    } finally {
      ws.close();
    }
    await t.client().browsers.delete(browser.id);
  });
});
