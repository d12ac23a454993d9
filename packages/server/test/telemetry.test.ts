import { once } from "node:events";
import { createServer as createHttpServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { TelemetryEventEnvelope } from "@browser-service/types";
import { chromium } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { followEvents } from "./support/event-stream.js";
import { useTestServer } from "./support/test-server.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";

// Pages on 127.0.0.1: a page that logs, a JSON and a text response larger than their
// body limits, an image, and a page that logs a line with markup and an SSE frame in it.
let pages: Server;
let base: string;
// The OTLP/HTTP receiver: every log record posted to it, with the request's headers.
let receiver: Server;
const received: { headers: IncomingMessage["headers"]; body: Record<string, unknown> }[] = [];
let receiverUrl: string;

const BIG_JSON = JSON.stringify({ items: "j".repeat(20_000) });
const BIG_TEXT = "t".repeat(20_000);

beforeAll(async () => {
  const routes: Record<string, [string, string | Buffer]> = {
    "/data.json": ["application/json", BIG_JSON],
    "/data.txt": ["text/plain", BIG_TEXT],
    "/pixel.png": ["image/png", Buffer.alloc(64, 1)],
    "/logs": [
      "text/html",
      `<title>logs</title><script>
        console.log("hello <b>bold</b>\\n\\ndata: {\\"seq\\":1}", 42);
        console.warn("careful");
        setTimeout(() => { throw new Error("boom"); }, 0);
      </script>`,
    ],
    "/fetches": [
      "text/html",
      `<title>fetches</title><script>Promise.all(["/data.json", "/data.txt", "/pixel.png"].map((u) => fetch(u).then((r) => r.text())));</script>`,
    ],
    "/form": [
      "text/html",
      `<title>form</title><body style="height:3000px"><button id="buy">Buy now</button><input id="secret" type="password">
        <script>window.__browserServiceInteraction = () => {}; window.forged = typeof __browserServiceInteraction;</script></body>`,
    ],
    "/big": [
      "text/html",
      `<title>big</title><script>
        const part = "y".repeat(16 * 1024);
        for (let i = 0; i < 120; i++) console.log(...Array.from({ length: 14 }, () => part));
        console.log("H".repeat(10 * 1024 * 1024));
        // After the lines, so that the per-browser cap (100 here) keeps its events.
        setTimeout(() => fetch("/plain", { headers: { "x-one": "h".repeat(60000), "x-two": "h".repeat(60000) } }), 500);
      </script>`,
    ],
    "/shifts": [
      "text/html",
      `<title>shifts</title><body style="margin:0"><h1 style="font-size:64px">The largest text on the page</h1><p id="p">pushed</p>
        <script>setTimeout(() => { const d = document.createElement("div"); d.style.height = "300px"; document.body.prepend(d); }, 300);</script></body>`,
    ],
    "/flood": ["text/html", `<script>for (let i = 0; i < 300; i++) console.log("line " + i);</script>`],
  };
  pages = createHttpServer((request, response) => {
    const [type, body] = routes[request.url ?? "/"] ?? ["text/html", "<title>plain</title><p>plain</p>"];
    response.writeHead(200, { "content-type": type }).end(body);
  });
  pages.listen(0, "127.0.0.1");
  await once(pages, "listening");
  base = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
});

// Before the server starts (useTestServer's beforeAll runs after this file's first one).
const receiverReady = (async () => {
  receiver = createHttpServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      received.push({ headers: request.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown> });
      response.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  receiver.listen(0, "127.0.0.1");
  await once(receiver, "listening");
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/logs`;
})();

afterAll(() => {
  pages.close();
  receiver.close();
});

let launcher: TrackingLauncher;
const t = useTestServer(async () => {
  await receiverReady;
  launcher = new TrackingLauncher();
  return {
    launcher,
    telemetry: {
      maxEventsPerBrowser: 100,
      flushMs: 50,
      destinations: [{ id: "otlpdst_local", name: "local", endpoint: receiverUrl, headers: { authorization: "Bearer collector-key" } }],
    },
  };
});

afterEach(async () => {
  const client = t.client();
  for (const browser of await client.browsers.list({ limit: 100 })) await client.browsers.delete(browser.id);
});

/** Every kept event of a browser, oldest first (all pages). */
async function eventsOf(id: string, query: Record<string, unknown> = {}): Promise<TelemetryEventEnvelope[]> {
  const client = t.client();
  const all: TelemetryEventEnvelope[] = [];
  let offset = 0;
  for (;;) {
    const page = await client.GET("/browsers/{id_or_name}/telemetry/events", {
      params: { path: { id_or_name: id }, query: { ...query, offset, limit: 1000 } },
    });
    if (page.error) throw new Error(JSON.stringify(page.error));
    all.push(...(page.data ?? []));
    if (page.response.headers.get("x-has-more") !== "true") return all;
    offset = Number(page.response.headers.get("x-next-offset"));
  }
}

const types = (events: TelemetryEventEnvelope[]) => events.map((envelope) => envelope.event.type);

describe("telemetry settings on POST /browsers", () => {
  it("captures nothing unless asked, the default set for {}, and layers categories on it", async () => {
    const client = t.client();
    expect((await client.browsers.create()).telemetry).toBeNull();
    const plain = await client.browsers.create({ telemetry: {} });
    expect(plain.telemetry?.browser).toMatchObject({
      control: { enabled: true, cdp: { excluded_methods: [] } },
      connection: { enabled: true },
      system: { enabled: true },
      captcha: { enabled: true },
      console: { enabled: false },
      network: { enabled: false },
    });
    expect(plain.telemetry?.storage).toEqual({ enabled: true });
    expect(plain.telemetry?.export).toBeNull();
    const layered = await client.browsers.create({
      telemetry: { browser: { console: { enabled: true }, captcha: { enabled: false }, control: { cdp: { excluded_methods: ["Input.dispatchMouseEvent"] } } } },
    });
    expect(layered.telemetry?.browser).toMatchObject({
      console: { enabled: true },
      captcha: { enabled: false },
      control: { enabled: true, cdp: { excluded_methods: ["Input.dispatchMouseEvent"] } },
    });
    expect((await client.browsers.get(layered.id)).telemetry).toEqual(layered.telemetry);
    const allOff = await client.browsers.create({
      telemetry: { browser: { control: { enabled: false }, connection: { enabled: false }, system: { enabled: false }, captcha: { enabled: false } } },
    });
    expect(allOff.telemetry).toBeNull();
    expect((await client.browsers.create({ telemetry: { enabled: false } })).telemetry).toBeNull();
  });

  it("refuses the document's bad combinations with 400 naming the rule, and an unknown destination with 404", async () => {
    const client = t.client();
    // Sent as raw JSON: the client checks bodies against the spec before sending them.
    const refused = async (telemetry: unknown) => {
      const answer = await fetch(`${t.url}/browsers`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
        body: JSON.stringify({ telemetry }),
      });
      return { status: answer.status, error: (await answer.json()) as { code: string; message: string } };
    };
    for (const telemetry of [
      { enabled: false, browser: {} },
      { enabled: false, export: { otlp: { destination: { name: "local" } } } },
      { storage: { enabled: false } },
      { export: { otlp: { enabled: false, destination: { name: "local" } } } },
      { export: { otlp: { enabled: true } } },
      { export: { otlp: { destination: {} } } },
      { export: { otlp: { destination: { id: "a", name: "b" } } } },
      { browser: { control: { cdp: { excluded_methods: ["Runtime.evaluate"] } } } },
      { browser: { bogus: { enabled: true } } },
    ]) {
      const answer = await refused(telemetry);
      expect(answer.status, JSON.stringify(telemetry)).toBe(400);
      expect(answer.error?.code).toBe("bad_request");
    }
    expect(await refused({ export: { otlp: { destination: { name: "nowhere" } } } })).toMatchObject({
      status: 404,
      error: { code: "otlp_destination_not_found" },
    });
    // A small body of many wrong names gets a small answer: the first 50 problems, and how many there were.
    const many = await refused({ browser: { control: { cdp: { excluded_methods: Array.from({ length: 10_000 }, (_, i) => `Nope.method${i}`) } } } });
    expect(many.status).toBe(400);
    expect(JSON.stringify(many.error).length).toBeLessThan(200_000);
    expect(many.error.message).toMatch(/\(\d+ problems; the first 50 are listed\)/);
    // Nothing was started by any of them.
    expect(await client.browsers.list()).toEqual([]);
  });
});

describe("events of a browser", () => {
  it("reports DevTools commands of the document's methods, never their params, and counts excluded ones at disconnect", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ telemetry: { browser: { control: { cdp: { excluded_methods: ["Input.insertText"] } } } } });
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    const page = playwright.contexts()[0]?.pages()[0];
    if (page === undefined) throw new Error("no page");
    await page.goto(`${base}/plain`);
    await page.evaluate(() => 1 + 1);
    await page.keyboard.insertText("secret-typed-text");
    await playwright.close();
    await expect.poll(async () => types(await eventsOf(browser.id))).toContain("cdp_disconnect");
    const events = await eventsOf(browser.id);
    const commands = events.filter((envelope) => envelope.event.type === "cdp_command").map((envelope) => envelope.event.data);
    expect(commands).toContainEqual(expect.objectContaining({ method: "Page.navigate", outcome: "ok" }));
    // Runtime.evaluate is not a TelemetryCdpMethod; Input.insertText is excluded.
    expect(commands.map((command) => command?.method)).not.toContain("Runtime.evaluate");
    expect(commands.map((command) => command?.method)).not.toContain("Input.insertText");
    for (const command of commands) expect(Object.keys(command ?? {}).sort()).toEqual(expect.arrayContaining(["duration_ms", "method", "outcome"]));
    expect(JSON.stringify(events)).not.toContain("secret-typed-text");
    const connect = events.find((envelope) => envelope.event.type === "cdp_connect");
    const disconnect = events.find((envelope) => envelope.event.type === "cdp_disconnect");
    expect(connect?.event).toMatchObject({ category: "connection", source: { kind: "kernel_api" } });
    expect(disconnect?.event.data).toMatchObject({ reason: "client_close", telemetry_excluded: 1 });
    expect(Number(disconnect?.event.data?.message_count)).toBeGreaterThan(4);
    // Numbers grow by one from 1, and ts is Unix microseconds.
    expect(events.map((envelope) => envelope.seq)).toEqual(events.map((_, i) => i + 1));
    expect(Math.abs((events[0]?.event.ts ?? 0) / 1000 - Date.now())).toBeLessThan(600_000);
  });

  it("captures console lines and uncaught exceptions as page text, and page lifecycle, only when those categories are on", async () => {
    const client = t.client();
    const on = await client.browsers.create({ start_url: `${base}/logs`, telemetry: { browser: { console: { enabled: true }, page: { enabled: true } } } });
    const off = await client.browsers.create({ start_url: `${base}/logs`, telemetry: {} });
    await expect
      .poll(async () => types(await eventsOf(on.id)), { timeout: 20_000 })
      .toEqual(expect.arrayContaining(["console_log", "console_error", "page_load"]));
    const events = await eventsOf(on.id);
    const log = events.find((envelope) => envelope.event.type === "console_log" && envelope.event.data?.level === "log");
    expect(log?.event).toMatchObject({ category: "console", source: { kind: "cdp", event: "Runtime.consoleAPICalled" } });
    expect(log?.event.data).toMatchObject({ text: 'hello <b>bold</b>\n\ndata: {"seq":1}', args: ['hello <b>bold</b>\n\ndata: {"seq":1}', "42"] });
    expect(events.find((envelope) => envelope.event.data?.level === "warning")?.event.data?.text).toBe("careful");
    const thrown = events.find((envelope) => envelope.event.type === "console_error");
    expect(String(thrown?.event.data?.text)).toContain("boom");
    expect(events.find((envelope) => envelope.event.type === "page_navigation")?.event.data?.url).toBe(`${base}/logs`);
    // The default set has no console or page category: the same page gives none of them.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const quiet = await eventsOf(off.id);
    expect(quiet.filter((envelope) => ["console", "page", "network"].includes(envelope.event.category))).toEqual([]);
    // Largest Contentful Paint and a layout shift, from the performance timeline.
    const shifts = await client.browsers.create({ start_url: `${base}/shifts`, telemetry: { browser: { page: { enabled: true } } } });
    await expect.poll(async () => types(await eventsOf(shifts.id)), { timeout: 20_000 }).toEqual(expect.arrayContaining(["page_lcp", "page_layout_shift"]));
    const timeline = await eventsOf(shifts.id, { type: ["page_lcp", "page_layout_shift"] });
    expect(Number(timeline.find((envelope) => envelope.event.type === "page_lcp")?.event.data?.size)).toBeGreaterThan(0);
    expect(Number(timeline.find((envelope) => envelope.event.type === "page_layout_shift")?.event.data?.score)).toBeGreaterThan(0);
    // Filters by category and type.
    expect(new Set((await eventsOf(on.id, { category: ["console"] })).map((envelope) => envelope.event.category))).toEqual(new Set(["console"]));
    expect(types(await eventsOf(on.id, { type: ["page_load"] }))).toEqual(["page_load"]);
  });

  it("keeps network text bodies up to 8 KB for JSON and 4 KB for other text, marked truncated, and no binary body", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ start_url: `${base}/fetches`, telemetry: { browser: { network: { enabled: true } } } });
    const responses = async () => (await eventsOf(browser.id, { type: ["network_response"] })).map((envelope) => envelope.event);
    await expect.poll(async () => (await responses()).length, { timeout: 20_000 }).toBeGreaterThanOrEqual(4);
    const byPath = (path: string) => responses().then((events) => events.find((event) => String(event.data?.url).endsWith(path)));
    const json = await byPath("/data.json");
    expect(json?.data?.body).toBe(BIG_JSON.slice(0, 8 * 1024));
    expect(json?.truncated).toBe(true);
    const text = await byPath("/data.txt");
    expect(text?.data?.body).toBe(BIG_TEXT.slice(0, 4 * 1024));
    expect(text?.truncated).toBe(true);
    const image = await byPath("/pixel.png");
    expect(image?.data).toMatchObject({ status: 200, mime_type: "image/png" });
    expect(image?.data?.body).toBeUndefined();
    expect(types(await eventsOf(browser.id, { category: ["network"] }))).toContain("network_request");
  });

  it("records a crash as a system event, and keeps the events readable by id after the browser is gone", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ name: "fragile", telemetry: {} });
    const launched = launcher.latest();
    process.kill(launched.pid as number, "SIGKILL");
    await expect.poll(async () => types(await eventsOf(browser.id))).toContain("service_crashed");
    await client.browsers.delete(browser.id);
    expect(types(await eventsOf(browser.id))).toContain("service_crashed");
    await expect(client.telemetry.events("fragile", {})).rejects.toMatchObject({ status: 404, code: "not_found" });
  });

  it("keeps at most the per-browser cap, dropping the oldest and counting them", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ start_url: `${base}/flood`, telemetry: { browser: { console: { enabled: true } } } });
    await expect.poll(async () => types(await eventsOf(browser.id)).filter((type) => type === "console_log").length, { timeout: 20_000 }).toBeGreaterThan(50);
    await expect
      .poll(async () => {
        const answer = await client.GET("/browsers/{id_or_name}/telemetry/events", { params: { path: { id_or_name: browser.id }, query: { limit: 1000 } } });
        return Number(answer.response.headers.get("x-telemetry-dropped"));
      })
      .toBeGreaterThanOrEqual(200);
    const kept = await eventsOf(browser.id);
    expect(kept.length).toBeLessThanOrEqual(100);
    // The newest are kept: the last line logged is there, the first is not.
    const texts = kept.map((envelope) => envelope.event.data?.text);
    expect(texts).toContain("line 299");
    expect(texts).not.toContain("line 0");
  });
});

describe("interactions and screenshots", () => {
  it("records clicks, keys without the text typed, and settled scrolls, and screenshots when asked", async () => {
    const client = t.client();
    const browser = await client.browsers.create({
      start_url: `${base}/form`,
      telemetry: { browser: { interaction: { enabled: true }, screenshot: { enabled: true } } },
    });
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    try {
      const page = playwright.contexts()[0]?.pages()[0];
      if (page === undefined) throw new Error("no page");
      await page.waitForLoadState("load");
      await page.click("#buy");
      await page.click("#secret");
      await page.keyboard.type("hunter2");
      await page.keyboard.press("Enter");
      await page.mouse.wheel(0, 800);
      await expect
        .poll(async () => types(await eventsOf(browser.id, { category: ["interaction"] })), { timeout: 20_000 })
        .toEqual(expect.arrayContaining(["interaction_click", "interaction_key", "interaction_scroll_settled"]));
      const events = (await eventsOf(browser.id, { category: ["interaction"] })).map((envelope) => envelope.event);
      expect(events.find((event) => event.type === "interaction_click")?.data).toMatchObject({ selector: "button#buy", tag: "BUTTON", text: "Buy now" });
      const keys = events.filter((event) => event.type === "interaction_key").map((event) => event.data?.key);
      expect(keys).toEqual(["character", "character", "character", "character", "character", "character", "character", "Enter"]);
      expect(JSON.stringify(events)).not.toContain("hunter2");
      expect(events.find((event) => event.type === "interaction_scroll_settled")?.data).toMatchObject({ from_y: 0, to_y: 800 });
      // The page's own scripts cannot reach the listeners' binding to forge an interaction.
      expect(await page.evaluate(() => (window as unknown as { forged: string }).forged)).toBe("function");
      await page.evaluate(() =>
        (window as unknown as { __browserServiceInteraction: (text: string) => void }).__browserServiceInteraction('{"t":"click","selector":"forged"}'),
      );
      await expect.poll(async () => (await eventsOf(browser.id, { type: ["monitor_screenshot"] })).length, { timeout: 20_000 }).toBeGreaterThan(0);
      const [shot] = await eventsOf(browser.id, { type: ["monitor_screenshot"] });
      expect(Buffer.from(String(shot?.event.data?.png), "base64").subarray(1, 4).toString()).toBe("PNG");
      expect(JSON.stringify(await eventsOf(browser.id, { category: ["interaction"] }))).not.toContain("forged");
    } finally {
      await playwright.close();
    }
  });
});

describe("the service's own DevTools traffic", () => {
  it("records a live view viewer's connection, and never the live view's or WebMCP's commands as cdp_command", async () => {
    const client = t.client();
    const browser = await client.browsers.create({
      start_url: `${base}/plain`,
      telemetry: { browser: { console: { enabled: true }, page: { enabled: true } } },
    });
    const url = new URL(browser.live_view_read_only_url);
    const token = new URLSearchParams(url.hash.slice(1)).get("token");
    const viewer = new WebSocket(`ws://${url.host}${url.pathname}`, ["browser-service.live-view", `token.${token}`]);
    const frames: unknown[] = [];
    viewer.on("message", (data) => frames.push(data));
    await once(viewer, "open");
    // The live view screencasts the tab (Page.startScreencast, a reported method) on the service's own session.
    await expect.poll(() => frames.length, { timeout: 15_000 }).toBeGreaterThan(1);
    await client.webmcp.listTools(browser.id);
    viewer.close();
    await expect.poll(async () => types(await eventsOf(browser.id))).toContain("live_view_disconnect");
    const events = await eventsOf(browser.id);
    expect(events.find((envelope) => envelope.event.type === "live_view_connect")?.event.data).toMatchObject({ read_only: true });
    expect(Number(events.find((envelope) => envelope.event.type === "live_view_disconnect")?.event.data?.duration_ms)).toBeGreaterThan(0);
    expect(types(events)).not.toContain("cdp_command");
  });
});

