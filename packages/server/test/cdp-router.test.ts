import { describe, expect, it } from "vitest";
import type { CdpPipe, OversizedMessage } from "../src/cdp/cdp-pipe.js";
import { type CdpChannel, CdpRouter, CdpRouterError, type ChannelCloseReason, type ChannelMessage, type DroppedEvent } from "../src/cdp/cdp-router.js";
import { parseClientCommand } from "../src/cdp/client-command.js";

// The router alone, against a pipe the test plays the browser on: every message the router
// writes is seen, every message the browser sends is the test's, and all of it happens
// synchronously, so each test states exactly what a client receives and what it does not.

/** The browser's side of a pipe: what the router wrote, and the browser's messages, drops and end. */
class FakePipe implements Pick<CdpPipe, "closed" | "backlogBytes" | "send" | "onMessage" | "onOversized" | "onClose" | "close"> {
  closed = false;
  backlogBytes = 0;
  /** Every message the router wrote, as written. */
  readonly written: string[] = [];
  #read = 0;
  readonly #messageListeners: ((json: string) => void)[] = [];
  readonly #oversizedListeners: ((message: OversizedMessage) => void)[] = [];
  readonly #closeListeners: (() => void)[] = [];

  send(json: string): boolean {
    if (this.closed) return false;
    this.written.push(json);
    return true;
  }

  onMessage(listener: (json: string) => void): void {
    this.#messageListeners.push(listener);
  }

  onOversized(listener: (message: OversizedMessage) => void): void {
    this.#oversizedListeners.push(listener);
  }

  onClose(listener: () => void): void {
    this.#closeListeners.push(listener);
  }

  close(): void {
    this.closed = true;
  }

