import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { PassThrough } from "node:stream";
import type { FastifyBaseLogger } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { WebSocketServer } from "ws";
import { CdpPipe } from "../src/cdp/cdp-pipe.js";
import { CdpRouter } from "../src/cdp/cdp-router.js";
import { bridge } from "../src/cdp/client-bridge.js";
import { MessageBudget } from "../src/cdp/message-budget.js";
import type { CdpEndpointLimits } from "../src/index.js";
import { CdpRawClient } from "./support/cdp-raw-client.js";

// The router and the bridge between a client and a browser, with the browser's end of the
// pipe held by the test: what exactly the browser receives for a client's text, and what
// happens when the browser sends what cannot be relayed. (The other DevTools tests drive
// real Chromium, which never sends such messages.)

/** The browser's end of a pipe: every message the router wrote, and a way to answer. */
class BrowserEnd {
  readonly written: string[] = [];
  readonly pipe: CdpPipe;
  readonly #fromBrowser = new PassThrough();
  #sessions = 0;

  constructor() {
    const toBrowser = new PassThrough();
    let pending = "";
    toBrowser.on("data", (chunk: Buffer) => {
      pending += chunk.toString("utf8");
      let end: number;
      while ((end = pending.indexOf("\0")) !== -1) {
        const text = pending.slice(0, end);
        pending = pending.slice(end + 1);
        this.written.push(text);
        this.#answer(JSON.parse(text) as { id: number; method: string; sessionId?: string });
      }
    });
    this.pipe = new CdpPipe(toBrowser, this.#fromBrowser, { maxMessageBytes: 64 * 1024 * 1024 });
  }

  /** Writes a message from the browser, as it is. */
  send(text: string): void {
    this.#fromBrowser.write(`${text}\0`);
  }

  #answer(command: { id: number; method: string; sessionId?: string }): void {
    const result = command.method === "Target.attachToBrowserTarget" ? { sessionId: `session-${++this.#sessions}` } : {};
    this.send(JSON.stringify({ id: command.id, result, ...(command.sessionId === undefined ? {} : { sessionId: command.sessionId }) }));
  }
}

