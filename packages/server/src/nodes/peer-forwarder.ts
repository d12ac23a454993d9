import http, { type IncomingHttpHeaders, type IncomingMessage } from "node:http";
import https from "node:https";
import type { Duplex } from "node:stream";
import { limits } from "@browser-service/types";
import type { FastifyReply, FastifyRequest } from "fastify";
import { RateLimitedError } from "../http/api-errors.js";
import type { PeerAuth, PeerClaims } from "./peer-auth.js";
import { PEER_CHANNEL_PATH, type PeerAnswer, type PeerOperationName } from "./peer-calls.js";
import { CallRefusedError, PeerChannel, type SentCall } from "./peer-channel.js";

/** The node a request was forwarded to did not answer (refused, reset, timed out) before its response began. */
export class PeerUnreachableError extends Error {
  /** Stable code of the failure. */
  readonly code = "peer_unreachable";

  constructor(target: string, cause: unknown) {
    super(`The node at ${target} did not answer: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "PeerUnreachableError";
  }
}

/** The node a create was placed on declined it (it drains, see {@link ForwardOptions.declined}): nothing ran there, and nothing was answered. */
export class PeerDeclinedError extends Error {
  /** Stable code of the failure. */
  readonly code = "peer_declined";

  constructor(target: string, why: string) {
    super(`The node at ${target} declined the request: ${why}`);
    this.name = "PeerDeclinedError";
  }
}

/**
 * A call sent to the node that owns its browser got no answer: the node went away or
 * stopped answering after it had the call, so the call may have run there.
 */
export class PeerLostError extends Error {
  /** Stable code of the failure. */
  readonly code = "peer_lost";

  constructor(target: string, cause: unknown) {
    super(`The node at ${target} stopped answering after it had the call: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = "PeerLostError";
  }
}

// Hop-by-hop (RFC 9110 7.6.1) or recomputed: never passed on. The peer headers are the
// forwarding node's own to set; a client's are dropped.
const NOT_FORWARDED_UPGRADE = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "content-length",
  "expect",
]);
// A forwarded request carries the scope resolved here (an upgrade, the browser it opens):
// the client's credential stays on this node.
const NOT_FORWARDED = new Set([...NOT_FORWARDED_UPGRADE, "authorization"]);
const isPeerHeader = (name: string) => name.startsWith("x-browser-service-");
const NOT_RETURNED = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "x-request-id", "date"]);

// The largest answer a forwarded request can get: the tool list's cap, and room for headers' worth of slack.
const MAX_RESPONSE_BYTES = limits.schemas.WebMcpToolList.maxBytes + 64 * 1024;
// An invocation may wait up to 120 s for its tool; a peer silent for longer than this is gone.
const IDLE_TIMEOUT_MS = 150_000;
// A WebSocket handshake is answered at once, or the peer is not serving.
const HANDSHAKE_TIMEOUT_MS = 10_000;
// How long a client may take to close once the owner closed its side of a relayed WebSocket.
const CLOSE_GRACE_MS = 5_000;
/**
 * Forwarded HTTP requests one client may have waiting at once: no one client holds more
 * than an eighth of a node's connections to another (the agent's 256).
 */
export const MAX_FORWARDED_PER_CLIENT = 32;
// A refused handshake's Error body is small; a peer sending more is cut off.
const MAX_REFUSAL_BYTES = 64 * 1024;

/**
 * Where a request to `target` goes: its advertised origin and `path`, a path this node
 * built (it starts with one `/`, so no part of it can name another host).
 */
export function peerUrl(target: PeerTarget, path: string): URL {
  if (!path.startsWith("/") || path.startsWith("//"))
    throw new RangeError(`A path sent to another node starts with one "/"; received ${JSON.stringify(path.slice(0, 100))}.`);
  const url = new URL(`${new URL(target.url).origin}${path}`);
  if (url.origin !== new URL(target.url).origin) throw new RangeError(`The path ${JSON.stringify(path.slice(0, 100))} leaves the node's origin.`);
  return url;
}

/** The module that speaks `target`'s protocol. */
function clientFor(target: URL): typeof http | typeof https {
  return target.protocol === "https:" ? https : http;
}

/** The whole body of `response`, or a rejection once it passes `max` bytes (the response is then destroyed). */
function bounded(response: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) response.destroy(new Error(`The node's answer passed ${max} bytes.`));
      else chunks.push(chunk);
    });
    response.on("error", reject);
    response.once("end", () => resolve(Buffer.concat(chunks)));
  });
}