  /** What the router wrote since the last call, parsed. */
  take(): Command[] {
    const fresh = this.written.slice(this.#read);
    this.#read = this.written.length;
    return fresh.map((text) => JSON.parse(text) as Command);
  }

  /** The one command the router wrote since the last call. */
  takeOne(): Command {
    const fresh = this.take();
    expect(fresh).toHaveLength(1);
    return fresh[0] as Command;
  }

  /** A message from the browser, as text (as Chromium writes it: compact, `id` or `method` first, `sessionId` last). */
  emit(json: string): void {
    for (const listener of this.#messageListeners) listener(json);
  }

  /** A message the pipe dropped for its size. */
  drop(message: OversizedMessage): void {
    for (const listener of this.#oversizedListeners) listener(message);
  }

  /** The browser's end closes. */
  end(): void {
    this.closed = true;
    for (const listener of this.#closeListeners.splice(0)) listener();
  }
}

interface Command {
  id: number;
  method: string;
  params?: Record<string, unknown>;
  sessionId?: string;
}

/** One client: its channel and what it received. */
interface Client {
  channel: CdpChannel;
  /** Every message the channel delivered, in order, as delivered (text or object). */
  inbox: ChannelMessage[];
  /** The same, text parsed, for comparing by value. */
  received(): unknown[];
  closes: ChannelCloseReason[];
  dropped: DroppedEvent[];
}

function setUp(options: { maxPending?: number } = {}): { pipe: FakePipe; router: CdpRouter; connect(sessionId: string): Promise<Client> } {
  const pipe = new FakePipe();
  // The router needs only these members of the pipe; the class's private fields make the cast necessary.
  const router = new CdpRouter(pipe as unknown as CdpPipe, {
    downloadPath: "/profile/downloads",
    onError: (error) => {
      throw error;
    },
  });
  const connect = async (sessionId: string): Promise<Client> => {
    const opening = router.openChannel(options);
    const attach = pipe.takeOne();
    expect(attach).toMatchObject({ method: "Target.attachToBrowserTarget" });
    expect(attach.sessionId).toBeUndefined();
    pipe.emit(`{"id":${attach.id},"result":{"sessionId":"${sessionId}"}}`);
    const channel = await opening;
    const client: Client = {
      channel,
      inbox: [],
      received: () => client.inbox.map((message) => (typeof message === "string" ? JSON.parse(message) : message)),
      closes: [],
      dropped: [],
    };
    channel.onMessage((message) => client.inbox.push(message));
    channel.onClose((reason) => client.closes.push(reason));
    channel.onDropped((event) => client.dropped.push(event));
    return client;
  };
  return { pipe, router, connect };
}

describe("message ids", () => {
  it("gives each client's command an id of the router's and answers the client under its own id", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    a.channel.sendText('{"id":1,"method":"Runtime.evaluate","params":{"expression":"1"}}');
    b.channel.sendText('{"id":1,"method":"Runtime.evaluate","params":{"expression":"2"}}');
    const [toA, toB] = pipe.take() as [Command, Command];
    expect(toA).toMatchObject({ method: "Runtime.evaluate", sessionId: "S-A", params: { expression: "1" } });
    expect(toB).toMatchObject({ method: "Runtime.evaluate", sessionId: "S-B", params: { expression: "2" } });
    // Both clients said 1; the browser must be able to tell the answers apart.
    expect(toA.id).not.toBe(toB.id);

    // Answered in the other order, each answer still reaches the client that asked, under its id.
    pipe.emit(`{"id":${toB.id},"result":{"value":2},"sessionId":"S-B"}`);
    pipe.emit(`{"id":${toA.id},"result":{"value":1},"sessionId":"S-A"}`);
    expect(a.received()).toEqual([{ id: 1, result: { value: 1 } }]);
    expect(b.received()).toEqual([{ id: 1, result: { value: 2 } }]);
  });

  it("answers each command once: a second answer under the same id, or one the router never asked for, reaches nobody", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    a.channel.send({ id: 7, method: "Page.enable" });
    const { id } = pipe.takeOne();
    pipe.emit(`{"id":${id},"result":{},"sessionId":"S-A"}`);
    pipe.emit(`{"id":${id},"result":{"again":true},"sessionId":"S-A"}`);
    pipe.emit(`{"id":${id + 1000},"result":{},"sessionId":"S-A"}`);
    expect(a.received()).toEqual([{ id: 7, result: {} }]);
  });

  it("keeps an answer's error as the browser wrote it", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    a.channel.send({ id: 3, method: "No.such" });
    const { id } = pipe.takeOne();
    pipe.emit(`{"id":${id},"error":{"code":-32601,"message":"'No.such' wasn't found"},"sessionId":"S-A"}`);
    expect(a.received()).toEqual([{ id: 3, error: { code: -32601, message: "'No.such' wasn't found" } }]);
  });
});

describe("what each client sees", () => {
  it("events of a client's own session reach that client only, without the session id it never chose", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    pipe.emit('{"method":"Page.loadEventFired","params":{"timestamp":1},"sessionId":"S-A"}');
    pipe.emit('{"method":"Page.loadEventFired","params":{"timestamp":2},"sessionId":"S-B"}');
    // The root session's events and those of sessions nobody owns are the router's.
    pipe.emit('{"method":"Target.targetCreated","params":{"targetInfo":{"targetId":"T"}}}');
    pipe.emit('{"method":"Page.loadEventFired","params":{"timestamp":3},"sessionId":"S-NOBODY"}');
    expect(a.received()).toEqual([{ method: "Page.loadEventFired", params: { timestamp: 1 } }]);
    expect(b.received()).toEqual([{ method: "Page.loadEventFired", params: { timestamp: 2 } }]);
  });

  it("never gives a client a session on Chromium's own UI: it is detached, not announced, and its attach answer does not make it the client's", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    a.channel.send({ id: 1, method: "Target.attachToTarget", params: { targetId: "UI", flatten: true } });
    const attach = pipe.takeOne();
    expect(attach).toMatchObject({ method: "Target.attachToTarget", sessionId: "S-A" });
    pipe.emit(
      '{"method":"Target.attachedToTarget","params":{"sessionId":"UI-S","targetInfo":{"targetId":"UI","type":"browser_ui","url":"chrome://tab-search.top-chrome/"},"waitingForDebugger":false},"sessionId":"S-A"}',
    );
    // Detached through the session that attached it.
    expect(pipe.takeOne()).toMatchObject({ method: "Target.detachFromTarget", params: { sessionId: "UI-S" }, sessionId: "S-A" });
    pipe.emit(`{"id":${attach.id},"result":{"sessionId":"UI-S"},"sessionId":"S-A"}`);
    expect(a.received()).toEqual([{ id: 1, result: { sessionId: "UI-S" } }]);
    a.channel.send({ id: 2, method: "Runtime.evaluate", params: { expression: "chrome.send" }, sessionId: "UI-S" });
    expect(a.received().at(-1)).toEqual({ id: 2, error: { code: -32001, message: "Session with given id not found." } });
    expect(pipe.take()).toEqual([]);
    // A page with a chrome: URL (a type Chromium may report otherwise) is refused alike.
    pipe.emit(
      '{"method":"Target.attachedToTarget","params":{"sessionId":"UI-2","targetInfo":{"targetId":"U2","type":"page","url":"CHROME://version/"},"waitingForDebugger":false},"sessionId":"S-A"}',
    );
    expect(pipe.takeOne()).toMatchObject({ method: "Target.detachFromTarget", params: { sessionId: "UI-2" } });
    expect(a.received()).toHaveLength(2);
  });

