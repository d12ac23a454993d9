import type { FastifyBaseLogger } from "fastify";
import { describe, expect, it, vi } from "vitest";
import { DEFAULT_LIVE_VIEW_LIMITS } from "../src/app/server.js";
import { liveViewAccess, liveViewToken, newBrowserToken } from "../src/cdp/browser-token.js";
import type { CdpConnection } from "../src/cdp/cdp-connection.js";
import { MessageBudget } from "../src/cdp/message-budget.js";
import { BrowserLiveView } from "../src/live-view/browser-live-view.js";
import { inputCommand } from "../src/live-view/input-commands.js";
import { SocketViewer, type ViewerSocket } from "../src/live-view/socket-viewer.js";
import { TabScreencast } from "../src/live-view/tab-screencast.js";
import { parseViewerMessage, ViewerMessageError } from "../src/live-view/viewer-messages.js";
import type { BrowserWebMcp } from "../src/webmcp/browser-webmcp.js";

// The live view's parts on their own: its tokens, what it reads from a viewer, the
// DevTools commands it builds, and how it sends frames to a viewer that reads slowly.

describe("live view tokens", () => {
  it("are two separate credentials derived one way from the browser's DevTools token", () => {
    const cdp = newBrowserToken();
    const control = liveViewToken(cdp, "control");
    const watch = liveViewToken(cdp, "watch");
    expect(control).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(new Set([cdp, control, watch]).size).toBe(3);
    expect(liveViewAccess(control, cdp)).toBe("control");
    expect(liveViewAccess(watch, cdp)).toBe("watch");
    // The DevTools token itself, another browser's tokens, and any token once the browser is gone open nothing.
    expect(liveViewAccess(cdp, cdp)).toBeUndefined();
    expect(liveViewAccess(control, newBrowserToken())).toBeUndefined();
    expect(liveViewAccess(control, undefined)).toBeUndefined();
  });
});

describe("viewer messages", () => {
  it("reads the messages a viewer may send, field by field", () => {
    expect(parseViewerMessage('{"type":"mouse","event":"down","x":10.5,"y":20,"button":"left","clicks":1,"modifiers":2}')).toEqual({
      type: "mouse",
      event: "down",
      x: 10.5,
      y: 20,
      button: "left",
      clicks: 1,
      modifiers: 2,
    });
    expect(parseViewerMessage('{"type":"key","event":"down","key":"a","code":"KeyA","text":"a","keyCode":65}')).toMatchObject({ text: "a", keyCode: 65 });
    expect(parseViewerMessage('{"type":"invoke","id":3,"request":{"tool_ref":"t","input":{}}}')).toEqual({
      type: "invoke",
      id: 3,
      request: { tool_ref: "t", input: {} },
    });
  });

  it.each([
    ["not JSON", "{"],
    ["an array", "[]"],
    ["an unknown type", '{"type":"Runtime.evaluate"}'],
    ["a DevTools command smuggled as a type", '{"type":"raw","method":"Browser.close"}'],
    ["a coordinate out of range", '{"type":"mouse","event":"down","x":1e9,"y":0}'],
    ["a negative coordinate", '{"type":"mouse","event":"down","x":-1,"y":0}'],
    ["an unknown button", '{"type":"mouse","event":"down","x":1,"y":1,"button":"back"}'],
    ["a long key", `{"type":"key","event":"down","key":"${"a".repeat(65)}"}`],
    ["a key text of many characters", '{"type":"key","event":"down","key":"a","text":"hello"}'],
    ["too much text", JSON.stringify({ type: "text", text: "x".repeat(65_537) })],
    ["a __proto__ key", '{"type":"tools","__proto__":{"polluted":true}}'],
    ["an invocation without a tool_ref", '{"type":"invoke","id":1,"request":{"input":{}}}'],
    ["an invocation with a timeout past the spec's", '{"type":"invoke","id":1,"request":{"tool_ref":"t","input":{},"timeout_sec":121}}'],
  ])("refuses %s", (_, text) => {
    expect(() => parseViewerMessage(text)).toThrow(ViewerMessageError);
  });
});

describe("input commands", () => {
  it("types a printable key with its text, and presses one that does not type as a raw key", () => {
    expect(inputCommand({ type: "key", event: "down", key: "a", code: "KeyA", text: "a", keyCode: 65, modifiers: 0 }).params).toMatchObject({
      type: "keyDown",
      text: "a",
    });
    const backspace = inputCommand({ type: "key", event: "down", key: "Backspace", code: "Backspace", text: undefined, keyCode: 8, modifiers: 0 });
    expect(backspace.params.type).toBe("rawKeyDown");
    expect(backspace.params).not.toHaveProperty("text");
  });

  it("holds the button during a drag and releases it", () => {
    expect(inputCommand({ type: "mouse", event: "move", x: 1, y: 2, button: "left", clicks: 0, modifiers: 0 }).params).toMatchObject({
      type: "mouseMoved",
      buttons: 1,
    });
    expect(inputCommand({ type: "mouse", event: "up", x: 1, y: 2, button: "left", clicks: 1, modifiers: 0 }).params).toMatchObject({
      type: "mouseReleased",
      buttons: 0,
    });
  });
});

/** A socket whose writes finish only when the test says so: a viewer on a slow link. */
class SlowSocket implements ViewerSocket {
  readyState = 1;
  bufferedAmount = 0;
  sent: string[] = [];
  closedWith: number | undefined;
  readonly #callbacks: (() => void)[] = [];