function forwardedHeaders(headers: IncomingHttpHeaders, dropped: ReadonlySet<string>, extra: Record<string, string>): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || dropped.has(name) || isPeerHeader(name)) continue;
    out[name] = value;
  }
  return Object.assign(out, extra);
}

/** A node to send to, as the nodes' table has it: never anything a client wrote. */
export interface PeerTarget {
  /** Its advertised URL; only its origin is used. */
  url: string;
  nodeId: string;
}

/** How {@link PeerForwarder.forward} sends a request on. */
export interface ForwardOptions {
  /** The path (and query) to send, as this node's route chose it: the client's request target is never used. */
  path: string;
  /** What this node says of the request, beside its client (the resolved scope, the placement), signed with it. */
  claims?: Omit<PeerClaims, "client">;
  /**
   * Why the node's answer says it took nothing and another node should (its status and
   * body), or `undefined` for an answer to pass on: a declined one is not answered, the
   * forward fails with {@link PeerDeclinedError}.
   */
  declined?: (status: number, body: Buffer) => string | undefined;
}

/** What {@link PeerForwarder.call} sends: the operation, and the browser's row as this node read it. */
export interface ForwardedCall {
  /** The operation (its `operationId`), served on the owner by the route's own code. */
  op: PeerOperationName;
  browser: unknown;
  /** The request's headers the operation reads. */
  headers: Record<string, string>;
  /**
   * A caller's half-close (FIN) counts as leaving, as it does for a WebMCP invocation
   * served directly: the owner cancels its work, and its answer still comes back.
   */
  leaveOnHalfClose?: boolean;
}

/**
 * Passes requests bound to a browser of another node to that node. A browser's operations
 * (WebMCP list and invoke, delete) go as calls on one channel per node ({@link call}),
 * which the owner serves with the routes' own code, as do reads of its browsers' tokens
 * ({@link ask}); a create placed there goes as an HTTP request with its body as it came,
 * the scope resolved here instead of the client's credential, and the client counted here
 * ({@link forward}). Every request carries a proof made for its node ({@link PeerAuth}),
 * never the secret, and goes to the origin the nodes' table gives for the node, with a
 * path this node built: nothing a client wrote chooses where it goes. Either
 * way the owner applies its own checks and limits, so a client gets the same answer as
 * from the owner itself, and answers come back whole (they are bounded by the spec's
 * caps); WebSocket upgrades are relayed byte for byte once the owner accepts them.
 */
export class PeerForwarder {
  readonly #peer: PeerAuth;
  readonly #agents = new Map<string, http.Agent>();
  // Forwarded HTTP requests awaiting their answer, by client.
  readonly #inFlight = new Map<string, number>();

  // One channel per node, by origin: opening, or open.
  readonly #channels = new Map<string, Promise<PeerChannel>>();
  // What ends each opening still in its handshake, by the opening it ends.
  readonly #handshakes = new Map<Promise<PeerChannel>, AbortController>();
  // Forwarded HTTP requests (placed creates) awaiting their answer, by the node's origin.
  readonly #forwarded = new Map<string, Set<http.ClientRequest>>();

  constructor(peer: PeerAuth) {
    this.#peer = peer;
  }

