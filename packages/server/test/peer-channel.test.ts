import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { ConflictError } from "../src/http/api-errors.js";
import { PEER_PROOF_HEADER, PeerAuth } from "../src/nodes/peer-auth.js";
import { MAX_CALLS_PER_CHANNEL, PEER_CHANNEL_PATH, PEER_CHANNEL_PROTOCOL, type PeerCall, PeerCalls } from "../src/nodes/peer-calls.js";
import { CallRefusedError, ChannelClosedError, PeerChannel } from "../src/nodes/peer-channel.js";
import { PeerForwarder } from "../src/nodes/peer-forwarder.js";
import { encodeFrame, type Frame, FrameError, FrameKind, FrameReader, FrameSeal } from "../src/nodes/peer-frames.js";

// The channel between two nodes, both ends real, over a real HTTP server's upgrade: what
// the owner runs, what a caller's leaving does, and what a broken peer gets.

const SECRET = "c".repeat(32);
// The forwarding node ("sender") and the owner ("owner"), each with the nodes' secret.
const sender = new PeerAuth({ secret: SECRET, nodeId: "sender" });
const ownerAuth = new PeerAuth({ secret: SECRET, nodeId: "owner" });
const peerOf = (request: IncomingMessage) => ownerAuth.verify(request);
/** The proof that opens a channel to the owner, and the channel's key. */
const opening = () => sender.opening("owner", PEER_CHANNEL_PATH);
// A channel key for frames read and written here, without a channel.
const KEY = randomBytes(32);
/** `frame`'s bytes changed by `change` after it was encoded, sealed again as the first frame. */
const changed = (frame: Buffer, change: (bytes: Buffer) => void) => {
  change(frame);
  new FrameSeal(KEY, "opener").sign(frame);
  return frame;
};
const logged: { level: string; object: object; message: string }[] = [];
const log = {
  info: (object: object, message: string) => logged.push({ level: "info", object, message }),
  warn: (object: object, message: string) => logged.push({ level: "warn", object, message }),
  error: (object: object, message: string) => logged.push({ level: "error", object, message }),
  debug: (object: object, message: string) => logged.push({ level: "debug", object, message }),
  child: () => log,
};

const servers: Server[] = [];
const channels: PeerChannel[] = [];
// Upgraded connections are the server's no more: they are ended by hand.
const connections = new Set<Socket>();
afterEach(async () => {
  for (const channel of channels.splice(0)) channel.close();
  for (const socket of connections) socket.destroy();
  connections.clear();
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
  logged.length = 0;
});

