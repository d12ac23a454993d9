import { existsSync, readdirSync, readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { PageServer } from "@browser-service/test-pages";
import type { Browser } from "@browser-service/types";
import { validateError } from "@browser-service/validators";
import { chromium } from "playwright-core";
import puppeteer from "puppeteer-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { LaunchedBrowser, LaunchOptions } from "../src/index.js";
import { commandLine, listeningSocketsOfGroup, processGroup } from "./support/chromium-processes.js";
import { insideSandbox } from "./support/sandbox-probe.js";
import { startTestServer, useTestServer } from "./support/test-server.js";
import { processExists, TrackingLauncher } from "./support/tracking-launcher.js";
import { waitForTools } from "./support/webmcp-driver.js";

const TOOL_PAGE = `<!doctype html><title>Tool page</title><p>tool</p>
<script>
  window.calls = 0;
  document.modelContext.registerTool({ name: "double", description: "Doubles n.", execute: async ({ n }) => { window.calls++; return { twice: n * 2 }; } });
</script>`;

const DOWNLOAD_PAGE = `<!doctype html><title>Download</title><a id="get" download="note.txt" href="data:text/plain,downloaded">get</a>`;

const MIB = 1024 * 1024;

let launcher: TrackingLauncher;
let pages: PageServer;

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/tool", TOOL_PAGE);
  pages.serve("/plain", "<!doctype html><title>Plain</title><p>plain</p>");
  pages.serve("/download", DOWNLOAD_PAGE);
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages.close();
});

const t = useTestServer(() => {
  launcher = new TrackingLauncher();
  return { launcher, cdpLimits: { maxClients: 3, maxMessageBytes: MIB, maxBufferedBytes: MIB } };
});

afterEach(async () => {
  const client = t.client();
  for (const browser of await client.browsers.list({ limit: 100 })) await client.browsers.delete(browser.id);
});

/** A raw DevTools client: commands by id, every message it received kept in order. */
class RawClient {
  readonly received: Record<string, unknown>[] = [];
  readonly #waiting = new Map<number, (message: Record<string, unknown>) => void>();
  #nextId = 1;

  private constructor(readonly ws: WebSocket) {
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString()) as Record<string, unknown>;
      this.received.push(message);
      if (typeof message.id === "number") this.#waiting.get(message.id)?.(message);
    });
  }

  /** One upgrade: the client when it opened, or what the refused upgrade answered. */
  static attempt(url: string, headers: Record<string, string> = {}): Promise<RawClient | Refusal> {
    const ws = new WebSocket(url, { headers });
    return new Promise((resolve, reject) => {
      ws.once("open", () => resolve(new RawClient(ws)));
      ws.once("unexpected-response", (request, response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => (text += chunk));
        response.on("end", () => {
          request.destroy();
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(text) as Record<string, unknown> });
        });
      });
      ws.on("error", reject);
    });
  }

  static async open(url: string, headers: Record<string, string> = {}): Promise<RawClient> {
    const ws = new WebSocket(url, { headers });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return new RawClient(ws);
  }

  send(method: string, params: object = {}, sessionId?: string): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    const answered = new Promise<Record<string, unknown>>((resolve) => this.#waiting.set(id, resolve));
    this.ws.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }));
    return answered;
  }

  async close(): Promise<void> {
    if (this.ws.readyState === WebSocket.CLOSED) return;
    const closed = new Promise((resolve) => this.ws.once("close", resolve));
    this.ws.close();
    await closed;
  }
}

/**
 * Real Chromium whose DevTools sessions, while the gate is shut, wait to open until the
 * test opens it: every upgrade of a burst is then at the server at once, as a race would
 * have it, without timing.
 */
class GatedLauncher extends TrackingLauncher {
  #gate: Promise<void> | undefined;
  #release: (() => void) | undefined;
  /** Sessions waiting at the shut gate. */
  waiting = 0;

  override async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
    const browser = await super.launch(options);
    const router = browser.cdp;
    const open = router.openChannel.bind(router);
    router.openChannel = async (...args: Parameters<typeof router.openChannel>) => {
      if (this.#gate !== undefined) {
        this.waiting++;
        await this.#gate;
      }
      return open(...args);
    };
    return browser;
  }

  shut(): void {
    this.#gate = new Promise((resolve) => (this.#release = resolve));
  }

  open(): void {
    this.#gate = undefined;
    this.#release?.();
  }
}

