import { connect, type Socket } from "node:net";
import { PageServer } from "@browser-service/test-pages";
import type { Browser } from "@browser-service/types";
import { chromium, type Page, type Browser as ViewerBrowser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { useTestServer } from "./support/test-server.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";
import { type DrivenBrowser, drive } from "./support/webmcp-driver.js";

// The live view seen from a second, real Chromium: the page at live_view_url shows the
// remote browser's screen (its known colour in the view's pixels), sends clicks and typing
// to it, switches tabs, lists and invokes its WebMCP tools; the read-only URL shows the
// same and sends nothing; a deleted browser's URL says the browser is gone. Raw
// WebSocket clients play the attacker: a watch-only token sending input, a wrong token,
// one viewer too many.

const RED = [200, 30, 60];
// The remote page scrolls (the wheel test) without a scrollbar: a view's first frame is a
// screenshot of the page's content box, later ones the whole viewport, and the test
// measures clicks against the page's width, which is then the same in both.
const GREEN = [20, 170, 70];
const REMOTE = `<!doctype html><title>Red page</title>
<style>html { scrollbar-width: none; } body { margin: 0; background: rgb(${RED.join(",")}); height: 100vh; } input { position: absolute; left: 40px; top: 200px; width: 200px; height: 30px; }</style>
<input id="name"><div style="height: 3000px"></div>
<script>
  window.clicks = [];
  window.drags = [];
  addEventListener("mousedown", (event) => window.clicks.push([event.clientX, event.clientY]));
  addEventListener("mousemove", (event) => { if (event.buttons === 1) window.drags.push([event.clientX, event.clientY]); });
  document.modelContext.registerTool({
    name: "greet",
    description: "Says hello. <img src=x onerror=\\"document.title='owned'\\">",
    inputSchema: { type: "object", properties: { who: { type: "string" } } },
    execute: async ({ who }) => ({ text: "hello " + who }),
  });
</script>`;
const STUCK = `<!doctype html><title>Stuck tool</title>
<script>document.modelContext.registerTool({ name: "stuck", description: "Never answers.", execute: () => new Promise(() => {}) });</script>`;
const SECOND = `<!doctype html><title>Green page</title><style>body { margin: 0; background: rgb(${GREEN.join(",")}); height: 100vh; }</style>`;

let pages: PageServer;
let viewerBrowser: ViewerBrowser;
beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/remote", REMOTE);
  pages.serve("/second", SECOND);
  pages.serve("/stuck", STUCK);
  viewerBrowser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
});
afterAll(async () => {
  await viewerBrowser?.close();
  await pages?.close();
});

const driven: DrivenBrowser[] = [];
afterAll(async () => {
  for (const each of driven) await each.disconnect().catch(() => undefined);
});

/** Opens a URL in a fresh page of the viewer's Chromium. */
async function openViewer(url: string): Promise<Page> {
  const context = await viewerBrowser.newContext({ viewport: { width: 1300, height: 900 } });
  const page = await context.newPage();
  await page.goto(url);
  return page;
}

/** The colour at a fraction of the view's current frame, read from its pixels. */
async function colourAt(viewer: Page, fx = 0.5, fy = 0.1): Promise<number[]> {
  return viewer.evaluate(
    ([x, y]) => {
      const img = document.getElementById("screen") as HTMLImageElement;
      const canvas = document.createElement("canvas");
      canvas.width = img.naturalWidth;
      canvas.height = img.naturalHeight;
      const context = canvas.getContext("2d") as CanvasRenderingContext2D;
      context.drawImage(img, 0, 0);
      return [...context.getImageData(Math.floor(img.naturalWidth * (x as number)), Math.floor(img.naturalHeight * (y as number)), 1, 1).data.slice(0, 3)];
    },
    [fx, fy],
  );
}

const near = (colour: number[], expected: number[]) => colour.every((value, i) => Math.abs(value - (expected[i] as number)) <= 24);

async function waitForColour(viewer: Page, expected: number[]): Promise<void> {
  await expect
    .poll(
      async () =>
        near(
          (await viewer.evaluate(() => (document.getElementById("screen") as HTMLImageElement).naturalWidth > 0)) ? await colourAt(viewer) : [0, 0, 0],
          expected,
        ),
      { timeout: 15_000 },
    )
    .toBe(true);
}

