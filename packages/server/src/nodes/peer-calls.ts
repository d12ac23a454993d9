import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { operations } from "@browser-service/types";
import { NotFoundError } from "../http/api-errors.js";
import { type ErrorLog, logApiError, serviceError } from "../http/error-handler.js";
import type { UpgradeRoute } from "../http/upgrade-router.js";
import type { ServerLog } from "../observe/server-log.js";
import type { VerifiedPeer } from "./peer-auth.js";
import { encodeFrame, type Frame, FrameError, FrameKind, FrameReader, FrameSeal, isStringRecord } from "./peer-frames.js";

/** The path a node opens its peer channel on, with `Upgrade: browser-service-peer/1`. */
export const PEER_CHANNEL_PATH = "/_peer/channel";
/** The protocol of a peer channel (the `Upgrade` token). */
export const PEER_CHANNEL_PROTOCOL = "browser-service-peer/1";
/**
 * Calls one channel may have open at once. A forwarding node holds each to one client's
 * request, and its clients to {@link MAX_FORWARDED_PER_CLIENT}; a peer past this is broken.
 */
export const MAX_CALLS_PER_CHANNEL = 4096;
// A call's head (the operation, the browser's row, a header or two) is small; the body is the request's own, under the server's body limit.
const MAX_HEAD_BYTES = 64 * 1024;

/**
 * What one node may call on another: a spec operation (the owner runs the route's own
 * code for it), or one of the reads only nodes make of each other. A name outside it is
 * a compile error where it is registered or sent, not a refusal on another node.
 */
export type PeerOperationName = keyof operations | "browserToken" | "browserRead";

/** A forwarded call, as the owner's operation gets it. */
export interface PeerCall {
  /** The operation (the spec's `operationId`). */
  op: string;
  /** The forwarding node's id of the client's request, for the logs. */
  requestId: string;
  /** The browser's row as the forwarding node read it (it checked the caller may use it). */
  browser: unknown;
  /** The request's headers the operation reads (such as `if-none-match`). */
  headers: Record<string, string>;
  /** The request's body as it arrived (JSON text), or empty. */
  body: Buffer;
  /** Aborted when the caller leaves (it closed; for an invocation, half-closed too) or the forwarding node's channel closes. */
  signal: AbortSignal;
}

/** What an operation answers: the response the caller gets, status, headers and body. */
export interface PeerAnswer {
  status: number;
  headers: Record<string, string>;
  body?: Buffer | string;
}

/** An operation another node can call: it answers as the route would, or throws the route's errors. */
export type PeerOperation = (call: PeerCall) => Promise<PeerAnswer>;

interface Channel {
  socket: Duplex;
  seal: FrameSeal;
  calls: Map<number, AbortController>;
}

/** Settings of {@link PeerCalls}. */
export interface PeerCallsOptions {
  /** The node `request` comes from, its proof (made for this very request) checked already; `undefined`: a plain client's. */
  peerOf: (request: IncomingMessage) => VerifiedPeer | undefined;
  /** The largest body of a call: the server's own body limit. */
  maxBodyBytes: number;
  /**
   * Whether this node may serve calls now: `false` once its lease lapsed (the others
   * count its browsers as crashed, and answered the calls waiting on it). A node frozen
   * and then continued finds such calls queued on its sockets; it refuses them unrun.
   */
  serving?: () => boolean;
  log: ErrorLog & Pick<ServerLog, "warn"> & { child(bindings: object): ErrorLog };
}

function isCallHead(head: unknown): head is { op: string; request_id: string; browser: unknown; headers: Record<string, string> } {
  if (typeof head !== "object" || head === null) return false;
  const { op, request_id, browser, headers } = head as Record<string, unknown>;
  return typeof op === "string" && typeof request_id === "string" && typeof browser === "object" && browser !== null && isStringRecord(headers);
}

/**
 * The owner's end of the peer channels: serves the calls other nodes forward to this
 * node's browsers (WebMCP list and invoke, delete, a token read, a login flow's submit and delete), many at once over one connection per
 * node, without an HTTP request each. Only a node with a proof made for this opening
 * opens one; to anyone else the path is unknown. The operations are the routes' own, so a forwarded
 * call gets the answer, errors and limits a direct request gets; a caller who leaves
 * aborts its call's signal, as a direct caller's leaving does.
 *
 * @typeParam Op - the operation names it serves: a server's are {@link PeerOperationName}.
 */
export class PeerCalls<Op extends string = PeerOperationName> {
  readonly #options: PeerCallsOptions;
  readonly #operations = new Map<string, PeerOperation>();
  readonly #channels = new Set<Channel>();
  #closing = false;
  #drained: (() => void) | undefined;

  constructor(options: PeerCallsOptions) {
    this.#options = options;
  }

  /** Serves `op` (an `operationId`) with `operation`. */
  handle(op: Op, operation: PeerOperation): void {
    this.#operations.set(op, operation);
  }