const LIMITS: CdpEndpointLimits = {
  maxClients: 8,
  maxMessageBytes: 16 * 1024 * 1024,
  maxBufferedBytes: 64 * 1024 * 1024,
  messageRate: 0,
  byteRate: 0,
  projectMessageRate: 0,
  projectByteRate: 0,
  maxPending: 100,
};

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A WebSocket server that bridges each client to a new channel of `router`; what it logged as errors. */
async function endpoint(router: CdpRouter): Promise<{ url: string; errors: string[] }> {
  const errors: string[] = [];
  const log = {
    error: (object: { err?: Error }, message: string) => void errors.push(`${message}: ${object.err?.message ?? ""}`),
  } as unknown as FastifyBaseLogger;
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  servers.push(server);
  server.on("connection", (ws: WebSocket) => {
    ws.pause();
    void router.openChannel({ maxPending: LIMITS.maxPending }).then((channel) => {
      bridge(ws, channel, { limits: LIMITS, budgets: [new MessageBudget({ messageRate: 0, byteRate: 0 })], log });
      ws.resume();
    });
  });
  await once(server, "listening");
  return { url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`, errors };
}

describe("what the browser receives", () => {
  it("a command's params as the client wrote them, unless the server looks into that method: then its own serialization of what it checked", async () => {
    const browser = new BrowserEnd();
    const router = new CdpRouter(browser.pipe, { downloadPath: "/profile/downloads" });
    const { url } = await endpoint(router);
    const client = await CdpRawClient.open(url);
    const raw = '{ "expression" : "\\u00e9t\\u00e9",\n "returnByValue":true }';
    client.sendRaw(`{"id":1,"method":"Runtime.evaluate","params":${raw}}`);
    await client.answer(1);
    expect(browser.written.at(-1)).toBe(
      `{"id":${JSON.parse(browser.written.at(-1) as string).id},"method":"Runtime.evaluate","sessionId":"session-1","params":${raw}}`,
    );
    client.sendRaw('{"id":2,"method":"Browser.setDownloadBehavior","params":{ "behavior":"allow", "downloadPath":"/etc", "downloadPath":"/root" }}');
    await client.answer(2);
    expect(JSON.parse(browser.written.at(-1) as string)).toMatchObject({ params: { behavior: "allow", downloadPath: "/profile/downloads" } });
    expect(browser.written.at(-1)).toContain('"params":{"behavior":"allow","downloadPath":"/profile/downloads"}');
    await client.close();
  });

  it("never a NUL: an escaped one stays an escape, a raw one is refused before anything is written", async () => {
    const browser = new BrowserEnd();
    const router = new CdpRouter(browser.pipe, { downloadPath: "/d" });
    const { url } = await endpoint(router);
    const client = await CdpRawClient.open(url);
    const before = browser.written.length;
    client.sendRaw('{"id":1,"method":"Runtime.evaluate","params":{"expression":"a\\u0000b"},"sessionId":"x\\u0000y"}');
    expect((await client.answer(1)).error).toMatchObject({ code: -32001 });
    client.sendRaw('{"id":2,"method":"Runtime.evaluate","params":{"expression":"a\\u0000b"}}');
    await client.answer(2);
    client.sendRaw('{"id":3,"method":"Runtime.evaluate","params":{"expression":"a\u0000{\\"id\\":1,\\"method\\":\\"Browser.close\\"}"}}');
    expect((await client.answer(3)).error).toMatchObject({ code: -32700 });
    expect(browser.written.slice(before)).toHaveLength(1);
    expect(browser.written.slice(before)[0]).toContain('"params":{"expression":"a\\u0000b"}');
    await client.close();
  });
});

describe("what the browser sends", () => {
  it("relays what the browser sends for a client as its text, unparsed: an event nested 20,000 deep reaches the client whole", async () => {
    const browser = new BrowserEnd();
    const router = new CdpRouter(browser.pipe, { downloadPath: "/d" });
    const { url, errors } = await endpoint(router);
    const client = await CdpRawClient.open(url);
    await client.send("Browser.getVersion");
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    const received = new Promise<string>((resolve) =>
      client.ws.on("message", (data: Buffer) => data.toString().startsWith('{"method":"Deep.event"') && resolve(data.toString())),
    );
    browser.send(`{"method":"Deep.event","params":{"x":${deep}},"sessionId":"session-1"}`);
    // Its own browser session's id left out, as for every message of that session.
    expect(await received).toBe(`{"method":"Deep.event","params":{"x":${deep}}}`);
    expect((await client.send("Browser.getVersion")).result).toEqual({});
    expect(errors).toEqual([]);
    await client.close();
  });

  it("a message the router must read and cannot relay (a Target event nested 20,000 deep) closes only its client (1011) and is logged; other clients go on", async () => {
    const browser = new BrowserEnd();
    const router = new CdpRouter(browser.pipe, { downloadPath: "/d" });
    const { url, errors } = await endpoint(router);
    const victim = await CdpRawClient.open(url);
    const other = await CdpRawClient.open(url);
    await victim.send("Browser.getVersion");
    await other.send("Browser.getVersion");
    const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
    browser.send(`{"method":"Target.targetInfoChanged","params":{"x":${deep}},"sessionId":"session-1"}`);
    expect(await victim.closed).toMatchObject({ code: 1011 });
    expect(errors).toEqual([expect.stringContaining("relaying a message from the browser failed")]);
    expect((await other.send("Browser.getVersion")).result).toEqual({});
    expect(router.channelCount).toBe(1);
    await other.close();
  });

  it("messages that are not objects are dropped; the router goes on", async () => {
    const browser = new BrowserEnd();
    const failures: unknown[] = [];
    const router = new CdpRouter(browser.pipe, { downloadPath: "/d", onError: (error) => failures.push(error) });
    const { url } = await endpoint(router);
    const client = await CdpRawClient.open(url);
    for (const text of ["null", "[]", "7", '"x"', "{", '{"id":null}', '{"method":"Target.detachedFromTarget","params":null}']) browser.send(text);
    expect((await client.send("Browser.getVersion")).result).toEqual({});
    expect(failures).toEqual([]);
    await client.close();
  });
});