function listen(server: Server): Promise<string> {
  server.on("connection", (socket) => connections.add(socket));
  server.listen(0, "127.0.0.1");
  servers.push(server);
  return once(server, "listening").then(() => `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
}

/** An owner: an HTTP server whose upgrades go to `calls` first; the rest get 404. */
async function owner(calls: PeerCalls): Promise<{ url: string; sockets: Set<Duplex> }> {
  const server = createServer((_request, response) => response.writeHead(404).end());
  const sockets = new Set<Duplex>();
  server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    if (calls.route.claims(request, request.url ?? "")) {
      sockets.add(socket);
      void calls.route.take(request, socket, head);
      return;
    }
    socket.end("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
  });
  return { url: await listen(server), sockets };
}

async function open(url: string, options: { maxAnswerBytes?: number } = {}): Promise<PeerChannel> {
  const channel = await PeerChannel.open(url, opening(), { timeoutMs: 5_000, maxAnswerBytes: options.maxAnswerBytes ?? 1024 * 1024 });
  channels.push(channel);
  return channel;
}

/** The frames `reader` hands over for `chunk`. */
const all = (reader: FrameReader, chunk: Buffer): Frame[] => {
  const frames: Frame[] = [];
  reader.push(chunk, (frame) => frames.push(frame));
  return frames;
};

const head = (op: string, browser: object = { id: "b1" }) => ({ op, request_id: "req-1", browser, headers: {} });

describe("frames", () => {
  it("come back whole however the bytes are cut", () => {
    const seal = new FrameSeal(KEY, "opener");
    const frames = Buffer.concat([
      encodeFrame(FrameKind.call, 7, { op: "x", n: "é" }, Buffer.from('{"a":1}'), seal),
      encodeFrame(FrameKind.leave, 7, null, undefined, seal),
      encodeFrame(FrameKind.answer, 0xffff_ffff, { status: 200 }, "ü".repeat(1000), seal),
    ]);
    for (const cut of [1, 3, 4, 13, 64, frames.length]) {
      const reader = new FrameReader(64 * 1024, new FrameSeal(KEY, "owner"));
      const read = [];
      for (let at = 0; at < frames.length; at += cut) read.push(...all(reader, frames.subarray(at, at + cut)));
      expect(read.map((frame) => [frame.kind, frame.id, frame.head, frame.body.toString()])).toEqual([
        [FrameKind.call, 7, { op: "x", n: "é" }, '{"a":1}'],
        [FrameKind.leave, 7, null, ""],
        [FrameKind.answer, 0xffff_ffff, { status: 200 }, "ü".repeat(1000)],
      ]);
    }
  });

  it("over the reader's bound, of an unknown kind, or with a head that is not JSON are refused", () => {
    const reader = (max: number) => new FrameReader(max, new FrameSeal(KEY, "owner"));
    const frame = (kind: FrameKind, head: unknown, body?: Buffer) => encodeFrame(kind, 1, head, body, new FrameSeal(KEY, "opener"));
    expect(() => all(reader(100), frame(FrameKind.answer, null, Buffer.alloc(100)))).toThrow(FrameError);
    // The bound holds on the length alone, before the bytes arrive: a peer cannot make the reader buffer them.
    const huge = Buffer.alloc(4);
    huge.writeUInt32BE(0xffff_fff0, 0);
    expect(() => all(reader(1024), huge)).toThrow(/over the bound/);
    expect(() =>
      all(
        reader(1024),
        changed(frame(FrameKind.call, null), (bytes) => bytes.writeUInt8(9, 4)),
      ),
    ).toThrow(/Unknown frame kind 9/);
    expect(() =>
      all(
        reader(1024),
        changed(frame(FrameKind.call, "xx"), (bytes) => bytes.write("{", 13)),
      ),
    ).toThrow(/not JSON/);
    expect(() =>
      all(
        reader(1024),
        changed(frame(FrameKind.call, null), (bytes) => bytes.writeUInt32BE(1000, 9)),
      ),
    ).toThrow(/longer than the frame/);
  });

  it("whose seal does not check are refused: changed, made with another key, from the other side, replayed, or out of order", () => {
    const reader = () => new FrameReader(1024, new FrameSeal(KEY, "owner"));
    const first = () => encodeFrame(FrameKind.call, 1, { op: "deleteBrowser" }, undefined, new FrameSeal(KEY, "opener"));
    // Untouched, it is read.
    expect(all(reader(), first())).toHaveLength(1);
    const flipped = first();
    flipped.writeUInt32BE(2, 5);
    expect(() => all(reader(), flipped)).toThrow(/seal does not check/);
    expect(() => all(reader(), encodeFrame(FrameKind.call, 1, { op: "deleteBrowser" }, undefined, new FrameSeal(randomBytes(32), "opener")))).toThrow(
      /seal does not check/,
    );
    // The owner's own frame sent back to it: sealed for the other direction.
    expect(() => all(reader(), encodeFrame(FrameKind.call, 1, { op: "deleteBrowser" }, undefined, new FrameSeal(KEY, "owner")))).toThrow(/seal does not check/);
    const once = reader();
    const frame = first();
    expect(all(once, frame)).toHaveLength(1);
    expect(() => all(once, frame)).toThrow(/seal does not check/);
    const seal = new FrameSeal(KEY, "opener");
    const [one, two] = [encodeFrame(FrameKind.call, 1, null, undefined, seal), encodeFrame(FrameKind.call, 2, null, undefined, seal)];
    expect(() => all(reader(), Buffer.concat([two as Buffer, one as Buffer]))).toThrow(/seal does not check/);
    // A frame that checks is handed over even when a bad one follows it in the same chunk.
    const handed: number[] = [];
    expect(() => reader().push(Buffer.concat([one as Buffer, one as Buffer]), (frame) => handed.push(frame.id))).toThrow(/seal does not check/);
    expect(handed).toEqual([1]);
  });
});

describe("a peer channel", () => {
  it("carries many calls at once, each answered with its own status, headers and body", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024 * 1024, log });
    const seen: PeerCall[] = [];
    calls.handle("echo", async (call) => {
      seen.push(call);
      const wait = Number(call.headers.wait ?? 0);
      await new Promise((resolve) => setTimeout(resolve, wait));
      return { status: 201, headers: { "x-order": call.headers.order ?? "" }, body: `${call.body.toString()}:${(call.browser as { id: string }).id}` };
    });
    const { url } = await owner(calls);
    const channel = await open(url);
    // The first call waits longest: answers come back as they are ready, each to its own call.
    const sent = [30, 20, 10, 0].map((wait, order) =>
      channel.send(
        { op: "echo", request_id: `r${order}`, browser: { id: `b${order}` }, headers: { wait: String(wait), order: String(order) } },
        `body${order}`,
        5_000,
      ),
    );
    const answers = await Promise.all(sent.map((call) => call.answer));
    expect(answers.map((answer) => [answer.status, answer.headers, answer.body?.toString()])).toEqual([
      [201, { "x-order": "0" }, "body0:b0"],
      [201, { "x-order": "1" }, "body1:b1"],
      [201, { "x-order": "2" }, "body2:b2"],
      [201, { "x-order": "3" }, "body3:b3"],
    ]);
    expect(seen.map((call) => call.requestId).sort()).toEqual(["r0", "r1", "r2", "r3"]);
    expect(channel.open).toBe(0);
  });

  it("is opened only with a proof made for the owner, once: without one the path is left to the server, as any unknown path", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    const { url, sockets } = await owner(calls);
    const attempt = (headers: Record<string, string>) =>
      new Promise<number | "upgraded">((resolve, reject) => {
        const request = httpRequest(new URL(PEER_CHANNEL_PATH, url), { headers: { connection: "Upgrade", upgrade: PEER_CHANNEL_PROTOCOL, ...headers } });
        request.on("response", (response) => resolve(response.statusCode ?? 0));
        request.on("upgrade", (_response, socket) => {
          socket.destroy();
          resolve("upgraded");
        });
        request.on("error", reject);
        request.end();
      });
    expect(await attempt({})).toBe(404);
    // The secret itself, as the nodes once sent it, opens nothing; nor does a proof made with another secret, for another node, or sent twice.
    expect(await attempt({ "x-browser-service-peer": SECRET })).toBe(404);
    expect(await attempt(new PeerAuth({ secret: `${"c".repeat(31)}d`, nodeId: "sender" }).sign({ method: "GET", path: PEER_CHANNEL_PATH, to: "owner" }))).toBe(
      404,
    );
    expect(await attempt(sender.sign({ method: "GET", path: PEER_CHANNEL_PATH, to: "elsewhere" }))).toBe(404);
    expect(await attempt(sender.sign({ method: "GET", path: "/browsers", to: "owner" }))).toBe(404);
    expect(await attempt({ ...opening().headers, upgrade: "websocket" })).toBe(404);
    const once = opening().headers;
    expect(sockets.size).toBe(0);
    expect(await attempt(once)).toBe("upgraded");
    expect(await attempt(once)).toBe(404);
    await expect(PeerChannel.open(url, { headers: { [PEER_PROOF_HEADER]: "wrong" }, key: KEY }, { timeoutMs: 5_000, maxAnswerBytes: 1024 })).rejects.toThrow(
      /answered 404/,
    );
  });

  it("answers an operation's error with the Error body: an ApiError as it is, anything else a 500 that reveals nothing", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    calls.handle("conflict", async () => {
      throw new ConflictError("Browser b1 is not running.");
    });
    calls.handle("bug", async () => {
      throw new Error("secret internals");
    });
    const { url } = await owner(calls);
    const channel = await open(url);
    const conflict = await channel.send(head("conflict"), undefined, 5_000).answer;
    expect([conflict.status, conflict.headers["content-type"], JSON.parse(String(conflict.body))]).toEqual([
      409,
      "application/json; charset=utf-8",
      { code: "conflict", message: "Browser b1 is not running." },
    ]);
    const bug = await channel.send(head("bug"), undefined, 5_000).answer;
    expect(bug.status).toBe(500);
    expect(String(bug.body)).not.toContain("secret internals");
    expect(logged.some((entry) => entry.level === "error" && (entry.object as { err?: Error }).err?.message === "secret internals")).toBe(true);
    // A node of another version: told so, and the channel stays open.
    const unknown = await channel.send(head("__proto__"), undefined, 5_000).answer;
    expect([unknown.status, JSON.parse(String(unknown.body)).code]).toEqual([404, "not_found"]);
    expect(channel.closed).toBe(false);
  });

  it("aborts a call's signal when its caller leaves, and still brings its answer back", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    calls.handle("wait", (call) => new Promise((resolve) => call.signal.addEventListener("abort", () => resolve({ status: 504, headers: {}, body: "left" }))));
    const { url } = await owner(calls);
    const channel = await open(url);
    const sent = channel.send(head("wait"), undefined, 5_000);
    const other = channel.send(head("wait"), undefined, 5_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    sent.leave();
    sent.leave();
    const answer = await sent.answer;
    expect([answer.status, String(answer.body)]).toEqual([504, "left"]);
    // Only that call left: the other still waits, until its channel closes.
    const race = await Promise.race([other.answer.then(() => "answered"), new Promise((resolve) => setTimeout(() => resolve("waiting"), 100))]);
    expect(race).toBe("waiting");
    channel.close();
    await expect(other.answer).rejects.toBeInstanceOf(ChannelClosedError);
  });

  it("aborts every call of a forwarding node whose channel closes, as its callers are gone", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    const aborted: string[] = [];
    calls.handle("wait", (call) => new Promise((_resolve, reject) => call.signal.addEventListener("abort", () => reject(aborted.push(call.requestId)))));
    const { url } = await owner(calls);
    const channel = await open(url);
    const sent = ["a", "b"].map((id) => channel.send({ ...head("wait"), request_id: id }, undefined, 5_000));
    await new Promise((resolve) => setTimeout(resolve, 50));
    channel.close();
    for (const call of sent) await expect(call.answer).rejects.toBeInstanceOf(ChannelClosedError);
    await expect.poll(() => aborted.sort()).toEqual(["a", "b"]);
  });

  it("rejects the open calls when the owner goes away, and no call can be sent on it after", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    calls.handle("never", () => new Promise(() => undefined));
    const { url, sockets } = await owner(calls);
    const channel = await open(url);
    const sent = channel.send(head("never"), undefined, 5_000);
    await expect.poll(() => sockets.size).toBe(1);
    for (const socket of sockets) socket.destroy();
    await expect(sent.answer).rejects.toThrow(/closed before the answer came/);
    expect(channel.closed).toBe(true);
    expect(() => channel.send(head("never"), undefined, 5_000)).toThrow(ChannelClosedError);
  });

  it("closes a channel whose owner leaves a call unanswered past its time", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    calls.handle("never", () => new Promise(() => undefined));
    const { url } = await owner(calls);
    const channel = await open(url);
    await expect(channel.send(head("never"), undefined, 200).answer).rejects.toThrow(/no answer within 200 ms/);
    expect(channel.closed).toBe(true);
  });

  it("is closed by the owner when a peer sends a frame over the body bound, a duplicate call or an answer", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    calls.handle("never", () => new Promise(() => undefined));
    const { url } = await owner(calls);
    for (const frames of [
      (seal: FrameSeal) => [encodeFrame(FrameKind.call, 1, head("never"), Buffer.alloc(64 * 1024 + 2048), seal)],
      (seal: FrameSeal) => [encodeFrame(FrameKind.call, 1, head("never"), undefined, seal), encodeFrame(FrameKind.call, 1, head("never"), undefined, seal)],
      (seal: FrameSeal) => [encodeFrame(FrameKind.answer, 1, { status: 200, headers: {} }, undefined, seal)],
      (seal: FrameSeal) => [encodeFrame(FrameKind.call, 1, { op: "never" }, undefined, seal)],
    ]) {
      const { socket, seal } = await rawChannel(url);
      for (const frame of frames(seal)) socket.write(frame);
      await closed(socket);
    }
    expect(logged.filter((entry) => entry.message.includes("not the protocol"))).toHaveLength(4);
  });

  it("refuses a call past the most a channel holds, on both ends", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    calls.handle("never", () => new Promise(() => undefined));
    const { url } = await owner(calls);
    const channel = await open(url);
    const sent = Array.from({ length: MAX_CALLS_PER_CHANNEL }, () => channel.send(head("never"), undefined, 60_000));
    expect(() => channel.send(head("never"), undefined, 60_000)).toThrow(RangeError);
    // An owner counts too: a peer that sends one more is not speaking the protocol.
    const { socket, seal } = await rawChannel(url);
    socket.write(
      Buffer.concat(Array.from({ length: MAX_CALLS_PER_CHANNEL + 1 }, (_, i) => encodeFrame(FrameKind.call, i + 1, head("never"), undefined, seal))),
    );
    await closed(socket);
    channel.close();
    await Promise.allSettled(sent.map((call) => call.answer));
  });

  it("at close refuses new calls, lets open ones answer, then closes its channels", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    let finish: (() => void) | undefined;
    calls.handle("slow", () => new Promise((resolve) => (finish = () => resolve({ status: 200, headers: {}, body: "done" }))));
    calls.handle("fast", async () => ({ status: 200, headers: {}, body: "fast" }));
    const { url } = await owner(calls);
    const channel = await open(url);
    const slow = channel.send(head("slow"), undefined, 5_000);
    await expect.poll(() => finish).toBeDefined();
    const closed = calls.close(5_000);
    await expect(channel.send(head("fast"), undefined, 5_000).answer).rejects.toBeInstanceOf(CallRefusedError);
    finish?.();
    expect(String((await slow.answer).body)).toBe("done");
    await closed;
    await expect.poll(() => channel.closed).toBe(true);
  });

  it("refuses calls unrun while its node does not hold its lease, and serves again once it does", async () => {
    let leased = false;
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log, serving: () => leased });
    const ran: string[] = [];
    calls.handle("run", async (call) => {
      ran.push(call.requestId);
      return { status: 200, headers: {}, body: "ran" };
    });
    const { url } = await owner(calls);
    const channel = await open(url);
    await expect(channel.send({ ...head("run"), request_id: "lapsed" }, undefined, 5_000).answer).rejects.toBeInstanceOf(CallRefusedError);
    leased = true;
    expect(String((await channel.send({ ...head("run"), request_id: "leased" }, undefined, 5_000).answer).body)).toBe("ran");
    expect(ran).toEqual(["leased"]);
  });

  it("at close waits no longer than its grace for a call that does not end", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    calls.handle("never", () => new Promise(() => undefined));
    const { url } = await owner(calls);
    const channel = await open(url);
    const sent = channel.send(head("never"), undefined, 60_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await calls.close(100);
    await expect(sent.answer).rejects.toBeInstanceOf(ChannelClosedError);
  });

  it("still in its handshake with a node that froze, ends when the node's lease lapses, not at its timeout", async () => {
    // A frozen node: its kernel accepts the connection, nothing ever answers the upgrade.
    const frozen = createServer();
    const accepted = new Promise<Socket>((resolve) => frozen.once("connection", resolve));
    const url = await listen(frozen);
    const forwarder = new PeerForwarder(sender);
    const asked = forwarder.ask({ url, nodeId: "owner" }, "req-1", "browserToken", { id: "b1" }).catch((error: unknown) => error);
    const socket = await accepted;
    const closed = once(socket, "close");
    // The next renewal finds the node no longer live.
    forwarder.keepChannelsTo(new Set());
    await closed;
    expect(await asked).toMatchObject({ message: expect.stringContaining("its lease lapsed") });
    forwarder.close();
  });

  it("runs no call written into it by someone on the path between the nodes, nor one replayed, and closes", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    const ran: string[] = [];
    calls.handle("deleteBrowser", async (call) => {
      ran.push(call.requestId);
      return { status: 204, headers: {} };
    });
    const { url } = await owner(calls);
    const call = { op: "deleteBrowser", browser: { id: "b1", project_id: "someone-else" }, headers: {} };
    for (const attack of ["injected", "replayed"] as const) {
      const path = await onPath(url);
      const channel = await open(path.url);
      expect((await channel.send({ ...call, request_id: "first" }, undefined, 5_000).answer).status).toBe(204);
      // What an attacker on the path can write: frames of their own (they hold no key), or the node's own bytes again.
      path.inject(
        attack === "injected"
          ? encodeFrame(FrameKind.call, 77, { ...call, request_id: attack }, undefined, new FrameSeal(randomBytes(32), "opener"))
          : path.sentAfterUpgrade(),
      );
      await expect.poll(() => channel.closed).toBe(true);
      expect(ran).toEqual(["first"]);
      ran.length = 0;
    }
    expect(logged.filter((entry) => entry.message.includes("not the protocol"))).toHaveLength(2);
  });

  it("takes no answer written into it by someone on the path: the call fails, it is not answered for", async () => {
    const calls = new PeerCalls<string>({ peerOf, maxBodyBytes: 1024, log });
    calls.handle("never", () => new Promise(() => undefined));
    const { url } = await owner(calls);
    const path = await onPath(url);
    const channel = await open(path.url);
    const sent = channel.send(head("never"), undefined, 60_000);
    await expect.poll(() => path.sentAfterUpgrade().length).toBeGreaterThan(0);
    path.answer(encodeFrame(FrameKind.answer, 1, { status: 200, headers: {} }, '{"forged":true}', new FrameSeal(randomBytes(32), "owner")));
    await expect(sent.answer).rejects.toBeInstanceOf(ChannelClosedError);
  });

  it("is refused by a forwarding node when the owner answers a call it never sent", async () => {
    const server = createServer();
    server.on("upgrade", (request: IncomingMessage, socket: Socket) => {
      const key = ownerAuth.verify(request)?.channelKey ?? KEY;
      socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${PEER_CHANNEL_PROTOCOL}\r\nConnection: Upgrade\r\n\r\n`);
      socket.write(encodeFrame(FrameKind.answer, 42, { status: 200, headers: {} }, undefined, new FrameSeal(key, "owner")));
    });
    const channel = await open(await listen(server));
    await expect.poll(() => channel.closed).toBe(true);
  });
});