/** Clicks the view at the remote page's CSS pixel (x, y). */
async function clickRemote(viewer: Page, remoteWidth: number, x: number, y: number): Promise<void> {
  const box = await viewer.locator("#screen").boundingBox();
  if (!box) throw new Error("the view shows no screen");
  const scale = box.width / remoteWidth;
  await viewer.mouse.click(box.x + x * scale, box.y + y * scale);
}

/** A raw viewer connection: what a script (or an attacker) holding a token can do. */
async function rawViewer(
  liveViewUrl: string,
  protocols?: string[],
): Promise<{ ws: WebSocket; messages: Record<string, unknown>[]; closed: Promise<{ code: number; reason: string }> }> {
  const url = new URL(liveViewUrl);
  const token = new URLSearchParams(url.hash.slice(1)).get("token");
  const ws = new WebSocket(`ws://${url.host}${url.pathname}`, protocols ?? ["browser-service.live-view", `token.${token}`]);
  const messages: Record<string, unknown>[] = [];
  ws.on("message", (data) => messages.push(JSON.parse(data.toString())));
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString() })));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("close", () => resolve());
    ws.once("error", reject);
  });
  return { ws, messages, closed };
}

describe("the live view", () => {
  const t = useTestServer({ liveView: { maxViewers: 3 } });
  let browser: Browser;
  let remote: Awaited<ReturnType<DrivenBrowser["open"]>>;
  let remoteWidth: number;

  beforeAll(async () => {
    browser = await t.client().browsers.create({ start_url: pages.url("/remote") });
    const driver = await drive(browser.cdp_ws_url);
    driven.push(driver);
    remote = driver.context.pages().find((page) => page.url().endsWith("/remote")) as typeof remote;
    remoteWidth = await remote.evaluate(() => innerWidth);
  });

  it("gives each browser two live view URLs of their own, their tokens in the fragment", () => {
    const control = new URL(browser.live_view_url);
    const watch = new URL(browser.live_view_read_only_url);
    expect(control.pathname).toBe(`/browsers/${browser.id}/live`);
    expect(watch.pathname).toBe(control.pathname);
    expect(control.search).toBe("");
    const cdpToken = new URL(browser.cdp_ws_url).searchParams.get("token");
    const tokens = [control, watch].map((url) => new URLSearchParams(url.hash.slice(1)).get("token"));
    expect(tokens[0]).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set([cdpToken, ...tokens]).size).toBe(3);
  });

  it("shows the remote page's screen, and a click and typing in the view reach the page", async () => {
    const viewer = await openViewer(browser.live_view_url);
    await waitForColour(viewer, RED);
    await expect.poll(() => viewer.locator("#status").textContent()).toBe("Live");
    expect(await viewer.locator("#page-title").textContent()).toBe("Red page");

    await remote.evaluate(() => {
      (window as unknown as { clicks: unknown[] }).clicks = [];
    });
    await clickRemote(viewer, remoteWidth, 300, 100);
    await expect.poll(() => remote.evaluate(() => (window as unknown as { clicks: number[][] }).clicks.length)).toBe(1);
    const [[x, y]] = (await remote.evaluate(() => (window as unknown as { clicks: number[][] }).clicks)) as [[number, number]];
    expect(Math.abs(x - 300)).toBeLessThanOrEqual(3);
    expect(Math.abs(y - 100)).toBeLessThanOrEqual(3);

    // A drag: the page sees the mouse move with its button held.
    const box = (await viewer.locator("#screen").boundingBox()) as { x: number; y: number; width: number };
    const scale = box.width / remoteWidth;
    await viewer.mouse.move(box.x + 300 * scale, box.y + 100 * scale);
    await viewer.mouse.down();
    await viewer.mouse.move(box.x + 360 * scale, box.y + 140 * scale, { steps: 4 });
    await viewer.mouse.up();
    await expect.poll(() => remote.evaluate(() => (window as unknown as { drags: number[][] }).drags.length)).toBeGreaterThan(0);
    // The wheel scrolls the page.
    await viewer.mouse.wheel(0, 400);
    await expect.poll(() => remote.evaluate(() => scrollY)).toBeGreaterThan(0);
    await remote.evaluate(() => scrollTo(0, 0));

    await clickRemote(viewer, remoteWidth, 100, 215);
    await expect.poll(() => remote.evaluate(() => document.activeElement?.id)).toBe("name");
    await viewer.keyboard.type("Hello, world");
    await expect.poll(() => remote.evaluate(() => (document.getElementById("name") as HTMLInputElement).value)).toBe("Hello, world");
    await viewer.keyboard.press("Backspace");
    await expect.poll(() => remote.evaluate(() => (document.getElementById("name") as HTMLInputElement).value)).toBe("Hello, worl");
    // A paste sends the clipboard's text.
    await viewer.evaluate(() => {
      const data = new DataTransfer();
      data.setData("text/plain", " pasted ✓");
      document.getElementById("stage")?.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
    });
    await expect.poll(() => remote.evaluate(() => (document.getElementById("name") as HTMLInputElement).value)).toBe("Hello, worl pasted ✓");
    await viewer.context().close();
  });

  it("lists the browser's WebMCP tools as text and invokes one", async () => {
    const viewer = await openViewer(browser.live_view_url);
    const tool = viewer.locator("#tools li", { hasText: "greet" });
    await expect.poll(() => tool.count(), { timeout: 15_000 }).toBe(1);
    // The page's HTML in a description is shown as text, and never runs in the view.
    expect(await tool.locator(".tool-description").textContent()).toBe(`Says hello. <img src=x onerror="document.title='owned'">`);
    expect(await viewer.locator("#tools img").count()).toBe(0);
    await tool.locator("textarea").fill('{"who": "viewer"}');
    await tool.locator("button.invoke").click();
    const result = viewer.locator("#results li", { hasText: "greet" }).locator(".result");
    await expect.poll(() => result.textContent()).toContain('"text": "hello viewer"');
    expect(await viewer.title()).not.toBe("owned");
    await viewer.context().close();
  });

  it("switches tabs from the tab strip", async () => {
    const driver = await drive(browser.cdp_ws_url);
    driven.push(driver);
    const second = await driver.open(pages.url("/second"));
    const viewer = await openViewer(browser.live_view_url);
    const tab = viewer.locator("#tabs button", { hasText: "Green page" });
    await expect.poll(() => tab.count(), { timeout: 15_000 }).toBe(1);
    await tab.click();
    await waitForColour(viewer, GREEN);
    expect(await viewer.locator("#page-title").textContent()).toBe("Green page");
    // The tab it left, which nobody else watches, is no longer captured.
    await expect.poll(() => t.server.liveViewStats()).toEqual({ viewers: 1, screencasts: 1, places: 1 });
    await second.close();
    // Its tab closed: the view moves to a tab still open.
    await waitForColour(viewer, RED);
    await viewer.context().close();
  });

  it("serves several viewers of one tab, and one leaving harms nothing", async () => {
    const first = await openViewer(browser.live_view_url);
    const second = await openViewer(browser.live_view_read_only_url);
    await waitForColour(first, RED);
    await waitForColour(second, RED);
    await first.context().close();
    await remote.evaluate((green) => {
      document.body.style.background = `rgb(${green.join(",")})`;
    }, GREEN);
    await waitForColour(second, GREEN);
    await remote.evaluate((red) => {
      document.body.style.background = `rgb(${red.join(",")})`;
    }, RED);
    await waitForColour(second, RED);
    await second.context().close();
  });

  it("read-only: shows frames and tools, and sends none of its input to the page", async () => {
    const viewer = await openViewer(browser.live_view_read_only_url);
    await waitForColour(viewer, RED);
    await expect.poll(() => viewer.locator("#tools li", { hasText: "greet" }).count(), { timeout: 15_000 }).toBe(1);
    expect(await viewer.locator("#tools textarea").isVisible()).toBe(false);
    await remote.evaluate(() => {
      (window as unknown as { clicks: unknown[] }).clicks = [];
      (document.getElementById("name") as HTMLInputElement).value = "";
    });
    await clickRemote(viewer, remoteWidth, 100, 215);
    await viewer.keyboard.type("nope");

    // The page's script is not the only guard: a client holding the read-only token
    // that sends input itself gets a refusal, and the page sees nothing.
    const raw = await rawViewer(browser.live_view_read_only_url);
    raw.ws.send(JSON.stringify({ type: "mouse", event: "down", x: 100, y: 215, button: "left", clicks: 1 }));
    raw.ws.send(JSON.stringify({ type: "mouse", event: "up", x: 100, y: 215, button: "left", clicks: 1 }));
    raw.ws.send(JSON.stringify({ type: "text", text: "typed" }));
    raw.ws.send(JSON.stringify({ type: "key", event: "down", key: "a", code: "KeyA", text: "a", keyCode: 65 }));
    const tools = (await t.client().webmcp.listTools(browser.id)).tools;
    raw.ws.send(JSON.stringify({ type: "invoke", id: 1, request: { tool_ref: tools[0]?.tool_ref, input: { who: "x" } } }));
    await expect.poll(() => raw.messages.some((message) => message.type === "error" && message.code === "read_only")).toBe(true);
    // What the browser would have done by now, had anything been sent: a round trip through it.
    await remote.evaluate(() => new Promise((resolve) => requestAnimationFrame(resolve)));
    expect(await remote.evaluate(() => (window as unknown as { clicks: unknown[] }).clicks)).toEqual([]);
    expect(await remote.evaluate(() => (document.getElementById("name") as HTMLInputElement).value)).toBe("");
    expect(raw.messages.some((message) => message.type === "invocation")).toBe(false);
    raw.ws.close();
    await viewer.context().close();
  });

  it("closes a wrong token with 4401, a foreign protocol with a refusal, and one viewer too many with 4429", async () => {
    const wrong = await rawViewer(browser.live_view_url, ["browser-service.live-view", "token.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"]);
    expect((await wrong.closed).code).toBe(4401);
    // The DevTools token is not a live view token.
    const cdpToken = new URL(browser.cdp_ws_url).searchParams.get("token");
    expect((await (await rawViewer(browser.live_view_url, ["browser-service.live-view", `token.${cdpToken}`])).closed).code).toBe(4401);
    await expect(rawViewer(browser.live_view_url, ["something-else"])).rejects.toThrow(/400/);
    // A handshake ws cannot complete is refused with the Error body too, not ws's plain text.
    const url = new URL(browser.live_view_url);
    const answer = await new Promise<string>((resolve) => {
      const socket = connect(Number(url.port), url.hostname, () =>
        socket.write(
          `GET ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
            "Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: browser-service.live-view\r\n\r\n",
        ),
      );
      let text = "";
      socket.on("data", (chunk) => {
        text += chunk.toString();
      });
      socket.on("close", () => resolve(text));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({ code: "bad_request", details: [{ code: "invalid_websocket_handshake" }] });

    // The earlier tests' viewers have left (their pages closed), so the cap is the whole story.
    await expect.poll(() => t.server.liveViewStats().viewers).toBe(0);
    const viewers = await Promise.all([1, 2, 3, 4, 5].map(() => rawViewer(browser.live_view_url)));
    const open = viewers.filter((viewer) => viewer.ws.readyState === WebSocket.OPEN);
    expect(open).toHaveLength(3);
    for (const refused of viewers.filter((viewer) => !open.includes(viewer))) expect((await refused.closed).code).toBe(4429);
    for (const viewer of open) viewer.ws.close();
    await Promise.all(open.map((viewer) => viewer.closed));
    // The last viewer gone, nothing is captured any more.
    await expect.poll(() => t.server.liveViewStats()).toEqual({ viewers: 0, screencasts: 0, places: 0 });
  });

  it("tells viewers a deleted browser is gone, and its old URL says so too", async () => {
    const doomed = await t.client().browsers.create({ start_url: pages.url("/second") });
    const viewer = await openViewer(doomed.live_view_url);
    await waitForColour(viewer, GREEN);
    await t.client().browsers.delete(doomed.id);
    await expect.poll(() => viewer.locator("#status").textContent()).toBe("Browser gone");
    expect(await viewer.locator("#notice").textContent()).toContain("This browser is gone");
    const again = await openViewer(doomed.live_view_url);
    await expect.poll(() => again.locator("#notice").textContent()).toContain("This browser is gone");
    // Its token died with it: the old URL is answered as any link that opens nothing (see the next describe's oracle test).
    expect((await (await rawViewer(doomed.live_view_url)).closed).code).toBe(4401);
    await viewer.context().close();
    await again.context().close();
  });

  it("serves the page with a policy that runs only its own script", async () => {
    const response = await fetch(browser.live_view_url.replace(/#.*/, ""));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const policy = response.headers.get("content-security-policy") ?? "";
    expect(policy).toMatch(/script-src 'sha256-[^']+'(;|$)/);
    expect(policy).toContain("default-src 'none'");
    expect(response.headers.get("referrer-policy")).toBe("no-referrer");
    expect(await response.text()).not.toContain("/*SCRIPT*/");
    expect(t.mismatches).toEqual([]);
  });
});

describe("the live view's input budget", () => {
  const t = useTestServer({ liveView: { inputRate: 20 } });

  it("drops what a viewer sends past its rate, and says so", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/remote") });
    const driver = await drive(browser.cdp_ws_url);
    driven.push(driver);
    const remote = driver.context.pages().find((page) => page.url().endsWith("/remote")) as Page;
    await remote.focus("#name");
    const raw = await rawViewer(browser.live_view_url);
    // Typing reaches the tab being watched once its capture has started: the first frame says so.
    await expect.poll(() => raw.messages.some((message) => message.type === "frame"), { timeout: 15_000 }).toBe(true);
    for (let i = 0; i < 100; i++) raw.ws.send(JSON.stringify({ type: "text", text: "a" }));
    await expect.poll(() => raw.messages.some((message) => message.type === "error" && message.code === "rate_limited")).toBe(true);
    await expect.poll(() => remote.evaluate(() => (document.getElementById("name") as HTMLInputElement).value.length)).toBeGreaterThan(0);
    // A round trip through the page, after which every message the server let through has arrived.
    raw.ws.send(JSON.stringify({ type: "tools" }));
    await remote.evaluate(() => new Promise((resolve) => setTimeout(resolve, 100)));
    expect(await remote.evaluate(() => (document.getElementById("name") as HTMLInputElement).value.length)).toBeLessThan(100);
    raw.ws.close();
  });
});

describe("the live view's other bounds", () => {
  const t = useTestServer({
    liveView: { maxWidth: 320, maxHeight: 240, maxMessageBytes: 64 * 1024 },
    rateLimits: { perKey: { rate: 0, burst: 1 }, authFailuresPerAddress: { rate: 0.001, burst: 3 } },
  });

  it("scales frames to fit the size cap, closes a message over the cap with 1009, and runs at most 4 invocations of a viewer", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/stuck") });
    const raw = await rawViewer(browser.live_view_url);
    await expect.poll(() => raw.messages.some((message) => message.type === "frame"), { timeout: 15_000 }).toBe(true);
    const frame = raw.messages.find((message) => message.type === "frame") as { data: string };
    const viewer = await openViewer("about:blank");
    const size = await viewer.evaluate(async (data) => {
      const image = new Image();
      image.src = `data:image/jpeg;base64,${data}`;
      await image.decode();
      return [image.naturalWidth, image.naturalHeight];
    }, frame.data);
    await viewer.context().close();
    expect(size[0]).toBeLessThanOrEqual(320);
    expect(size[1]).toBeLessThanOrEqual(240);

    const [tool] = (await t.client().webmcp.listTools(browser.id)).tools;
    for (let id = 1; id <= 5; id++) raw.ws.send(JSON.stringify({ type: "invoke", id, request: { tool_ref: tool?.tool_ref, input: {}, timeout_sec: 1 } }));
    await expect.poll(() => raw.messages.filter((message) => message.type === "invocation").length, { timeout: 15_000 }).toBe(5);
    const answers = raw.messages.filter((message) => message.type === "invocation") as { id: number; error: { code: string } }[];
    expect(answers[0]).toMatchObject({ id: 5, error: { code: "rate_limited" } });
    // The four that ran waited for the tool and were then reported as of unknown outcome.
    expect(answers.slice(1).map((answer) => answer.error.code)).toEqual(["outcome_unknown", "outcome_unknown", "outcome_unknown", "outcome_unknown"]);

    raw.ws.send(JSON.stringify({ type: "text", text: "x".repeat(70_000) }));
    expect((await raw.closed).code).toBe(1009);
    // Only that viewer: the server goes on (ws reports the oversized frame as an error event,
    // which would end the process had nobody listened).
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await t.client().browsers.get(browser.id)).status).toBe("running");
  });

  it("says plainly when an invocation's outcome is unknown", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/stuck") });
    const driver = await drive(browser.cdp_ws_url);
    driven.push(driver);
    const stuck = driver.context.pages().find((page) => page.url().endsWith("/stuck")) as Page;
    const viewer = await openViewer(browser.live_view_url);
    const tool = viewer.locator("#tools li", { hasText: "stuck" });
    await expect.poll(() => tool.count(), { timeout: 15_000 }).toBe(1);
    await tool.locator("button.invoke").click();
    // Results are kept apart from the list of tools, which the tab's going away empties.
    const result = viewer.locator("#results li", { hasText: "stuck" }).locator(".result");
    await expect.poll(() => result.textContent()).toBe("Running…");
    // The tab goes away while the tool runs: whether it did anything cannot be known.
    await stuck.close();
    await expect.poll(() => result.textContent(), { timeout: 15_000 }).toMatch(/^Outcome unknown: the tool may have run/);
    expect(await result.getAttribute("class")).toContain("unknown");
    await viewer.context().close();
  });

  it("counts wrong tokens as failed authentications of the address, as the API does", async () => {
    const browser = await t.client().browsers.create({});
    for (let i = 0; i < 3; i++) {
      const wrong = await rawViewer(browser.live_view_url, ["browser-service.live-view", `token.${"A".repeat(43)}`]);
      expect((await wrong.closed).code).toBe(4401);
    }
    // The address has used its failed attempts: even the right token waits.
    expect((await (await rawViewer(browser.live_view_url)).closed).code).toBe(4429);
  });
});

/** Sends a live view handshake for `path` on a raw socket, then `frame` once the 101 has arrived; resolves when the server has closed it. */
function rawFrameAfterUpgrade(url: string, path: string, frame: Buffer): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    let answer = "";
    let sent = false;
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
      if (!sent && answer.includes("\r\n\r\n")) {
        sent = true;
        socket.write(frame);
      }
    });
    socket.on("error", () => resolve(answer));
    socket.on("close", () => resolve(answer));
    socket.on("connect", () =>
      socket.write(
        `GET ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: browser-service.live-view\r\n\r\n",
      ),
    );
    setTimeout(() => reject(new Error("the server neither answered nor closed")), 10_000).unref();
  });
}

describe("the live view to someone without its token", () => {
  const t = useTestServer({ rateLimits: { perKey: { rate: 0, burst: 1 }, authFailuresPerAddress: { rate: 0.001, burst: 4 } } });

  it("answers alike whether the id is a running browser, an ended one or none, and counts each try", async () => {
    const running = await t.client().browsers.create({});
    const ended = await t.client().browsers.create({});
    await t.client().browsers.delete(ended.id);
    const url = new URL(running.live_view_url);
    const at = (id: string) => `${url.protocol}//${url.host}/browsers/${id}/live`;
    const answers = [];
    for (const [target, protocols] of [
      [running.live_view_url, ["browser-service.live-view"]],
      [at("brw_aaaaaaaaaaaaaaaaaaaaaaaa"), ["browser-service.live-view"]],
      // An ended browser's old link, its token once right: nobody can tell it from a wrong one.
      [ended.live_view_url, undefined],
      [at("brw_aaaaaaaaaaaaaaaaaaaaaaaa"), ["browser-service.live-view", `token.${"A".repeat(43)}`]],
    ] as const) {
      answers.push(await (await rawViewer(target, protocols === undefined ? undefined : [...protocols])).closed);
    }
    expect(new Set(answers.map((answer) => JSON.stringify(answer))).size).toBe(1);
    expect(answers[0]?.code).toBe(4401);
    expect(answers[0]?.reason).toMatch(/gone.*or the token is wrong/);
    // Four tries, four failures of this address: even the right token now waits.
    expect((await (await rawViewer(running.live_view_url)).closed).code).toBe(4429);
  });
});

describe("the live view against hostile viewers", () => {
  const t = useTestServer({ liveView: { byteRate: 64 * 1024 } });

  it("survives a frame over the cap, or not UTF-8, sent with no credential before the close arrives", async () => {
    // A masked text frame announcing 2 MiB (64-bit length), and a masked text frame of 4 bytes that are not UTF-8.
    const oversized = Buffer.concat([Buffer.from([0x81, 0x80 | 127]), Buffer.from([0, 0, 0, 0, 0, 0x20, 0, 0]), Buffer.alloc(4), Buffer.alloc(1024, 0x41)]);
    const notUtf8 = Buffer.from([0x81, 0x80 | 4, 0, 0, 0, 0, 0xff, 0xfe, 0xfd, 0xfc]);
    for (const frame of [oversized, notUtf8]) {
      const answer = await rawFrameAfterUpgrade(t.url, "/browsers/brw_nope/live", frame);
      expect(answer).toMatch(/^HTTP\/1\.1 101/);
    }
    // Both ended their own connection only.
    expect((await t.client().browsers.create({})).status).toBe("running");
  });

  it("sends a viewer who asks for the tools many times at once one list, and then that it is unchanged", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/remote") });
    await expect.poll(async () => (await t.client().webmcp.listTools(browser.id)).tools.length).toBe(1);
    const watcher = await rawViewer(browser.live_view_read_only_url);
    // All 50 in one write, so that the server reads them at once however busy the machine
    // is: the first lists, the other 49 ask for one more list when it ends.
    const socket = (watcher.ws as unknown as { _socket: Socket })._socket;
    socket.cork();
    for (let i = 0; i < 50; i++) watcher.ws.send('{"type":"tools"}');
    socket.uncork();
    const tools = () => watcher.messages.filter((message) => message.type === "tools");
    await expect.poll(() => tools().some((message) => message.unchanged === true)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(tools().filter((message) => message.snapshot !== undefined)).toHaveLength(1);
    expect(tools()).toHaveLength(2);
    watcher.ws.close();
  });

  it("refuses before parsing: a watch-only viewer's large message, and a viewer past its browser's byte budget", async () => {
    const browser = await t.client().browsers.create({});
    const watcher = await rawViewer(browser.live_view_read_only_url);
    watcher.ws.send(JSON.stringify({ type: "tools", pad: "x".repeat(2_000) }));
    await expect.poll(() => watcher.messages.find((message) => message.type === "error")).toMatchObject({ code: "read_only" });
    // Past 4 KiB a watch-only viewer's frame is not even read whole: its connection closes.
    watcher.ws.send(JSON.stringify({ type: "tools", pad: "[".repeat(50_000) }));
    expect((await watcher.closed).code).toBe(1009);

    // Nesting deeper than any invocation's input is refused unparsed.
    const deep = await rawViewer(browser.live_view_url);
    deep.ws.send(`{"type":"tools","x":${"[".repeat(300)}${"]".repeat(300)}}`);
    await expect.poll(() => deep.messages.find((message) => message.type === "error")).toMatchObject({ code: "invalid_message" });

    const controller = await rawViewer(browser.live_view_url);
    // 20,000 characters of structure, charged 256-fold: far past 64 KiB a second.
    controller.ws.send(JSON.stringify({ type: "tools", pad: new Array(10_000).fill(0) }));
    controller.ws.send(JSON.stringify({ type: "tools" }));
    await expect.poll(() => controller.messages.find((message) => message.type === "error")).toMatchObject({ code: "rate_limited" });
    for (const each of [watcher, controller, deep]) each.ws.close();
  });
});

describe("the live view of a browser whose DevTools do not answer", () => {
  const launcher = new TrackingLauncher();
  const t = useTestServer({ launcher, liveView: { maxViewers: 2 } });

  it("frees the places of viewers who gave up, and tells the one who waited that the browser cannot be reached", async () => {
    const browser = await t.client().browsers.create({});
    const router = launcher.latest().cdp;
    const openChannel = router.openChannel.bind(router);
    // As when a page keeps Chromium's DevTools too busy to answer: no channel opens.
    router.openChannel = () => new Promise(() => undefined);
    const url = new URL(browser.live_view_url);
    const protocols = ["browser-service.live-view", `token.${new URLSearchParams(url.hash.slice(1)).get("token")}`];
    const quitters = [1, 2].map(() => new WebSocket(`ws://${url.host}${url.pathname}`, protocols));
    for (const quitter of quitters) quitter.on("error", () => undefined);
    // Both are admitted (their views wait for the channel), then give up.
    await expect.poll(() => t.server.liveViewStats().places).toBe(2);
    for (const quitter of quitters) quitter.terminate();
    await expect.poll(() => t.server.liveViewStats().places).toBe(0);
    // Their places are free: the next viewer is let in, waits, and is told after the open's time limit.
    const waiter = await rawViewer(browser.live_view_url);
    const closed = await waiter.closed;
    expect(closed.code).toBe(4404);
    expect(closed.reason).toContain("could not be reached");
    router.openChannel = openChannel;
    const viewer = await rawViewer(browser.live_view_url);
    await expect.poll(() => viewer.messages[0]?.type).toBe("hello");
    viewer.ws.close();
  }, 30_000);
});