describe("what a page cannot make the service hold", () => {
  it("cuts each event to 64 KiB, pages by bytes, replays every kept event, and counts a line too large to read", async () => {
    const client = t.client();
    const browser = await client.browsers.create({
      start_url: `${base}/big`,
      telemetry: { browser: { console: { enabled: true }, network: { enabled: true } } },
    });
    const plainRequest = async () =>
      (await eventsOf(browser.id, { type: ["network_request"] })).find((envelope) => String(envelope.event.data?.url).endsWith("/plain"));
    await expect.poll(plainRequest, { timeout: 20_000 }).toBeDefined();
    await expect
      .poll(async () => {
        const answer = await client.GET("/browsers/{id_or_name}/telemetry/events", { params: { path: { id_or_name: browser.id }, query: { limit: 1 } } });
        return Number(answer.response.headers.get("x-telemetry-dropped"));
      })
      .toBeGreaterThan(0);
    // A page of 1,000 asked for holds about 4 MiB of events, and says there is more.
    const answer = await fetch(`${t.url}/browsers/${browser.id}/telemetry/events?limit=1000`, { headers: { authorization: `Bearer ${t.orgKey}` } });
    const body = await answer.text();
    expect(body.length).toBeLessThan(4.2 * 1024 * 1024);
    expect(answer.headers.get("x-has-more")).toBe("true");
    const page = JSON.parse(body) as TelemetryEventEnvelope[];
    for (const envelope of page) expect(JSON.stringify(envelope.event).length).toBeLessThanOrEqual(64 * 1024);
    const line = page.find((envelope) => envelope.event.type === "console_log");
    expect(line?.event.truncated).toBe(true);
    const request = await plainRequest();
    expect(request?.event.truncated).toBe(true);
    expect(JSON.stringify(request?.event.data?.headers).length).toBeLessThan(9 * 1024);
    // Every kept event is replayed, however large, to a reader that reads.
    await client.browsers.delete(browser.id);
    const kept = (await eventsOf(browser.id)).map((envelope) => envelope.seq);
    const stream = await followEvents(`${t.url}/browsers/${browser.id}/telemetry/stream?replay=all`, { authorization: `Bearer ${t.orgKey}` });
    expect((await stream.ended).map((envelope) => envelope.seq)).toEqual(kept);
  });

  it("answers 404, not 500, for a name no store can hold", async () => {
    for (const path of ["events", "stream"]) {
      const answer = await fetch(`${t.url}/browsers/x%00y/telemetry/${path}`, { headers: { authorization: `Bearer ${t.orgKey}` } });
      expect([answer.status, ((await answer.json()) as { code: string }).code]).toEqual([404, "not_found"]);
    }
  });
});