  /**
   * The upgrades that open a peer channel from another node, for the server's upgrade
   * router: its path and protocol, with a valid proof (anything else is a plain client's
   * request, served as one).
   */
  readonly route: UpgradeRoute = {
    name: "peer channel",
    claims: (request) => {
      if (request.method !== "GET" || request.url !== PEER_CHANNEL_PATH || request.headers.upgrade !== PEER_CHANNEL_PROTOCOL) return false;
      // Asked once: a proof is accepted only once.
      const peer = this.#options.peerOf(request);
      if (peer !== undefined) this.#claimed.set(request, peer);
      return peer !== undefined;
    },
    take: (request, socket, head) => this.#open(request, socket, head),
  };
  readonly #claimed = new WeakMap<IncomingMessage, VerifiedPeer>();

  #open(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const peer = this.#claimed.get(request);
    if (peer === undefined || this.#closing) {
      socket.destroy();
      return;
    }
    const channel: Channel = { socket, seal: new FrameSeal(peer.channelKey, "owner"), calls: new Map() };
    this.#channels.add(channel);
    const net = socket as Partial<Socket>;
    net.setNoDelay?.(true);
    net.setKeepAlive?.(true, 10_000);
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: ${PEER_CHANNEL_PROTOCOL}\r\nConnection: Upgrade\r\n\r\n`);
    const reader = new FrameReader(this.#options.maxBodyBytes + MAX_HEAD_BYTES, channel.seal);
    const read = (chunk: Buffer) => {
      try {
        reader.push(chunk, (frame) => this.#receive(channel, frame));
      } catch (error) {
        this.#options.log.warn({ err: error }, "a node's peer channel sent what is not the protocol; it is closed");
        socket.destroy();
      }
    };
    socket.on("data", read);
    socket.on("error", () => socket.destroy());
    // The server's sockets allow half-open connections; a forwarding node that ends its side is gone.
    socket.once("end", () => socket.destroy());
    socket.once("close", () => {
      this.#channels.delete(channel);
      // The forwarding node is gone, and with it every caller of these calls.
      for (const calls of channel.calls.values()) calls.abort();
      channel.calls.clear();
      this.#checkDrained();
    });
    if (head.length > 0) read(head);
  }

  #receive(channel: Channel, frame: Frame): void {
    if (frame.kind === FrameKind.leave) {
      channel.calls.get(frame.id)?.abort();
      return;
    }
    if (frame.kind !== FrameKind.call) throw new FrameError(`A forwarding node sent a frame of kind ${frame.kind}.`);
    if (channel.calls.has(frame.id)) throw new FrameError(`Call ${frame.id} is open already.`);
    if (channel.calls.size >= MAX_CALLS_PER_CHANNEL) throw new FrameError(`A channel opened more than ${MAX_CALLS_PER_CHANNEL} calls at once.`);
    if (!isCallHead(frame.head)) throw new FrameError("A call's head is not { op, request_id, browser, headers }.");
    if (this.#closing || this.#options.serving?.() === false) {
      channel.socket.write(encodeFrame(FrameKind.refused, frame.id, null, undefined, channel.seal));
      return;
    }
    const controller = new AbortController();
    channel.calls.set(frame.id, controller);
    const { op, request_id: requestId, browser, headers } = frame.head;
    const operation = this.#operations.get(op);
    const log = this.#options.log.child({ reqId: requestId, peer_op: op });
    const run = async (): Promise<PeerAnswer> => {
      // A node of another version: said to it, not logged as this node's fault.
      if (operation === undefined)
        throw new NotFoundError(`This node serves no operation ${JSON.stringify(op.slice(0, 100))} to other nodes; every node must run the same version.`);
      return operation({ op, requestId, browser, headers, body: frame.body, signal: controller.signal });
    };
    run()
      .catch((error: unknown): PeerAnswer => {
        const apiError = serviceError(error);
        logApiError(log, apiError, error);
        return {
          status: apiError.status,
          headers: { ...apiError.headers, "content-type": "application/json; charset=utf-8" },
          body: JSON.stringify(apiError.toBody()),
        };
      })
      .then((answer) => {
        if (!channel.calls.delete(frame.id)) return;
        if (!channel.socket.destroyed)
          channel.socket.write(encodeFrame(FrameKind.answer, frame.id, { status: answer.status, headers: answer.headers }, answer.body, channel.seal));
        this.#checkDrained();
      })
      .catch((error: unknown) => this.#options.log.error({ err: error }, "could not answer a node's forwarded call"));
  }

  #checkDrained(): void {
    if (this.#drained !== undefined && [...this.#channels].every((channel) => channel.calls.size === 0)) this.#drained();
  }

  /**
   * Takes no more calls (each new one is refused, so its node says this one does not
   * answer), lets the open ones answer for up to `graceMs`, then closes every channel.
   */
  async close(graceMs: number): Promise<void> {
    this.#closing = true;
    let timer: NodeJS.Timeout | undefined;
    await new Promise<void>((resolve) => {
      this.#drained = resolve;
      timer = setTimeout(resolve, graceMs);
      this.#checkDrained();
    });
    clearTimeout(timer);
    for (const channel of this.#channels) channel.socket.destroy();
  }
}