/** Once `socket` closes, reset or not (`once` would reject on the reset's error). */
const closed = (socket: Socket) => new Promise((resolve) => socket.once("close", resolve));

/**
 * A TCP relay to `url`, standing where an attacker on the network between two nodes
 * stands: it passes every byte, and writes bytes of its own either way.
 */
async function onPath(url: string): Promise<{
  url: string;
  inject(bytes: Buffer): void;
  answer(bytes: Buffer): void;
  sentAfterUpgrade(): Buffer;
}> {
  const target = new URL(url);
  let toOwner: Socket | undefined;
  let toNode: Socket | undefined;
  const sent: Buffer[] = [];
  const relay = createTcpServer((from) => {
    toNode = from;
    const upstream = connect(Number(target.port), target.hostname);
    toOwner = upstream;
    from.on("data", (chunk: Buffer) => sent.push(chunk));
    from.pipe(upstream).pipe(from);
    from.on("error", () => upstream.destroy());
    upstream.on("error", () => from.destroy());
    connections.add(from);
    connections.add(upstream);
  });
  relay.listen(0, "127.0.0.1");
  await once(relay, "listening");
  servers.push(relay as unknown as Server);
  return {
    url: `http://127.0.0.1:${(relay.address() as AddressInfo).port}`,
    inject: (bytes) => toOwner?.write(bytes),
    answer: (bytes) => toNode?.write(bytes),
    sentAfterUpgrade: () => {
      const all = Buffer.concat(sent);
      return all.subarray(all.indexOf("\r\n\r\n") + 4);
    },
  };
}

/** A channel opened by hand, to send what a well-behaved node would not (sealed with `seal`, in order). */
function rawChannel(url: string): Promise<{ socket: Socket; seal: FrameSeal }> {
  const { headers, key } = opening();
  return new Promise((resolve, reject) => {
    const request = httpRequest(new URL(PEER_CHANNEL_PATH, url), { headers: { connection: "Upgrade", upgrade: PEER_CHANNEL_PROTOCOL, ...headers } });
    request.on("upgrade", (_response, socket) => {
      socket.on("error", () => undefined);
      resolve({ socket, seal: new FrameSeal(key, "opener") });
    });
    request.on("response", (response) => reject(new Error(`answered ${response.statusCode}`)));
    request.on("error", reject);
    request.end();
  });
}