  it("a session a client's auto-attach creates is that client's: its events reach it with their session id, and no other client may name it", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    a.channel.send({ id: 1, method: "Target.setAutoAttach", params: { autoAttach: true, waitForDebuggerOnStart: false, flatten: true } });
    expect(pipe.takeOne()).toMatchObject({ method: "Target.setAutoAttach", sessionId: "S-A" });
    const info = '"targetInfo":{"targetId":"T1","type":"page"},"waitingForDebugger":false';
    pipe.emit(`{"method":"Target.attachedToTarget","params":{"sessionId":"CHILD",${info}},"sessionId":"S-A"}`);
    pipe.emit('{"method":"Runtime.consoleAPICalled","params":{"type":"log"},"sessionId":"CHILD"}');
    expect(a.received()).toEqual([
      { method: "Target.attachedToTarget", params: { sessionId: "CHILD", targetInfo: { targetId: "T1", type: "page" }, waitingForDebugger: false } },
      { method: "Runtime.consoleAPICalled", params: { type: "log" }, sessionId: "CHILD" },
    ]);
    expect(b.received()).toEqual([]);

    // The owner's command on the child goes out on it, and its answer keeps the child's id.
    a.channel.send({ id: 2, method: "Runtime.enable", sessionId: "CHILD" });
    const onChild = pipe.takeOne();
    expect(onChild).toMatchObject({ method: "Runtime.enable", sessionId: "CHILD" });
    pipe.emit(`{"id":${onChild.id},"result":{},"sessionId":"CHILD"}`);
    expect(a.received().at(-1)).toEqual({ id: 2, result: {}, sessionId: "CHILD" });

    // Another client can neither send on it, nor detach it, nor use the owner's own session.
    b.channel.send({ id: 1, method: "Runtime.evaluate", params: { expression: "1" }, sessionId: "CHILD" });
    b.channel.send({ id: 2, method: "Target.detachFromTarget", params: { sessionId: "CHILD" } });
    b.channel.send({ id: 3, method: "Runtime.evaluate", params: { expression: "1" }, sessionId: "S-A" });
    expect(b.received()).toEqual([
      { id: 1, error: { code: -32001, message: "Session with given id not found." } },
      { id: 2, error: { code: -32001, message: "No session with given id found." } },
      { id: 3, error: { code: -32001, message: "Session with given id not found." } },
    ]);
    expect(pipe.take()).toEqual([]);

    // Once the browser says the child detached, it is nobody's: even its former owner is refused.
    pipe.emit('{"method":"Target.detachedFromTarget","params":{"sessionId":"CHILD","targetId":"T1"},"sessionId":"S-A"}');
    pipe.emit('{"method":"Runtime.consoleAPICalled","params":{"type":"late"},"sessionId":"CHILD"}');
    a.channel.send({ id: 3, method: "Runtime.enable", sessionId: "CHILD" });
    expect(a.received().slice(-2)).toEqual([
      { method: "Target.detachedFromTarget", params: { sessionId: "CHILD", targetId: "T1" } },
      { id: 3, error: { code: -32001, message: "Session with given id not found." } },
    ]);
    expect(pipe.take()).toEqual([]);
  });

  it("a session whose attach event is larger than the router parses (a long target URL) is still its client's", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    const url = `data:text/html,${"x".repeat(1100 * 1024)}`;
    pipe.emit(
      `{"method":"Target.attachedToTarget","params":{"sessionId":"BIG","targetInfo":{"targetId":"T9","type":"page","url":"${url}"},"waitingForDebugger":true},"sessionId":"S-A"}`,
    );
    expect(a.received()).toHaveLength(1);
    // The client can resume the waiting target on it.
    a.channel.send({ id: 1, method: "Runtime.runIfWaitingForDebugger", sessionId: "BIG" });
    expect(pipe.takeOne()).toMatchObject({ method: "Runtime.runIfWaitingForDebugger", sessionId: "BIG" });
  });

  it("a session named in the answer to a client's Target.attachToTarget is that client's", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    a.channel.send({ id: 4, method: "Target.attachToTarget", params: { targetId: "T1", flatten: true } });
    const attach = pipe.takeOne();
    pipe.emit(`{"id":${attach.id},"result":{"sessionId":"ATTACHED"},"sessionId":"S-A"}`);
    expect(a.received()).toEqual([{ id: 4, result: { sessionId: "ATTACHED" } }]);
    pipe.emit('{"method":"Page.frameNavigated","params":{"frame":{"id":"F"}},"sessionId":"ATTACHED"}');
    expect(a.received().at(-1)).toEqual({ method: "Page.frameNavigated", params: { frame: { id: "F" } }, sessionId: "ATTACHED" });
    expect(b.received()).toEqual([]);
    b.channel.send({ id: 1, method: "Page.enable", sessionId: "ATTACHED" });
    expect(b.received()).toEqual([{ id: 1, error: { code: -32001, message: "Session with given id not found." } }]);
  });
});