/** What a refused upgrade answered: its status, headers and JSON body. */
interface Refusal {
  status: number;
  headers: Record<string, unknown>;
  body: Record<string, unknown>;
}

/** What the upgrade to `url` answered; an upgrade that opens fails the test. */
async function refusal(url: string, headers: Record<string, string> = {}): Promise<Refusal> {
  const outcome = await RawClient.attempt(url, headers);
  if (outcome instanceof RawClient) {
    await outcome.close();
    throw new Error(`The upgrade to ${url} was accepted.`);
  }
  return outcome;
}

function withToken(url: string, token: string | null): string {
  const parsed = new URL(url);
  if (token === null) parsed.searchParams.delete("token");
  else parsed.searchParams.set("token", token);
  return parsed.toString();
}

/** `GET /browsers/{id}` with a chosen Host header (fetch cannot set one). */
function getWithHost(path: string, host: string): Promise<Browser> {
  const { port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: "127.0.0.1", port, path, headers: { host, authorization: `Bearer ${t.orgKey}` } }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => resolve(JSON.parse(text) as Browser));
    });
    request.on("error", reject);
    request.end();
  });
}

describe("no DevTools port", () => {
  it("starts Chromium on a pipe: no process of any browser's group listens on TCP but its egress relay", async () => {
    const client = t.client();
    const other = await client.projects.create({ name: `cdp-ports-${Date.now()}` });
    const browsers = [
      await client.browsers.create({ start_url: pages.url("/tool") }),
      await client.browsers.create(),
      await client.browsers.create({}, { projectId: other.id }),
    ];
    expect(launcher.launched.length).toBeGreaterThanOrEqual(3);
    for (const launched of launcher.launched.slice(-3)) {
      const pid = launched.pid as number;
      const args = commandLine(pid) ?? [];
      expect(args).toContain("--remote-debugging-pipe");
      expect(args.some((arg) => arg.startsWith("--remote-debugging-port"))).toBe(false);
      // Renderers, GPU and network services included: the whole process group.
      expect(processGroup(pid).length).toBeGreaterThan(1);
      // The one listener is the egress relay (socat), on loopback inside the browser's own
      // network namespace, where nothing but the browser can reach it.
      expect(listeningSocketsOfGroup(pid).map(({ command, local }) => `${command} ${local}`)).toEqual(["socat 127.0.0.1:1080"]);
    }
    for (const browser of browsers.slice(0, 2)) await client.browsers.delete(browser.id);
    await client.browsers.delete(browsers[2]?.id as string, { projectId: other.id });
    await client.projects.delete(other.id);
  });
});