describe("privacy", () => {
  it("shows a browser's events to its own project only", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ telemetry: {} });
    const other = await client.projects.create({ name: `telemetry-${Date.now()}` });
    const key = (await t.server.issueApiKey(other.id)).secret;
    const stranger = t.client({ apiKey: key });
    await expect(stranger.telemetry.events(browser.id)).rejects.toMatchObject({ status: 404 });
    const stream = await fetch(`${t.url}/browsers/${browser.id}/telemetry/stream?replay=all`, { headers: { authorization: `Bearer ${key}` } });
    expect(stream.status).toBe(404);
    await stream.body?.cancel();
  });
});

describe("the stream", () => {
  it("replays what was kept with replay=all, then sends new events live, each frame one JSON envelope", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ telemetry: { browser: { console: { enabled: true } } } });
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    const stream = await followEvents(`${t.url}/browsers/${browser.id}/telemetry/stream?replay=all`, { authorization: `Bearer ${t.orgKey}` });
    try {
      // The connect happened before the stream opened: replayed.
      await stream.next((envelope) => (envelope.event as { type: string }).type === "cdp_connect");
      const page = playwright.contexts()[0]?.pages()[0];
      await page?.evaluate(() => console.log("live\n\ndata: injected"));
      const live = await stream.next((envelope) => (envelope.event as { type: string }).type === "console_log");
      expect((live.event as { data: { text: string } }).data.text).toBe("live\n\ndata: injected");
      const seqs = stream.events.map((envelope) => envelope.seq as number);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      expect(new Set(seqs).size).toBe(seqs.length);
    } finally {
      await playwright.close();
      stream.close();
    }
  });

  it("resumes after Last-Event-ID, taking precedence over replay=all", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ telemetry: {} });
    for (let i = 0; i < 2; i++) await (await chromium.connectOverCDP(browser.cdp_ws_url)).close();
    await expect.poll(async () => types(await eventsOf(browser.id)).filter((type) => type === "cdp_disconnect").length).toBe(2);
    const kept = await eventsOf(browser.id);
    const firstDisconnect = kept.find((envelope) => envelope.event.type === "cdp_disconnect")?.seq ?? 0;
    const stream = await followEvents(`${t.url}/browsers/${browser.id}/telemetry/stream?replay=all`, {
      authorization: `Bearer ${t.orgKey}`,
      "last-event-id": String(firstDisconnect),
    });
    await client.browsers.delete(browser.id);
    const resumed = (await stream.ended).map((envelope) => envelope.seq as number);
    expect(resumed).toEqual(kept.filter((envelope) => envelope.seq > firstDisconnect).map((envelope) => envelope.seq));
  });

  it("ends when the browser ends, and a stream from now sends only new events", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ telemetry: {} });
    const warmup = await chromium.connectOverCDP(browser.cdp_ws_url);
    await warmup.close();
    await expect.poll(async () => types(await eventsOf(browser.id))).toContain("cdp_disconnect");
    const stream = await followEvents(`${t.url}/browsers/${browser.id}/telemetry/stream`, { authorization: `Bearer ${t.orgKey}` });
    const again = await chromium.connectOverCDP(browser.cdp_ws_url);
    await stream.next((envelope) => (envelope.event as { type: string }).type === "cdp_connect");
    await again.close();
    await client.browsers.delete(browser.id);
    const all = await stream.ended;
    // Only the second connection: the first one's events were before the stream.
    expect(all.filter((envelope) => (envelope.event as { type: string }).type === "cdp_connect")).toHaveLength(1);
  });
});