describe("a client's command, as the router checks it", () => {
  it("reads the four members of a command and leaves the rest behind", () => {
    const params = { expression: "1" };
    expect(parseClientCommand({ id: 3, method: "Runtime.evaluate", params, sessionId: "S-A", result: {}, extra: "x" })).toStrictEqual({
      ok: true,
      command: { id: 3, method: "Runtime.evaluate", params, sessionId: "S-A" },
    });
    expect(parseClientCommand({ id: 0, method: "Page.enable" })).toStrictEqual({
      ok: true,
      command: { id: 0, method: "Page.enable", params: undefined, sessionId: undefined },
    });
    expect(parseClientCommand({ id: Number.MAX_SAFE_INTEGER, method: "Page.enable", params: {} })).toMatchObject({
      ok: true,
      command: { id: Number.MAX_SAFE_INTEGER, params: {} },
    });
  });

  const notObject = "A command must be a JSON object.";
  const badId = "A command needs a non-negative integer id.";
  const noMethod = "A command needs a method name.";
  const badParams = "params must be an object.";
  const badSession = "sessionId must be a string.";
  it.each<[string, unknown, string, number | undefined]>([
    ["null", null, notObject, undefined],
    ["an array", [{ id: 1, method: "Page.enable" }], notObject, undefined],
    ["a string", "Page.enable", notObject, undefined],
    ["a number", 7, notObject, undefined],
    ["no id", { method: "Page.enable" }, badId, undefined],
    ["a negative id", { id: -1, method: "Page.enable" }, badId, -1],
    ["a fractional id", { id: 1.5, method: "Page.enable" }, badId, undefined],
    ["an id past the safe integers", { id: 2 ** 53, method: "Page.enable" }, badId, undefined],
    ["an id as a string", { id: "1", method: "Page.enable" }, badId, undefined],
    ["no method", { id: 1 }, noMethod, 1],
    ["an empty method", { id: 1, method: "" }, noMethod, 1],
    ["a method that is not a string", { id: 1, method: 5 }, noMethod, 1],
    ["null params", { id: 1, method: "Page.enable", params: null }, badParams, 1],
    ["array params", { id: 1, method: "Page.enable", params: [] }, badParams, 1],
    ["string params", { id: 1, method: "Page.enable", params: "{}" }, badParams, 1],
    ["a numeric sessionId", { id: 1, method: "Page.enable", sessionId: 7 }, badSession, 1],
    ["a null sessionId", { id: 1, method: "Page.enable", sessionId: null }, badSession, 1],
    ["every member wrong: the id is reported", { id: -2, method: "", params: [], sessionId: 1 }, badId, -2],
    ["method, params and sessionId wrong: the method is reported", { id: 2, method: 1, params: [], sessionId: 1 }, noMethod, 2],
  ])("refuses %s, keeping the message's id when it is a safe integer", (_, message, problem, id) => {
    expect(parseClientCommand(message)).toStrictEqual({ ok: false, problem, id });
  });

  it.each<[string, unknown, string | undefined]>([
    ["a session id", { id: 1, method: "Page.enable", params: [], sessionId: "0A1B2C" }, "0A1B2C"],
    ["a session id with characters no session id has", { id: 1, method: "Page.enable", params: [], sessionId: 'S"},{"x' }, undefined],
    ["a session id past 128 characters", { id: 1, method: "Page.enable", params: [], sessionId: "S".repeat(129) }, undefined],
  ])("keeps %s of a refused command, so that the answer goes back in its session", (_, message, sessionId) => {
    const parsed = parseClientCommand(message);
    expect(parsed).toMatchObject({ ok: false, problem: badParams, id: 1 });
    expect((parsed as { sessionId?: string }).sessionId).toBe(sessionId);
  });

  it("answers a client's text under its own id only when that is a non-negative integer, else under 0", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    a.channel.sendText('{"id":-3,"method":"Page.enable"}');
    a.channel.sendText('{"id":1.5,"method":"Page.enable"}');
    a.channel.sendText('{"id":4,"method":""}');
    expect(a.received()).toEqual([
      { id: 0, error: { code: -32600, message: badId } },
      { id: 0, error: { code: -32600, message: badId } },
      { id: 4, error: { code: -32600, message: noMethod } },
    ]);
    expect(pipe.take()).toEqual([]);
  });

  it("sends the browser only what it checked, on the session the command names or else the client's own", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    a.channel.send({ id: 1, method: "Page.enable", result: { forged: true }, error: { code: 1, message: "forged" } });
    a.channel.sendText('{"id":2,"method":"Runtime.evaluate","params":{"expression":"1"},"sessionId":"S-A","extra":[1]}');
    expect(pipe.written.slice(-2).map((text) => JSON.parse(text) as unknown)).toEqual([
      { id: expect.any(Number), method: "Page.enable", sessionId: "S-A" },
      { id: expect.any(Number), method: "Runtime.evaluate", sessionId: "S-A", params: { expression: "1" } },
    ]);
  });
});