  /** The channel to `target`: the open one, or a new one when there is none or it closed. */
  #channel(target: PeerTarget): Promise<PeerChannel> {
    const origin = new URL(target.url).origin;
    const current = this.#channels.get(origin);
    if (current === undefined) return this.#open(origin, target.nodeId, undefined);
    return current.then((channel) => (channel.closed ? this.#open(origin, target.nodeId, current) : channel));
  }

  #open(origin: string, nodeId: string, stale: Promise<PeerChannel> | undefined): Promise<PeerChannel> {
    // Two callers that found the same closed channel open one new one.
    const now = this.#channels.get(origin);
    if (now !== undefined && now !== stale) return now;
    const handshake = new AbortController();
    const opening = PeerChannel.open(origin, this.#peer.opening(nodeId, PEER_CHANNEL_PATH), {
      timeoutMs: HANDSHAKE_TIMEOUT_MS,
      maxAnswerBytes: MAX_RESPONSE_BYTES,
      signal: handshake.signal,
    });
    this.#channels.set(origin, opening);
    this.#handshakes.set(opening, handshake);
    // A failed opening is not kept: the next call tries again.
    opening.catch(() => (this.#channels.get(origin) === opening ? this.#channels.delete(origin) : undefined)).finally(() => this.#handshakes.delete(opening));
    return opening;
  }

  /** Counts a forwarded request of `clientKey` while `run` runs: 429 when it has {@link MAX_FORWARDED_PER_CLIENT} already. */
  async #counted(clientKey: string, run: () => Promise<void>): Promise<void> {
    // The connections to a node are shared by every client: one client holding many long
    // calls (an invocation waits up to 120 s) must not hold more than its share of them.
    const held = this.#inFlight.get(clientKey) ?? 0;
    if (held >= MAX_FORWARDED_PER_CLIENT) {
      throw new RateLimitedError(`This client already has ${MAX_FORWARDED_PER_CLIENT} requests waiting on other nodes of the service, the most it may`, 1);
    }
    this.#inFlight.set(clientKey, held + 1);
    try {
      await run();
    } finally {
      const left = (this.#inFlight.get(clientKey) ?? 1) - 1;
      if (left > 0) this.#inFlight.set(clientKey, left);
      else this.#inFlight.delete(clientKey);
    }
  }

  /**
   * Sends `request`'s operation to `target` over that node's peer channel, and
   * answers `reply` with the owner's answer; resolves once it is sent. The owner serves it
   * with the route's own code, for the browser row read here. Rejects with
   * {@link PeerUnreachableError} when the node cannot be reached or refuses the call
   * (nothing ran), {@link PeerLostError} when it had the call but no answer came (it may
   * have run); a caller who leaves (see {@link ForwardedCall.leaveOnHalfClose}) aborts the
   * call on the owner, as it would there.
   */
  call(request: FastifyRequest, reply: FastifyReply, target: PeerTarget, clientKey: string, call: ForwardedCall): Promise<void> {
    return this.#counted(clientKey, () => this.#call(request, reply, target, call));
  }

  async #call(request: FastifyRequest, reply: FastifyReply, target: PeerTarget, call: ForwardedCall): Promise<void> {
    const origin = new URL(target.url).origin;
    let sent: SentCall;
    try {
      const channel = await this.#channel(target);
      sent = channel.send({ op: call.op, request_id: String(request.id), browser: call.browser, headers: call.headers }, request.jsonText, IDLE_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof RangeError) throw new RateLimitedError("This node has as many requests waiting on that node as it may", 1);
      throw new PeerUnreachableError(origin, error);
    }
    // The caller left: the owner aborts the call, as it would for the caller's own connection.
    const gone = () => {
      if (!reply.raw.writableFinished) sent.leave();
    };
    reply.raw.once("close", gone);
    if (call.leaveOnHalfClose === true) {
      const socket = request.raw.socket;
      if (socket.readableEnded) sent.leave();
      else {
        socket.once("end", gone);
        reply.raw.once("close", () => socket.off("end", gone));
      }
    }
    let answer: PeerAnswer;
    try {
      answer = await sent.answer;
    } catch (error) {
      throw error instanceof CallRefusedError ? new PeerUnreachableError(origin, error) : new PeerLostError(origin, error);
    }
    reply.code(answer.status).headers(answer.headers);
    // Not `return reply.send(...)` from an async function: a reply is a thenable, and the promise would take its outcome instead.
    reply.send(answer.body === undefined || answer.body.length === 0 ? undefined : answer.body);
  }