describe("cdp_ws_url", () => {
  it("points at the server, with a 256-bit token stored only as its hash", async () => {
    const browser = await t.client().browsers.create();
    const url = new URL(browser.cdp_ws_url);
    expect(`${url.protocol}//${url.host}${url.pathname}`).toBe(`${t.url.replace("http:", "ws:")}/browsers/${browser.id}/cdp`);
    const token = url.searchParams.get("token") as string;
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect((await t.client().browsers.get(browser.id)).cdp_ws_url).toBe(browser.cdp_ws_url);
    // The database and its write-ahead log, where the latest commits are until a checkpoint.
    const databaseFile = join(t.dataDir, "browser-service.sqlite");
    for (const file of [databaseFile, `${databaseFile}-wal`]) {
      if (existsSync(file)) expect(readFileSync(file).includes(token), file).toBe(false);
    }
    expect(existsSync(`${databaseFile}-wal`)).toBe(true);
  });

  it("names the host the request reached; a Host that is not a plain host:port falls back to the listening address", async () => {
    const browser = await t.client().browsers.create();
    expect((await getWithHost(`/browsers/${browser.id}`, "browsers.test:4321")).cdp_ws_url).toMatch(
      new RegExp(`^ws://browsers\\.test:4321/browsers/${browser.id}/cdp\\?token=`),
    );
    expect((await getWithHost(`/browsers/${browser.id}`, "[::1]:9")).cdp_ws_url).toMatch(/^ws:\/\/\[::1\]:9\/browsers\//);
    // A Host that is not even a host and port ("evil.test/x?") is 400 invalid_host before any operation (http-conformance.test.ts).
    for (const host of ["evil!test$", "%65vil.test", ""]) {
      const fallback = (await getWithHost(`/browsers/${browser.id}`, host)).cdp_ws_url;
      expect(fallback.startsWith(`${t.url.replace("http:", "ws:")}/browsers/${browser.id}/cdp?token=`), host).toBe(true);
    }
  });

  it("follows --public-url behind a proxy or TLS", async () => {
    const proxied = await startTestServer({ launcher, publicUrl: "https://browsers.example.org/service/" });
    try {
      const browser = await proxied.client().browsers.create();
      expect(browser.cdp_ws_url).toMatch(new RegExp(`^wss://browsers\\.example\\.org/service/browsers/${browser.id}/cdp\\?token=[A-Za-z0-9_-]{43}$`));
      // A page of the public origin is the service's own; the same name over http is not.
      const direct = browser.cdp_ws_url.replace(/^wss:\/\/browsers\.example\.org\/service/, proxied.url.replace("http:", "ws:"));
      const client = await RawClient.open(direct, { origin: "https://browsers.example.org" });
      await client.close();
      expect((await refusal(direct, { origin: "http://browsers.example.org" })).status).toBe(403);
      await proxied.client().browsers.delete(browser.id);
      expect(proxied.mismatches).toEqual([]);
    } finally {
      await proxied.close();
    }
  });

  it("refuses a bad --public-url at start", async () => {
    await expect(startTestServer({ publicUrl: "ftp://example.org" })).rejects.toMatchObject({ code: "invalid_public_url" });
    await expect(startTestServer({ publicUrl: "https://example.org/?q=1" })).rejects.toMatchObject({ code: "invalid_public_url" });
  });
});

describe("credentials, checked before the upgrade", () => {
  it("refuses an upgrade from a web page (an Origin not the service's own) with 403, valid token or not; no Origin, or the service's own, opens", async () => {
    const browser = await t.client().browsers.create();
    for (const origin of ["http://evil.example", "null", "http://127.0.0.1:1", `${t.url}.evil.example`]) {
      const refused = await refusal(browser.cdp_ws_url, { origin });
      expect({ origin, status: refused.status, code: refused.body.code }).toEqual({ origin, status: 403, code: "forbidden" });
      expect(validateError(refused.body).ok).toBe(true);
    }
    // A DNS-rebinding page: its Host and Origin agree, and neither is the service's.
    const { port } = new URL(t.url);
    const rebound = await refusal(browser.cdp_ws_url, { host: `evil.example:${port}`, origin: `http://evil.example:${port}` });
    expect(rebound.status).toBe(403);
    // The service's address in another scheme or spelling is not its origin either.
    for (const origin of [`https://127.0.0.1:${port}`, `ws://127.0.0.1:${port}`, `http://a@127.0.0.1:${port}`, `http://127.0.0.1:${port}/`]) {
      expect((await refusal(browser.cdp_ws_url, { origin })).status, origin).toBe(403);
    }
    for (const headers of [{}, { origin: t.url }, { origin: `http://localhost:${port}` }]) {
      const client = await RawClient.open(browser.cdp_ws_url, headers);
      expect((await client.send("Browser.getVersion")).result).toMatchObject({ product: expect.stringMatching(/Chrome/) });
      await client.close();
    }
  });

  it("refuses a missing, wrong or another browser's token with 401 and the Error body", async () => {
    const client = t.client();
    const [one, two] = [await client.browsers.create(), await client.browsers.create()] as [Browser, Browser];
    const otherToken = new URL(two.cdp_ws_url).searchParams.get("token");
    for (const url of [
      withToken(one.cdp_ws_url, null),
      withToken(one.cdp_ws_url, "A".repeat(43)),
      withToken(one.cdp_ws_url, otherToken),
      withToken(one.cdp_ws_url, ""),
    ]) {
      const refused = await refusal(url);
      expect(refused.status, url).toBe(401);
      expect(refused.body).toMatchObject({ code: "unauthorized", message: expect.stringContaining("token") });
      expect(refused.headers["content-type"]).toMatch(/^application\/json/);
      expect(refused.headers["x-request-id"]).toMatch(/^req_/);
    }
  });

  it("refuses a WebSocket handshake it cannot complete with 400 and the Error body, not ws's plain text", async () => {
    const browser = await t.client().browsers.create();
    const { port } = new URL(t.url);
    const path = new URL(browser.cdp_ws_url).pathname + new URL(browser.cdp_ws_url).search;
    for (const [headers, problem] of [
      [{ "sec-websocket-version": "13" }, "Sec-WebSocket-Key"],
      [{ "sec-websocket-version": "13", "sec-websocket-key": "short" }, "Sec-WebSocket-Key"],
      [{ "sec-websocket-version": "12", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" }, "Sec-WebSocket-Version"],
      // Its bytes would be read as frames, and a proxy in front may have read them as a request.
      [{ "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "content-length": "5" }, "carries no body"],
      [{ "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "transfer-encoding": "chunked" }, "carries no body"],
      // Answered by ws in plain text, and only once the token had been accepted.
      [{ "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-protocol": "a b" }, "Sec-WebSocket-Protocol"],
      [{ "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-protocol": ",,x" }, "Sec-WebSocket-Protocol"],
      [{ "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-protocol": "x, x" }, "Sec-WebSocket-Protocol"],
    ] as const) {
      const answer = await new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
        const request = httpRequest({ host: "127.0.0.1", port, path, headers: { connection: "Upgrade", upgrade: "websocket", ...headers } });
        request.on("response", (response) => {
          let text = "";
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => (text += chunk));
          response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: text }));
        });
        request.on("upgrade", () => reject(new Error("upgraded")));
        request.on("error", reject);
        request.end();
      });
      expect(answer.status, problem).toBe(400);
      expect(answer.headers["x-request-id"]).toMatch(/^req_/);
      const body = JSON.parse(answer.body) as { code: string; details: { code: string; message: string }[] };
      expect(validateError(body)).toMatchObject({ ok: true });
      expect(body.details).toEqual([{ code: "invalid_websocket_handshake", message: expect.stringContaining(problem) }]);
    }
  });

  it("checks an upgrade's Host as every request's: none, two or a malformed one is 400, never a DevTools session", async () => {
    const browser = await t.client().browsers.create();
    const target = new URL(browser.cdp_ws_url);
    const handshake = "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n";
    for (const [hosts, detail] of [
      ["", "host_required"],
      ["Host: a\r\nHost: b\r\n", "invalid_host"],
      ["Host: evil host\r\n", "invalid_host"],
      ["Host: user@h\r\n", "invalid_host"],
    ] as const) {
      const answer = await new Promise<string>((resolve, reject) => {
        const socket = connect(Number(target.port), "127.0.0.1", () =>
          socket.write(`GET ${target.pathname}${target.search} HTTP/1.1\r\n${hosts}${handshake}\r\n`),
        );
        let text = "";
        socket.setEncoding("utf8");
        socket.on("data", (chunk: string) => (text += chunk));
        socket.on("close", () => resolve(text));
        socket.on("error", reject);
      });
      expect(answer, detail).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)).details).toEqual([expect.objectContaining({ code: detail })]);
    }
  });

  it("accepts an API key of the browser's project (org-wide or scoped) in Authorization, and no other", async () => {
    const client = t.client();
    const other = await client.projects.create({ name: `cdp-keys-${Date.now()}` });
    const browser = await client.browsers.create();
    const bare = withToken(browser.cdp_ws_url, null);
    const orgWide = await RawClient.open(bare, { authorization: `Bearer ${t.orgKey}` });
    expect((await orgWide.send("Browser.getVersion")).result).toMatchObject({ product: expect.stringMatching(/Chrome/) });
    await orgWide.close();
    const scoped = await RawClient.open(bare, { authorization: `Bearer ${(await t.server.issueApiKey("Default")).secret}` });
    expect((await scoped.send("Browser.getVersion")).result).toBeDefined();
    await scoped.close();
    expect((await refusal(bare, { authorization: "Bearer bsk_notakey" })).status).toBe(401);
    // Another project's key learns nothing of the browser: it gets what a browser that does not exist gets.
    const otherKey = { authorization: `Bearer ${(await t.server.issueApiKey(other.id)).secret}` };
    const missing = bare.replace(browser.id, "brw_doesnotexist0000000000000");
    const [ofAnother, ofNone] = [await refusal(bare, otherKey), await refusal(missing, otherKey)];
    expect([ofAnother.status, ofAnother.body.code]).toEqual([404, "not_found"]);
    expect([ofNone.status, ofNone.body.code]).toEqual([404, "not_found"]);
    expect(String(ofAnother.body.message).replace(browser.id, "ID")).toBe(String(ofNone.body.message).replace("brw_doesnotexist0000000000000", "ID"));
    // Without a credential, or with a token, existing or not is one answer too.
    for (const url of [bare, missing, withToken(bare, "A".repeat(43)), withToken(missing, "A".repeat(43))]) {
      expect((await refusal(url)).body, url).toMatchObject({ code: "unauthorized" });
    }
    await client.projects.delete(other.id);
  });

  it("counts failed authentications per address with the API's: past the burst, 429 rate_limited with Retry-After", async () => {
    let now = 0;
    const limited = await startTestServer({
      launcher,
      rateLimits: { perKey: { rate: 0, burst: 1 }, authFailuresPerAddress: { rate: 1, burst: 2 }, clock: () => now },
    });
    try {
      const browser = await limited.client().browsers.create();
      const wrong = withToken(browser.cdp_ws_url, "B".repeat(43));
      expect((await refusal(wrong)).status).toBe(401);
      expect((await refusal(wrong)).status).toBe(401);
      const blocked = await refusal(wrong);
      expect(blocked).toMatchObject({ status: 429, body: { code: "rate_limited" } });
      expect(Number(blocked.headers["retry-after"])).toBeGreaterThanOrEqual(1);
      // A blocked address is refused whatever it sends, until the bucket refills.
      expect((await refusal(browser.cdp_ws_url)).status).toBe(429);
      now += 5_000;
      const raw = await RawClient.open(browser.cdp_ws_url);
      expect((await raw.send("Browser.getVersion")).result).toBeDefined();
      await raw.close();
      await limited.client().browsers.delete(browser.id);
    } finally {
      await limited.close();
    }
  });

  it("cuts a refused upgrade's connection that its client never closes, so that refusals hold none of its address's connections", async () => {
    // One connection per address: what a refusal holds, nothing else can have.
    const server = await startTestServer({ launcher: new TrackingLauncher(), maxClientConnections: 1 });
    try {
      const { port } = new URL(server.url);
      const status = async () =>
        (await fetch(`${server.url}/org/limits`, { headers: { authorization: `Bearer ${server.orgKey}`, connection: "close" } })).status;
      // The client keeps its side open after the answer (no FIN in turn), as a half-open attacker would.
      const socket = connect({ port: Number(port), host: "127.0.0.1", allowHalfOpen: true });
      socket.setEncoding("latin1");
      let answer = "";
      socket.on("data", (chunk: string) => (answer += chunk));
      socket.on("error", () => undefined);
      socket.write(
        `GET /browsers/brw_aaaaaaaaaaaaaaaaaaaaaaaa/cdp?token=${"A".repeat(43)} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
      await expect.poll(() => answer).toMatch(/^HTTP\/1\.1 401/);
      expect(await status()).toBe(429);
      // Past the grace the refused connection is the server's no more.
      await expect.poll(status, { timeout: 10_000, interval: 500 }).toBe(200);
      socket.destroy();
    } finally {
      await server.close();
    }
  });

  it("a deleted browser's token opens nothing (401); its project's key is told it is gone (404)", async () => {
    const client = t.client();
    const browser = await client.browsers.create();
    await client.browsers.delete(browser.id);
    expect(await refusal(browser.cdp_ws_url)).toMatchObject({ status: 401, body: { code: "unauthorized" } });
    expect(await refusal(withToken(browser.cdp_ws_url, null), { authorization: `Bearer ${t.orgKey}` })).toMatchObject({
      status: 404,
      body: { code: "not_found" },
    });
    expect((await refusal(browser.cdp_ws_url.replace(browser.id, "brw_%ZZ"))).status).toBe(404);
  });

  it("a crashed browser's token no longer opens anything", async () => {
    const browser = await t.client().browsers.create();
    const launched = launcher.latest();
    const exited = new Promise((resolve) => launched.onExit(resolve));
    process.kill(launched.pid as number, "SIGKILL");
    await exited;
    expect((await t.client().browsers.get(browser.id)).status).toBe("crashed");
    expect((await refusal(browser.cdp_ws_url)).status).toBe(401);
    expect((await refusal(withToken(browser.cdp_ws_url, null), { authorization: `Bearer ${t.orgKey}` })).body).toMatchObject({ code: "conflict" });
  });
});

describe("drivers", () => {
  it("Playwright connectOverCDP opens pages, evaluates and takes screenshots", async () => {
    const browser = await t.client().browsers.create();
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    try {
      const page = await playwright.contexts()[0]!.newPage();
      await page.goto(pages.url("/plain"));
      expect(await page.evaluate(() => document.title)).toBe("Plain");
      const png = await page.screenshot();
      expect(png.subarray(1, 4).toString()).toBe("PNG");
    } finally {
      await playwright.close();
    }
    // Playwright's close of a connected browser only disconnects: the browser keeps running.
    expect((await t.client().browsers.get(browser.id)).status).toBe("running");
  });

  it("Puppeteer connect opens pages, evaluates and takes screenshots; its browser.close() deletes the browser", async () => {
    const client = t.client();
    const before = (await client.limits.get()).concurrent_sessions_used;
    const browser = await client.browsers.create();
    const pid = launcher.latest().pid as number;
    expect((await client.limits.get()).concurrent_sessions_used).toBe((before ?? 0) + 1);
    const connected = await puppeteer.connect({ browserWSEndpoint: browser.cdp_ws_url, defaultViewport: { width: 1280, height: 800 } });
    const page = await connected.newPage();
    await page.goto(pages.url("/plain"));
    expect(await page.evaluate(() => document.title)).toBe("Plain");
    const png = Buffer.from(await page.screenshot());
    expect(png.subarray(1, 4).toString()).toBe("PNG");
    await connected.close();
    await expect
      .poll(async () =>
        client.browsers.get(browser.id).then(
          () => "present",
          (error: { status: number }) => error.status,
        ),
      )
      .toBe(404);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(before);
    await expect.poll(() => processExists(pid)).toBe(false);
  });
});

describe("many clients, one pipe", () => {
  it("two drivers and WebMCP through the API at once; one leaving harms neither the other nor WebMCP", async () => {
    const client = t.client();
    const browser = await client.browsers.create();
    const playwright = await chromium.connectOverCDP(browser.cdp_ws_url);
    const connected = await puppeteer.connect({ browserWSEndpoint: browser.cdp_ws_url, defaultViewport: null });
    try {
      const [toolTab, otherTab] = await Promise.all([
        playwright
          .contexts()[0]!
          .newPage()
          .then(async (page) => (await page.goto(pages.url("/tool")), page)),
        connected.newPage().then(async (page) => (await page.goto(pages.url("/plain")), page)),
      ]);
      const [tool] = await waitForTools(client, browser.id, (tools) => tools.length === 1);
      const [result, title, screenshot] = await Promise.all([
        client.webmcp.invoke(browser.id, { tool_ref: tool!.tool_ref, input: { n: 21 } }),
        otherTab.evaluate(() => document.title),
        toolTab.screenshot(),
      ]);
      expect(result).toMatchObject({ status: "completed", output: { twice: 42 } });
      expect(title).toBe("Plain");
      expect(screenshot.length).toBeGreaterThan(100);

      await playwright.close();
      expect(await otherTab.evaluate(() => 1 + 1)).toBe(2);
      const again = await client.webmcp.listTools(browser.id);
      expect(again.tools.map((each) => each.name)).toEqual(["double"]);
      expect(await client.webmcp.invoke(browser.id, { tool_ref: again.tools[0]!.tool_ref, input: { n: 2 } })).toMatchObject({
        status: "completed",
        output: { twice: 4 },
      });
    } finally {
      if (playwright.isConnected()) await playwright.close();
      await connected.disconnect();
    }
  });

  it("a client sees only its own sessions and cannot name another's", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/plain") });
    const a = await RawClient.open(browser.cdp_ws_url);
    const b = await RawClient.open(browser.cdp_ws_url);
    try {
      expect(
        (await a.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: false, flatten: true, filter: [{ type: "page" }] })).result,
      ).toEqual({});
      await expect.poll(() => a.received.filter((message) => message.method === "Target.attachedToTarget").length).toBeGreaterThan(0);
      const attached = a.received.find((message) => message.method === "Target.attachedToTarget") as { params: { sessionId: string } };
      const aSession = attached.params.sessionId;
      expect((await a.send("Runtime.evaluate", { expression: "1 + 1", returnByValue: true }, aSession)).result).toMatchObject({ result: { value: 2 } });
      expect((await a.send("Runtime.enable", {}, aSession)).result).toEqual({});
      await a.send("Runtime.evaluate", { expression: "console.log('only for a')" }, aSession);

      expect((await b.send("Runtime.evaluate", { expression: "1" }, aSession)).error).toMatchObject({ code: -32001 });
      expect((await b.send("Target.detachFromTarget", { sessionId: aSession })).error).toMatchObject({ code: -32001 });
      expect((await b.send("Tethering.bind", { port: 0 })).error).toMatchObject({ message: expect.stringContaining("Tethering") });
      expect((await b.send("Browser.getVersion")).result).toBeDefined();
      await expect.poll(() => a.received.some((message) => message.method === "Runtime.consoleAPICalled")).toBe(true);
      const seenByB = JSON.stringify(b.received);
      expect(seenByB).not.toContain(aSession);
      expect(seenByB).not.toContain("only for a");
      // Responses come back with the client's own ids, and no sessionId for its browser session.
      expect(b.received.every((message) => typeof message.id === "number" && message.sessionId === undefined)).toBe(true);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("downloads land in the browser's own folder, whatever path a client asks for", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/download") });
    const { userDataDir } = launcher.latest();
    const raw = await RawClient.open(browser.cdp_ws_url);
    try {
      const wanted = join(t.dataDir, "not-here");
      expect((await raw.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: wanted, eventsEnabled: true })).result).toEqual({});
      const { targetInfos } = (await raw.send("Target.getTargets")).result as { targetInfos: { targetId: string; type: string }[] };
      const page = targetInfos.find((info) => info.type === "page") as { targetId: string };
      const { sessionId } = (await raw.send("Target.attachToTarget", { targetId: page.targetId, flatten: true })).result as { sessionId: string };
      // start_url may still be loading.
      await expect
        .poll(
          async () =>
            (
              (await raw.send("Runtime.evaluate", { expression: "document.getElementById('get') !== null", returnByValue: true }, sessionId)).result as {
                result: { value: boolean };
              }
            ).result.value,
        )
        .toBe(true);
      const clicked = await raw.send(
        "Runtime.evaluate",
        { expression: "document.getElementById('get').click(), document.title", userGesture: true, returnByValue: true },
        sessionId,
      );
      expect(clicked.result).toMatchObject({ result: { value: "Download" } });
      const downloads = join(userDataDir as string, "downloads");
      await expect
        .poll(
          () =>
            raw.received
              .filter((m) => String(m.method).startsWith("Browser.download"))
              .map((m) => JSON.stringify(m))
              .join(),
          { timeout: 10_000 },
        )
        .toContain("completed");
      // The folder is a tmpfs inside the browser's sandbox; root sees it through the browser's process.
      if (process.getuid?.() === 0)
        await expect.poll(() => readdirSync(insideSandbox(launcher.latest(), downloads)), { timeout: 10_000 }).toContain("note.txt");
      expect(existsSync(wanted)).toBe(false);
    } finally {
      await raw.close();
    }
  });
});

describe("bounds", () => {
  it("at most maxClients WebSocket clients per browser: the next is 429 before the upgrade", async () => {
    const browser = await t.client().browsers.create();
    const clients = [await RawClient.open(browser.cdp_ws_url), await RawClient.open(browser.cdp_ws_url), await RawClient.open(browser.cdp_ws_url)];
    const refused = await refusal(browser.cdp_ws_url);
    expect(refused).toMatchObject({ status: 429, body: { code: "cdp_client_limit_exceeded" } });
    await clients[0]!.close();
    await expect
      .poll(async () =>
        RawClient.open(browser.cdp_ws_url).then(
          (client) => (clients.push(client), "open"),
          () => "refused",
        ),
      )
      .toBe("open");
    for (const client of clients) await client.close();
  });

  it("a burst of upgrades at once opens exactly maxClients; the others are 429 until one leaves", async () => {
    // Each upgrade awaits its session from the browser before it completes: the slot must
    // be taken before that wait, or every upgrade of a burst sees room.
    const gated = new GatedLauncher();
    const capped = await startTestServer({ launcher: gated, cdpLimits: { maxClients: 2, maxMessageBytes: MIB, maxBufferedBytes: MIB } });
    const opened: RawClient[] = [];
    let leaving: WebSocket | undefined;
    try {
      const browser = await capped.client().browsers.create();
      gated.shut();
      let refused = 0;
      const burst = Array.from({ length: 10 }, () =>
        RawClient.attempt(browser.cdp_ws_url).then((outcome) => {
          if (!(outcome instanceof RawClient)) refused++;
          return outcome;
        }),
      );
      // Every upgrade is either refused or waiting for its session before any session opens.
      await expect.poll(() => gated.waiting + refused, { timeout: 10_000 }).toBe(10);
      gated.open();
      const outcomes = await Promise.all(burst);
      opened.push(...outcomes.filter((outcome): outcome is RawClient => outcome instanceof RawClient));
      expect(opened).toHaveLength(2);
      expect(outcomes.filter((outcome) => !(outcome instanceof RawClient))).toEqual(
        Array.from({ length: 8 }, () => expect.objectContaining({ status: 429, body: expect.objectContaining({ code: "cdp_client_limit_exceeded" }) })),
      );
      for (const client of opened) expect((await client.send("Browser.getVersion")).result).toBeDefined();
      // The server frees a slot when it sees the close: until then an upgrade is still refused.
      const fill = async () => {
        const outcome = await RawClient.attempt(browser.cdp_ws_url);
        if (outcome instanceof RawClient) opened.push(outcome);
        return opened.length;
      };
      await opened.shift()?.close();
      await expect.poll(fill, { timeout: 10_000 }).toBe(2);
      expect(await refusal(browser.cdp_ws_url)).toMatchObject({ status: 429, body: { code: "cdp_client_limit_exceeded" } });

      // An upgrade whose client leaves while its session is being opened gives its slot back.
      await opened.shift()?.close();
      gated.shut();
      const waiting = gated.waiting;
      leaving = new WebSocket(browser.cdp_ws_url);
      leaving.on("error", () => undefined);
      await expect.poll(() => gated.waiting, { timeout: 10_000 }).toBe(waiting + 1);
      leaving.terminate();
      gated.open();
      await expect.poll(fill, { timeout: 10_000 }).toBe(2);
      expect(await refusal(browser.cdp_ws_url)).toMatchObject({ status: 429, body: { code: "cdp_client_limit_exceeded" } });
      for (const client of opened.splice(0)) await client.close();
      await capped.client().browsers.delete(browser.id);
      expect(capped.mismatches).toEqual([]);
    } finally {
      gated.open();
      leaving?.terminate();
      for (const client of opened) await client.close();
      await capped.close();
    }
  });

  it("a message over the size cap closes only its sender (1009)", async () => {
    const browser = await t.client().browsers.create();
    const big = await RawClient.open(browser.cdp_ws_url);
    const other = await RawClient.open(browser.cdp_ws_url);
    const closed = new Promise<number>((resolve) => big.ws.once("close", resolve));
    big.ws.send(JSON.stringify({ id: 1, method: "Runtime.evaluate", params: { expression: `"${"x".repeat(MIB)}"` } }));
    expect(await closed).toBe(1009);
    expect((await other.send("Browser.getVersion")).result).toBeDefined();
    await other.close();
  });

  it("a client that stops reading is disconnected once its queue passes the cap; others go on", async () => {
    const browser = await t.client().browsers.create({ start_url: pages.url("/plain") });
    const slow = await RawClient.open(browser.cdp_ws_url);
    const other = await RawClient.open(browser.cdp_ws_url);
    // The third of maxClients: while the slow client holds its slot, no other upgrade opens.
    const third = await RawClient.open(browser.cdp_ws_url);
    const { targetInfos } = (await slow.send("Target.getTargets")).result as { targetInfos: { targetId: string; type: string }[] };
    const page = targetInfos.find((info) => info.type === "page") as { targetId: string };
    const { sessionId } = (await slow.send("Target.attachToTarget", { targetId: page.targetId, flatten: true })).result as { sessionId: string };
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      slow.ws.once("close", (code: number, reason: Buffer) => resolve({ code, reason: reason.toString() })),
    );
    // Stop reading: the kernel's buffers fill, then the server's queue for this client.
    (slow.ws as unknown as { _socket: { pause(): void; resume(): void } })._socket.pause();
    for (let i = 0; i < 40; i++) {
      slow.ws.send(JSON.stringify({ id: 1000 + i, method: "Runtime.evaluate", params: { expression: "'y'.repeat(900000)", returnByValue: true }, sessionId }));
    }
    // Meanwhile the other client is answered.
    expect((await other.send("Browser.getVersion")).result).toBeDefined();
    // The server lets go of the slow client while it still reads nothing: its slot opens.
    const latecomers: RawClient[] = [];
    const upgrade = async () => {
      const outcome = await RawClient.attempt(browser.cdp_ws_url);
      if (!(outcome instanceof RawClient)) return outcome.status;
      latecomers.push(outcome);
      return "open";
    };
    await expect.poll(upgrade, { timeout: 30_000 }).toBe("open");
    (slow.ws as unknown as { _socket: { resume(): void } })._socket.resume();
    // Dropped, not closed: the server's close frame (1008) would wait behind the very
    // output the client did not read, which the server lets go of at once, so the client
    // sees the connection end without one (1006, no reason).
    expect(await closed).toEqual({ code: 1006, reason: "" });
    expect(slow.received.length).toBeLessThan(41);
    expect((await other.send("Browser.getVersion")).result).toBeDefined();
    expect((await third.send("Browser.getVersion")).result).toBeDefined();
    for (const client of [other, third, ...latecomers]) await client.close();
  });
});