  send(data: string | Buffer, _options: { binary: boolean }, callback?: () => void): void {
    this.sent.push(data.toString());
    if (callback) this.#callbacks.push(callback);
  }

  close(code: number): void {
    this.closedWith = code;
  }

  /** The oldest write reaches the viewer. */
  drain(): void {
    this.#callbacks.shift()?.();
  }
}

describe("a viewer on a slow link", () => {
  it("skips the frames it could not take and gets the newest, never a queue", () => {
    const socket = new SlowSocket();
    const viewer = new SocketViewer(socket, "control", 1024);
    for (let frame = 1; frame <= 10; frame++) viewer.offerFrame(Buffer.from(`frame ${frame}`));
    expect(socket.sent).toEqual(["frame 1"]);
    socket.drain();
    expect(socket.sent).toEqual(["frame 1", "frame 10"]);
    socket.drain();
    viewer.offerFrame(Buffer.from("frame 11"));
    expect(socket.sent).toEqual(["frame 1", "frame 10", "frame 11"]);
  });

  it("is disconnected when its other output piles up", () => {
    const socket = new SlowSocket();
    const viewer = new SocketViewer(socket, "watch", 1024);
    viewer.send("tools");
    socket.bufferedAmount = 2048;
    viewer.send("more tools");
    expect(socket.sent).toEqual(["tools"]);
    expect(socket.closedWith).toBe(1008);
  });
});

describe("a tab's capture", () => {
  it("asks for the next frame no sooner than the frame rate cap allows", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "performance"] });
    try {
      const acks: number[] = [];
      const connection = {
        closed: false,
        send: async (method: string, params: Record<string, unknown>) => {
          if (method === "Target.attachToTarget") return { sessionId: "S" };
          if (method === "Page.screencastFrameAck") acks.push(performance.now());
          if (method === "Page.getLayoutMetrics") return { cssVisualViewport: { clientWidth: 800, clientHeight: 600 } };
          if (method === "Page.captureScreenshot") return { data: "AAAA" };
          return params;
        },
      } as unknown as CdpConnection;
      const delivered: Buffer[] = [];
      const cast = new TabScreencast(connection, "T", { ...DEFAULT_LIVE_VIEW_LIMITS, maxViewers: 1, maxFps: 10 }, (frame) => delivered.push(frame));
      await cast.start();
      const start = performance.now();
      // Chromium sends frames as fast as it is asked for them: here, three at once.
      for (let id = 1; id <= 3; id++) cast.frame({ data: "AAAA", sessionId: id, metadata: { deviceWidth: 800, deviceHeight: 600 } });
      await vi.advanceTimersByTimeAsync(1_000);
      expect(acks.map((at) => Math.round(at - start))).toEqual([0, 100, 200]);
      expect(delivered).toHaveLength(4);
      expect(JSON.parse(String(delivered[0]))).toEqual({ type: "frame", tab: "T", width: 800, height: 600, data: "AAAA" });
      // Whatever a frame's fields hold, each stays a value of the one message viewers receive.
      cast.frame({ data: '"},{"type":"hello', sessionId: 4, metadata: { deviceWidth: 1, deviceHeight: 1 } });
      expect(JSON.parse(String(delivered[4]))).toEqual({ type: "frame", tab: "T", width: 1, height: 1, data: '"},{"type":"hello' });
    } finally {
      vi.useRealTimers();
    }
  });
});

describe("a browser's tool lists sent to its viewers", () => {
  it("take turns within four times the viewers' byte rate, one listing of a viewer at a time", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "setInterval", "clearInterval", "performance"] });
    try {
      const connection = {
        closed: false,
        onEvent: () => undefined,
        onClose: () => undefined,
        send: async () => ({ targetInfos: [] }),
        close: async () => undefined,
      } as unknown as CdpConnection;
      // Every listing is a new snapshot of 1 MiB (a page whose tools keep changing).
      let version = 0;
      const listings: number[] = [];
      const webmcp = {
        listTools: async () => {
          listings.push(performance.now());
          version++;
          return { json: Buffer.alloc(1024 * 1024, 0x20), etag: `"v${version}"` };
        },
      } as unknown as BrowserWebMcp;
      const limits = { ...DEFAULT_LIVE_VIEW_LIMITS, maxViewers: 2, byteRate: 256 * 1024 };
      const log = { warn: () => undefined, debug: () => undefined, error: () => undefined } as unknown as FastifyBaseLogger;
      const view = new BrowserLiveView(connection, limits, async () => webmcp, new MessageBudget({ messageRate: 0, byteRate: limits.byteRate }), log);
      const sent: string[] = [];
      const viewer = { access: "watch" as const, send: (message: string | Buffer) => sent.push(String(message).slice(0, 30)), offerFrame: () => undefined };
      view.join(viewer);
      const start = performance.now();
      const ask = () => {
        for (let i = 0; i < 50; i++) view.receive(viewer, '{"type":"tools"}');
      };
      // Fifty requests at once: one listing, then once more for the ones asked meanwhile.
      ask();
      await vi.advanceTimersByTimeAsync(10);
      // Fifty more: the budget (one second's worth, 1 MiB, at once) is spent by then, so these wait their turn, a second a list.
      ask();
      await vi.advanceTimersByTimeAsync(3_000);
      expect(listings.map((at) => Math.round((at - start) / 100) / 10)).toEqual([0, 0, 1, 2]);
      expect(sent.filter((message) => message.startsWith('{"type":"tools","snapshot"'))).toHaveLength(4);
      view.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