  /**
   * Asks `target` for `op` on `browser`, for a request of this node that waits on
   * the answer as one part of its own (such as a token read): the owner's answer, or a
   * rejection when the node does not answer within 10 s (the call is then given up here;
   * the channel stays open for the others' calls).
   */
  async ask(target: PeerTarget, requestId: string, op: PeerOperationName, browser: unknown): Promise<PeerAnswer> {
    const channel = await this.#channel(target);
    const { answer } = channel.send({ op, request_id: requestId, browser, headers: {} }, undefined, IDLE_TIMEOUT_MS);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${HANDSHAKE_TIMEOUT_MS} ms`)), HANDSHAKE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([answer, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  #agent(target: URL): http.Agent {
    let agent = this.#agents.get(target.origin);
    if (agent === undefined) {
      const options = { keepAlive: true, maxSockets: 256, maxFreeSockets: 32 };
      agent = target.protocol === "https:" ? new https.Agent(options) : new http.Agent(options);
      this.#agents.set(target.origin, agent);
    }
    return agent;
  }

  /**
   * Sends `request` (its JSON body as it arrived) to `target` at `options.path` and answers
   * `reply` with that node's response; resolves once it is sent. Rejects with {@link PeerUnreachableError}
   * when the node does not answer; a caller who leaves ends the forwarded request too
   * (so that the owner sees its connection close, as it would directly).
   */
  forward(request: FastifyRequest, reply: FastifyReply, target: PeerTarget, clientKey: string, options: ForwardOptions): Promise<void> {
    return this.#counted(clientKey, () => this.#forward(request, reply, peerUrl(target, options.path), target.nodeId, clientKey, options));
  }

  #forward(request: FastifyRequest, reply: FastifyReply, target: URL, nodeId: string, clientKey: string, options: ForwardOptions): Promise<void> {
    // The body as it arrived; one parsed from something else (none here) is serialized.
    const text = request.jsonText ?? (request.body === undefined || request.body === null ? undefined : JSON.stringify(request.body));
    const body = text === undefined || text === "" ? undefined : Buffer.from(text);
    const proof = this.#peer.sign({ method: request.method, path: options.path, to: nodeId, body, claims: { ...options.claims, client: clientKey } });
    const headers = forwardedHeaders(request.headers, NOT_FORWARDED, proof);
    if (body !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(body.length);
    }
    return new Promise((resolve, reject) => {
      let answered = false;
      const upstream = clientFor(target).request(
        target,
        { method: request.method, headers, agent: this.#agent(target), timeout: IDLE_TIMEOUT_MS },
        (response) => {
          answered = true;
          bounded(response, MAX_RESPONSE_BYTES).then((body) => {
            const declined = options.declined?.(response.statusCode ?? 502, body);
            if (declined !== undefined) {
              reject(new PeerDeclinedError(target.origin, declined));
              return;
            }
            reply.code(response.statusCode ?? 502);
            for (const [name, value] of Object.entries(response.headers)) {
              if (value !== undefined && !NOT_RETURNED.has(name)) reply.header(name, value);
            }
            // Not `resolve(reply.send(...))`: a reply is a thenable, and the promise would take its outcome instead.
            reply.send(body);
            resolve();
          }, reject);
        },
      );
      upstream.once("timeout", () => upstream.destroy(new Error(`no answer within ${IDLE_TIMEOUT_MS} ms`)));
      let waiting = this.#forwarded.get(target.origin);
      if (waiting === undefined) this.#forwarded.set(target.origin, (waiting = new Set()));
      waiting.add(upstream);
      upstream.once("close", () => {
        waiting.delete(upstream);
        if (waiting.size === 0 && this.#forwarded.get(target.origin) === waiting) this.#forwarded.delete(target.origin);
      });
      // `on`, not `once`: a request can fail twice (a write's EPIPE, then the reset), and an
      // 'error' without a listener would end the whole server. Later ones find the promise settled.
      upstream.on("error", (error) => reject(answered ? error : new PeerUnreachableError(target.origin, error)));
      // The caller left: the owner sees its connection close, as it would have seen the caller's.
      const gone = () => {
        if (!reply.raw.writableFinished) upstream.destroy();
      };
      reply.raw.once("close", gone);
      // Headers and body leave at once: Nagle's algorithm would hold the body for the peer's delayed ACK.
      upstream.setNoDelay(true);
      upstream.end(body);
    });
  }

  /**
   * Relays a WebSocket upgrade (`request`, its `socket` and `head`) to `target` at `path`
   * (built by this node's endpoint): the owner's own answer (its 101, or its refusal with
   * the Error body) reaches the client, then bytes flow both ways until either side
   * closes. An `Authorization` header never goes along: a DevTools upgrade this node
   * checked says so in its signed `opens` claim instead, and a live view's token (which
   * only the owner can check) travels in its own header. `unreachable` is called, with
   * the socket untouched, when the node does not answer the handshake.
   */
  upgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    to: { target: PeerTarget; path: string; opens?: string },
    clientKey: string,
    unreachable: (error: PeerUnreachableError) => void,
  ): void {
    const target = peerUrl(to.target, to.path);
    const claims = to.opens === undefined ? { client: clientKey } : { client: clientKey, opens: to.opens };
    const proof = this.#peer.sign({ method: "GET", path: to.path, to: to.target.nodeId, claims });
    const headers = forwardedHeaders(request.headers, NOT_FORWARDED, proof);
    headers.connection = "Upgrade";
    headers.upgrade = request.headers.upgrade ?? "websocket";
    const upstream = clientFor(target).request(target, { method: "GET", headers, agent: false, timeout: HANDSHAKE_TIMEOUT_MS });
    let settled = false;
    const clientGone = () => upstream.destroy();
    socket.once("close", clientGone);
    upstream.once("timeout", () => upstream.destroy(new Error(`no answer within ${HANDSHAKE_TIMEOUT_MS} ms`)));
    upstream.on("error", (error) => {
      if (settled) return;
      settled = true;
      socket.off("close", clientGone);
      if (!socket.destroyed) unreachable(new PeerUnreachableError(target.origin, error));
    });
    upstream.once("upgrade", (response, peerSocket, peerHead) => {
      settled = true;
      socket.off("close", clientGone);
      upstream.setTimeout(0);
      peerSocket.setTimeout(0);
      const lines = [`HTTP/1.1 ${response.statusCode ?? 101} ${response.statusMessage ?? "Switching Protocols"}`];
      for (let i = 0; i < response.rawHeaders.length; i += 2) lines.push(`${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}`);
      socket.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (peerHead.length > 0) socket.write(peerHead);
      if (head.length > 0) peerSocket.write(head);
      const end = () => {
        socket.destroy();
        peerSocket.destroy();
      };
      // The owner closed: what it sent last (a close frame, 1009 for an oversized message)
      // still reaches the client, whose late bytes are read and dropped (unread bytes
      // would turn the close into a reset); a client that does not close in turn is cut off.
      const ownerEnded = () => {
        socket.unpipe(peerSocket);
        socket.resume();
        socket.end();
        setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
      };
      // An owner that resets the connection (it closed while the client was still sending)
      // may still have sent its close frame first: the client gets what arrived.
      peerSocket.on("error", () => undefined);
      peerSocket.once("end", ownerEnded);
      peerSocket.once("close", () => (socket.writableEnded ? undefined : ownerEnded()));
      socket.on("error", end);
      socket.once("close", end);
      // pipe() follows each side's backpressure: a slow reader holds the other side, memory stays bounded.
      peerSocket.pipe(socket);
      socket.pipe(peerSocket);
    });
    upstream.once("response", (response) => {
      settled = true;
      socket.off("close", clientGone);
      bounded(response, MAX_REFUSAL_BYTES).then(
        (body) => {
          const lines = [`HTTP/1.1 ${response.statusCode ?? 502} ${response.statusMessage ?? ""}`];
          for (let i = 0; i < response.rawHeaders.length; i += 2) {
            const name = (response.rawHeaders[i] as string).toLowerCase();
            if (name !== "content-length" && name !== "transfer-encoding" && name !== "connection")
              lines.push(`${response.rawHeaders[i]}: ${response.rawHeaders[i + 1]}`);
          }
          lines.push(`Content-Length: ${body.length}`, "Connection: close");
          socket.end(Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), body]));
        },
        () => socket.destroy(),
      );
    });
    upstream.end();
  }

  /**
   * Closes the channels to every node but those at `origins` (the live nodes), and ends the
   * forwarded requests waiting on the others: calls waiting on a node whose lease lapsed
   * end now, instead of at their timeout.
   */
  keepChannelsTo(origins: ReadonlySet<string>): void {
    for (const [origin, waiting] of this.#forwarded) {
      if (origins.has(origin)) continue;
      this.#forwarded.delete(origin);
      for (const upstream of waiting) upstream.destroy(new Error(`the node at ${origin} is not live: its lease lapsed`));
    }
    for (const [origin, channel] of this.#channels) {
      if (origins.has(origin)) continue;
      this.#channels.delete(origin);
      // A channel still in its handshake (opened after the node froze) ends too, not at its timeout.
      this.#handshakes.get(channel)?.abort(new Error(`the node at ${origin} is not live: its lease lapsed`));
      channel.then((open) => open.close()).catch(() => undefined);
    }
  }

  /** Closes the kept-alive connections and the channels to other nodes. */
  close(): void {
    for (const agent of this.#agents.values()) agent.destroy();
    this.#agents.clear();
    for (const channel of this.#channels.values()) {
      this.#handshakes.get(channel)?.abort(new Error("this node is stopping"));
      channel.then((open) => open.close()).catch(() => undefined);
    }
    this.#channels.clear();
  }
}