describe("OTLP export", () => {
  it("sends a browser's events to the destination it names, with the destination's headers", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ telemetry: { export: { otlp: { destination: { name: "local" } } }, storage: { enabled: false } } });
    expect(browser.telemetry?.export).toEqual({ otlp: { destination: { id: "otlpdst_local", name: "local" } } });
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    await playwright.close();
    const records = () =>
      received.flatMap(({ headers, body }) =>
        (
          (body.resourceLogs ?? []) as {
            scopeLogs: { logRecords: { attributes: { key: string; value: { stringValue?: string } }[]; eventName?: string }[] }[];
          }[]
        )
          .flatMap((resource) => resource.scopeLogs.flatMap((scope) => scope.logRecords))
          .map((record) => ({ headers, record })),
      );
    const attribute = (record: { attributes: { key: string; value: { stringValue?: string } }[] }, key: string) =>
      record.attributes.find((each) => each.key === key)?.value.stringValue;
    await expect
      .poll(
        () =>
          records()
            .filter(({ record }) => attribute(record, "browser.id") === browser.id)
            .map(({ record }) => record.eventName),
        { timeout: 15_000 },
      )
      .toEqual(expect.arrayContaining(["cdp_connect", "cdp_disconnect"]));
    const mine = records().find(({ record }) => attribute(record, "browser.id") === browser.id);
    expect(mine?.headers.authorization).toBe("Bearer collector-key");
    // Storage off: nothing kept by the service.
    expect(await eventsOf(browser.id)).toEqual([]);
    // A browser of another project that exports nowhere sends nothing there.
    const other = await client.projects.create({ name: `quiet-${Date.now()}` });
    const quiet = await client.browsers.create({ telemetry: {} }, { projectId: other.id });
    const again = await chromium.connectOverCDP(quiet.cdp_ws_url);
    await again.close();
    await expect.poll(async () => types(await t.client({ projectId: other.id }).telemetry.events(quiet.id))).toContain("cdp_disconnect");
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(records().filter(({ record }) => attribute(record, "browser.id") === quiet.id)).toEqual([]);
    await client.browsers.delete(quiet.id, { projectId: other.id });
  });
});
