import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import type { CdpConnection } from "../src/cdp/cdp-connection.js";
import { CdpPipe, CdpRouter, type ChannelMessage, type OversizedMessage } from "../src/index.js";
import { FormFillCheck } from "../src/webmcp/form-fill-check.js";
import { InvocationEvents, UNCLAIMED_EVENT_LIMITS } from "../src/webmcp/invocation-events.js";

describe("the DevTools pipe", () => {
  function pipe(maxMessageBytes: number) {
    const fromBrowser = new PassThrough();
    const toBrowser = new PassThrough();
    const cdp = new CdpPipe(toBrowser, fromBrowser, { maxMessageBytes });
    const messages: string[] = [];
    const dropped: OversizedMessage[] = [];
    cdp.onMessage((json) => messages.push(json));
    cdp.onOversized((message) => dropped.push(message));
    return { cdp, fromBrowser, toBrowser, messages, dropped };
  }

  it("splits NUL-terminated messages however the chunks fall", () => {
    const { fromBrowser, messages } = pipe(1024);
    fromBrowser.write('{"id":1,"res');
    fromBrowser.write('ult":{}}\0{"method":"A.b","params":{}}\0{"id"');
    fromBrowser.write(":2}\0");
    expect(messages).toEqual(['{"id":1,"result":{}}', '{"method":"A.b","params":{}}', '{"id":2}']);
  });

  it("drops a message over the cap as it streams, keeping its ends, and delivers the next one", () => {
    const { fromBrowser, messages, dropped } = pipe(1000);
    const body = "x".repeat(300);
    fromBrowser.write(`{"method":"WebMCP.toolResponded","params":{"invocationId":"inv-1","status":"Completed","output":"${body}`);
    for (let i = 0; i < 50; i++) fromBrowser.write(body);
    fromBrowser.write(`"},"sessionId":"S1"}\0{"id":7,"result":{}}\0`);
    expect(messages).toEqual(['{"id":7,"result":{}}']);
    expect(dropped).toHaveLength(1);
    expect(dropped[0]?.head).toMatch(/^\{"method":"WebMCP.toolResponded","params":\{"invocationId":"inv-1","status":"Completed"/);
    expect(dropped[0]?.tail.endsWith('"sessionId":"S1"}')).toBe(true);
    expect(dropped[0]?.bytes).toBeGreaterThan(15_000);
  });

  it("sends messages NUL-terminated", () => {
    const { cdp, toBrowser } = pipe(1024);
    const written: Buffer[] = [];
    toBrowser.on("data", (chunk: Buffer) => written.push(chunk));
    expect(cdp.send('{"id":1,"method":"Browser.getVersion"}')).toBe(true);
    expect(Buffer.concat(written).toString()).toBe('{"id":1,"method":"Browser.getVersion"}\0');
  });
});

describe("the router, for large messages", () => {
  /** A router on a fake pipe that answers attachToBrowserTarget with sessions B1, B2, ... */
  async function routerWithChannels(count: number) {
    const fromBrowser = new PassThrough();
    const toBrowser = new PassThrough();
    const router = new CdpRouter(new CdpPipe(toBrowser, fromBrowser, { maxMessageBytes: 64 * 1024 * 1024 }), { downloadPath: "/tmp/downloads" });
    const sentToBrowser: Record<string, unknown>[] = [];
    let sessions = 0;
    toBrowser.on("data", (chunk: Buffer) => {
      for (const text of chunk.toString().split("\0").filter(Boolean)) {
        const message = JSON.parse(text) as { id: number; method: string };
        sentToBrowser.push(message);
        if (message.method === "Target.attachToBrowserTarget")
          fromBrowser.write(`${JSON.stringify({ id: message.id, result: { sessionId: `B${++sessions}` } })}\0`);
      }
    });
    const channels = [];
    for (let i = 0; i < count; i++) {
      const channel = await router.openChannel();
      const received: ChannelMessage[] = [];
      channel.onMessage((message) => received.push(message));
      channels.push({ channel, received });
    }
    return { fromBrowser, sentToBrowser, channels };
  }

  it("routes a large answer by its ends: the client's own id back, its browser session left out, nobody else told", async () => {
    const { fromBrowser, sentToBrowser, channels } = await routerWithChannels(2);
    const [a, b] = channels as [(typeof channels)[0], (typeof channels)[0]];
    a.channel.send({ id: 41, method: "Page.captureScreenshot" });
    const out = sentToBrowser.at(-1) as { id: number; sessionId: string };
    expect(out.sessionId).toBe("B1");
    const data = "A".repeat(2 * 1024 * 1024);
    fromBrowser.write(`{"id":${out.id},"result":{"data":"${data}"},"sessionId":"B1"}\0`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.received).toHaveLength(1);
    expect(typeof a.received[0]).toBe("string");
    expect(JSON.parse(a.received[0] as string)).toEqual({ id: 41, result: { data } });
    expect(b.received).toEqual([]);
  });

  it("refuses a client's command rather than buffer past 64 MiB that the browser has not read", async () => {
    const fromBrowser = new PassThrough();
    // The browser reads nothing after the attach: its end of the pipe is never drained.
    const toBrowser = new PassThrough({ highWaterMark: 1024 });
    const router = new CdpRouter(new CdpPipe(toBrowser, fromBrowser, { maxMessageBytes: 1024 * 1024 }), { downloadPath: "/tmp/downloads" });
    const opened = router.openChannel();
    const attach = JSON.parse((toBrowser.read() as Buffer).toString().replace("\0", "")) as { id: number };
    fromBrowser.write(`${JSON.stringify({ id: attach.id, result: { sessionId: "B1" } })}\0`);
    const channel = await opened;
    const received: ChannelMessage[] = [];
    channel.onMessage((message) => received.push(message));
    const script = "x".repeat(8 * 1024 * 1024);
    for (let id = 1; id <= 10; id++) channel.send({ id, method: "Runtime.evaluate", params: { expression: script } });
    expect(toBrowser.writableLength).toBeLessThanOrEqual(72 * 1024 * 1024);
    const refusedIds = received.map((message) => (message as { id: number }).id);
    expect(refusedIds).toEqual([9, 10]);
    expect(received[0]).toMatchObject({ error: { message: expect.stringContaining("not reading commands") } });
  });

  it("routes a large event of a child session to the channel that owns it only", async () => {
    const { fromBrowser, channels } = await routerWithChannels(2);
    const [a, b] = channels as [(typeof channels)[0], (typeof channels)[0]];
    fromBrowser.write(`${JSON.stringify({ method: "Target.attachedToTarget", params: { sessionId: "P1", targetInfo: { type: "page" } }, sessionId: "B2" })}\0`);
    const big = "E".repeat(2 * 1024 * 1024);
    fromBrowser.write(`{"method":"Runtime.consoleAPICalled","params":{"text":"${big}"},"sessionId":"P1"}\0`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(a.received).toEqual([]);
    expect(b.received).toHaveLength(2);
    expect(JSON.parse(b.received[1] as string)).toMatchObject({ method: "Runtime.consoleAPICalled", sessionId: "P1" });
  });
});

describe("events of invocations nobody watches yet", () => {
  const responded = (invocationId: string, output?: unknown) => ({ invocationId, status: "Completed" as const, output });

  it("are not kept at all unless one of the server's own invocations is on its way", () => {
    const events = new InvocationEvents();
    events.responded(responded("other-client"));
    expect(events.kept).toEqual({ count: 0, bytes: 0 });
    const seen: unknown[] = [];
    events.watch("other-client", { invoked: () => undefined, responded: (event) => seen.push(event) });
    expect(seen).toEqual([]);
  });

  it("are kept while an invokeTool awaits its reply, replayed to the watcher, and dropped after", () => {
    const events = new InvocationEvents();
    const release = events.expect();
    events.responded(responded("mine", { sum: 3 }));
    events.responded(responded("someone-else's"));
    const seen: unknown[] = [];
    events.watch("mine", { invoked: () => undefined, responded: (event) => seen.push(event) });
    expect(seen).toEqual([responded("mine", { sum: 3 })]);
    release();
    expect(events.kept).toEqual({ count: 0, bytes: 0 });
  });

  it("are bounded in count and bytes, the oldest going first", () => {
    const events = new InvocationEvents();
    const release = events.expect();
    for (let i = 0; i < UNCLAIMED_EVENT_LIMITS.count + 50; i++) events.responded(responded(`n${i}`));
    expect(events.kept.count).toBe(UNCLAIMED_EVENT_LIMITS.count);
    const big = "y".repeat(1024 * 1024);
    for (let i = 0; i < 20; i++) events.responded(responded(`big${i}`, { big }));
    expect(events.kept.bytes).toBeLessThanOrEqual(UNCLAIMED_EVENT_LIMITS.bytes);
    const seen: unknown[] = [];
    events.watch("n0", { invoked: () => undefined, responded: (event) => seen.push(event) });
    events.watch("big19", { invoked: () => undefined, responded: (event) => seen.push(event) });
    expect(seen).toEqual([responded("big19", { big })]);
    release();
  });
});

describe("the form-fill check", () => {
  it("sends the input to the page once, then only object handles", async () => {
    const sent: { method: string; params: object }[] = [];
    const answers: Record<string, (params: Record<string, unknown>) => unknown> = {
      "Page.createIsolatedWorld": () => ({ executionContextId: 5 }),
      "DOM.resolveNode": () => ({ object: { objectId: "form-1" } }),
      "Runtime.callFunctionOn": (params) => (params.executionContextId === 5 ? { result: { objectId: "input-1" } } : { result: { value: false } }),
      "Runtime.releaseObject": () => ({}),
      "Runtime.releaseObjectGroup": () => ({}),
    };
    const connection = {
      send: async (method: string, params: Record<string, unknown>) => {
        sent.push({ method, params });
        return answers[method]?.(params);
      },
    } as unknown as CdpConnection;
    const input = { query: "a-marker-only-the-input-holds".repeat(1000) };
    const check = new FormFillCheck(connection, { sessionId: "S", frameId: "F", backendNodeId: 9 }, input);
    for (let i = 0; i < 5; i++) expect(await check.reflects()).toBe(false);
    check.dispose();
    await new Promise((resolve) => setImmediate(resolve));
    const carryingInput = sent.filter((message) => JSON.stringify(message.params).includes("a-marker-only-the-input-holds"));
    expect(carryingInput).toHaveLength(1);
    expect(sent.filter((message) => message.method === "Runtime.callFunctionOn")).toHaveLength(6);
    expect(sent.at(-1)).toMatchObject({ method: "Runtime.releaseObjectGroup" });
  });
});