describe("commands the router answers itself", () => {
  it("refuses what is not a command, with JSON-RPC errors under the client's id when it has one, and sends nothing", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    a.channel.sendText("{not json");
    a.channel.sendText('{"id":5,"method":"Page.enable","params":[1]}');
    a.channel.sendText('{"method":"Page.enable"}');
    a.channel.sendText('{"id":6}');
    a.channel.sendText('{"id":7,"method":"Page.enable","sessionId":7}');
    a.channel.send(["not", "an", "object"]);
    expect(a.received()).toEqual([
      { id: 0, error: { code: -32700, message: "Message is not valid JSON." } },
      { id: 5, error: { code: -32600, message: "params must be an object." } },
      { id: 0, error: { code: -32600, message: "A command needs a non-negative integer id." } },
      { id: 6, error: { code: -32600, message: "A command needs a method name." } },
      { id: 7, error: { code: -32600, message: "sessionId must be a string." } },
      { id: 0, error: { code: -32600, message: "A command must be a JSON object." } },
    ]);
    expect(pipe.take()).toEqual([]);
  });

  it("refuses commands the policy forbids with -32000 and the reason, and sends nothing", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    a.channel.send({ id: 1, method: "Browser.crash" });
    a.channel.send({ id: 2, method: "Target.setAutoAttach", params: { autoAttach: true, waitForDebuggerOnStart: false } });
    a.channel.send({ id: 3, method: "Page.navigate", params: { url: "file:///etc/passwd" } });
    expect(a.received()).toEqual([
      { id: 1, error: { code: -32000, message: expect.stringMatching(/^Browser\.crash is refused on this service/) } },
      { id: 2, error: { code: -32000, message: expect.stringMatching(/^Target\.setAutoAttach needs flatten: true/) } },
      { id: 3, error: { code: -32000, message: expect.stringMatching(/^Page\.navigate refuses "file:\/\/\/etc\/passwd"/) } },
    ]);
    expect(pipe.take()).toEqual([]);
  });

  it("answers each refusal in the session it was sent on when that session is the client's, and in its browser session otherwise", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    a.channel.send({ id: 1, method: "Target.setAutoAttach", params: { autoAttach: true, waitForDebuggerOnStart: false, flatten: true } });
    pipe.takeOne();
    pipe.emit(
      '{"method":"Target.attachedToTarget","params":{"sessionId":"CHILD","targetInfo":{"targetId":"T1","type":"page"},"waitingForDebugger":false},"sessionId":"S-A"}',
    );
    const seen = a.received().length;
    // A client routes an answer by its session: one in another session has no caller there.
    a.channel.send({ id: 2, method: "Page.navigate", params: { url: "file:///etc/passwd" }, sessionId: "CHILD" });
    a.channel.send({ id: 3, method: "Page.enable", params: null, sessionId: "CHILD" });
    a.channel.sendText(`{"id":4,"method":"Runtime.evaluate","params":${"[".repeat(250)}${"]".repeat(250)},"sessionId":"CHILD"}`);
    a.channel.sendText('{"id":5,"method":"Page.enable","params":{,"sessionId":"CHILD"}');
    a.channel.send({ id: 6, method: "Target.detachFromTarget", params: { sessionId: "S-B" }, sessionId: "CHILD" });
    a.channel.send({ id: 7, method: "Browser.close", sessionId: "CHILD" });
    expect(a.received().slice(seen)).toEqual([
      { id: 2, error: { code: -32000, message: expect.stringMatching(/^Page\.navigate refuses/) }, sessionId: "CHILD" },
      { id: 3, error: { code: -32600, message: "params must be an object." }, sessionId: "CHILD" },
      { id: 4, error: { code: -32600, message: expect.stringContaining("nests deeper than") }, sessionId: "CHILD" },
      { id: 5, error: { code: -32700, message: "Message is not valid JSON." }, sessionId: "CHILD" },
      { id: 6, error: { code: -32001, message: "No session with given id found." }, sessionId: "CHILD" },
      { id: 7, result: {}, sessionId: "CHILD" },
    ]);
    // Another client naming that session learns nothing of it: answered as Chromium answers an unknown session.
    b.channel.send({ id: 1, method: "Page.enable", params: null, sessionId: "CHILD" });
    b.channel.send({ id: 2, method: "Page.navigate", params: { url: "file:///etc/passwd" }, sessionId: "CHILD" });
    expect(b.received()).toEqual([
      { id: 1, error: { code: -32600, message: "params must be an object." } },
      { id: 2, error: { code: -32001, message: "Session with given id not found." } },
    ]);
    expect(pipe.take()).toEqual([]);
  });

  it("answers Browser.close itself and tells the owner, who decides how the browser ends", async () => {
    const { pipe, router, connect } = setUp();
    const a = await connect("S-A");
    let requested = 0;
    router.onCloseRequested(() => requested++);
    a.channel.send({ id: 9, method: "Browser.close" });
    expect(a.received()).toEqual([{ id: 9, result: {} }]);
    expect(requested).toBe(1);
    expect(pipe.take()).toEqual([]);
  });

  it("refuses a client's command past its cap of commands awaiting an answer, and sends again once one is answered", async () => {
    const { pipe, connect } = setUp({ maxPending: 2 });
    const a = await connect("S-A");
    a.channel.send({ id: 1, method: "Runtime.evaluate", params: { expression: "1" } });
    a.channel.send({ id: 2, method: "Runtime.evaluate", params: { expression: "2" } });
    a.channel.send({ id: 3, method: "Runtime.evaluate", params: { expression: "3" } });
    const [first] = pipe.take() as [Command, Command];
    expect(a.received()).toEqual([{ id: 3, error: { code: -32000, message: expect.stringMatching(/^This client already has 2 commands awaiting/) } }]);
    pipe.emit(`{"id":${first.id},"result":{},"sessionId":"S-A"}`);
    a.channel.send({ id: 4, method: "Runtime.evaluate", params: { expression: "4" } });
    expect(pipe.takeOne()).toMatchObject({ params: { expression: "4" } });
  });

  it("refuses a command while the browser has a large backlog of unread commands", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    pipe.backlogBytes = 65 * 1024 * 1024;
    a.channel.send({ id: 1, method: "Runtime.evaluate", params: { expression: "1" } });
    const slow = expect.stringMatching(/^The browser is not reading commands as fast as they are sent/);
    expect(a.received()).toEqual([{ id: 1, error: { code: -32000, message: slow } }]);
    expect(pipe.take()).toEqual([]);
    pipe.backlogBytes = 0;
    a.channel.send({ id: 2, method: "Runtime.evaluate", params: { expression: "2" } });
    expect(pipe.takeOne()).toMatchObject({ params: { expression: "2" } });
  });
});

describe("what the browser sends, relayed", () => {
  it("relays an answer and an event as the browser's own text: only the id and the client's own session id change", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    a.channel.send({ id: 12, method: "Runtime.evaluate", params: { expression: "x" } });
    const { id } = pipe.takeOne();
    // Key order, escapes and number forms that a parse and a serialization would each change.
    const body = '"result":{"z":1.50,"a":"\\u00e9\\/","n":1e3}';
    pipe.emit(`{"id":${id},${body},"sessionId":"S-A"}`);
    pipe.emit('{"method":"Runtime.consoleAPICalled","params":{"z":1.50,"a":"\\u00e9"},"sessionId":"S-A"}');
    expect(a.inbox).toEqual([`{"id":12,${body}}`, '{"method":"Runtime.consoleAPICalled","params":{"z":1.50,"a":"\\u00e9"}}']);
  });

  it("routes a message larger than it parses by its two ends: to its session's owner, or to nobody for the root session", async () => {
    const { pipe, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    const title = "t".repeat(2 * 1024 * 1024);
    // A Target event is one the router reads, unless it is too large to parse.
    pipe.emit(`{"method":"Target.targetInfoChanged","params":{"targetInfo":{"title":"${title}"}},"sessionId":"S-A"}`);
    pipe.emit(`{"method":"Target.targetInfoChanged","params":{"targetInfo":{"title":"${title}"}}}`);
    expect(a.inbox).toEqual([`{"method":"Target.targetInfoChanged","params":{"targetInfo":{"title":"${title}"}}}`]);
    expect(b.inbox).toEqual([]);
  });

  it("answers the router's own large command by parsing it", async () => {
    const { pipe, router } = setUp();
    const version = router.call("Browser.getVersion");
    const { id } = pipe.takeOne();
    const product = "p".repeat(2 * 1024 * 1024);
    pipe.emit(`{"id":${id},"result":{"product":"${product}"}}`);
    await expect(version).resolves.toEqual({ product });
  });

  it("answers a command whose answer the pipe dropped for its size with an error, and tells the owner of a dropped event", async () => {
    const { pipe, router, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    const told: OversizedMessage[] = [];
    router.onOversized((message) => told.push(message));
    a.channel.send({ id: 21, method: "Page.captureScreenshot" });
    const { id } = pipe.takeOne();
    const answer = { head: `{"id":${id},"result":{"data":"iVBOR`, tail: 'AAAA"},"sessionId":"S-A"}', bytes: 90_000_000 };
    pipe.drop(answer);
    const tooLarge = "The browser's answer (90000000 bytes) is larger than this server relays; it was dropped.";
    expect(a.received()).toEqual([{ id: 21, error: { code: -32000, message: tooLarge } }]);
    // The command is settled: a late answer under its id reaches nobody.
    pipe.emit(`{"id":${id},"result":{},"sessionId":"S-A"}`);
    expect(a.received()).toHaveLength(1);

    const event = { head: '{"method":"Network.dataReceived","params":{', tail: '"x"},"sessionId":"S-B"}', bytes: 80_000_000 };
    pipe.drop(event);
    expect(b.dropped).toEqual([{ ...event, sessionId: undefined }]);
    expect(a.dropped).toEqual([]);
    expect(b.inbox).toEqual([]);
    expect(told).toEqual([answer, event]);
  });
});

describe("closing", () => {
  it("closing one client detaches its session; what the browser still sends for it reaches nobody; the others go on", async () => {
    const { pipe, router, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    a.channel.send({ id: 1, method: "Target.setAutoAttach", params: { autoAttach: true, waitForDebuggerOnStart: false, flatten: true } });
    pipe.take();
    pipe.emit('{"method":"Target.attachedToTarget","params":{"sessionId":"CHILD-A","targetInfo":{"targetId":"T1"}},"sessionId":"S-A"}');
    a.channel.send({ id: 2, method: "Runtime.evaluate", params: { expression: "slow()" } });
    const pending = pipe.takeOne();
    const before = a.inbox.length;

    a.channel.close();
    expect(a.closes).toEqual(["client"]);
    expect(router.channelCount).toBe(1);
    expect(pipe.takeOne()).toMatchObject({ method: "Target.detachFromTarget", params: { sessionId: "S-A" } });

    pipe.emit(`{"id":${pending.id},"result":{"value":1},"sessionId":"S-A"}`);
    pipe.emit('{"method":"Page.loadEventFired","params":{},"sessionId":"S-A"}');
    pipe.emit('{"method":"Page.loadEventFired","params":{},"sessionId":"CHILD-A"}');
    expect(a.inbox).toHaveLength(before);
    expect(b.inbox).toEqual([]);

    // Its former sessions are nobody's: the other client cannot take them over.
    b.channel.send({ id: 1, method: "Page.enable", sessionId: "CHILD-A" });
    expect(b.received()).toEqual([{ id: 1, error: { code: -32001, message: "Session with given id not found." } }]);
    b.channel.send({ id: 2, method: "Page.enable" });
    const command = pipe.takeOne();
    pipe.emit(`{"id":${command.id},"result":{},"sessionId":"S-B"}`);
    expect(b.received().at(-1)).toEqual({ id: 2, result: {} });
    // A closed channel sends nothing.
    a.channel.send({ id: 3, method: "Page.enable" });
    expect(pipe.take()).toEqual([]);
  });

  it("a client whose browser session the browser detached is closed as detached; the others go on", async () => {
    const { pipe, router, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    pipe.emit('{"method":"Target.detachedFromTarget","params":{"sessionId":"S-A"}}');
    expect(a.closes).toEqual(["detached"]);
    expect(b.closes).toEqual([]);
    expect(router.channelCount).toBe(1);
  });

  it("when the browser's end closes, every client closes and the router's own pending and later commands fail", async () => {
    const { pipe, router, connect } = setUp();
    const a = await connect("S-A");
    const b = await connect("S-B");
    const pending = router.call("Browser.getVersion");
    pipe.end();
    await expect(pending).rejects.toThrow(CdpRouterError);
    expect([a.closes, b.closes]).toEqual([["browser"], ["browser"]]);
    expect(router.channelCount).toBe(0);
    await expect(router.call("Browser.getVersion")).rejects.toThrow(/The browser has closed/);
    await expect(router.openChannel()).rejects.toThrow(CdpRouterError);
  });
});
