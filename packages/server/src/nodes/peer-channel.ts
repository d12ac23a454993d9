import http from "node:http";
import https from "node:https";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";
import type { ChannelOpening } from "./peer-auth.js";
import { MAX_CALLS_PER_CHANNEL, PEER_CHANNEL_PATH, PEER_CHANNEL_PROTOCOL, type PeerAnswer } from "./peer-calls.js";
import { encodeFrame, type Frame, FrameError, FrameKind, FrameReader, FrameSeal, isStringRecord } from "./peer-frames.js";

/** What a forwarding node sends with a call (see {@link PeerCall}, the owner's side of it). */
export interface PeerCallHead {
  op: string;
  request_id: string;
  browser: unknown;
  headers: Record<string, string>;
}

/** A call sent on a channel: its answer, and how to say its caller left. */
export interface SentCall {
  /**
   * The owner's answer; rejects with {@link ChannelClosedError} when the channel closes
   * first (the call may have run), {@link CallRefusedError} when the owner refused it.
   */
  answer: Promise<PeerAnswer>;
  /** The caller left: the owner aborts the call's signal. Its answer still comes. */
  leave(): void;
}

interface Pending {
  resolve(answer: PeerAnswer): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

/** The channel closed before a call's answer came: the call may have run on the owner. */
export class ChannelClosedError extends Error {
  /** Stable code of the failure. */
  readonly code = "peer_channel_closed";

  constructor(message: string, cause?: unknown) {
    super(message, { cause });
    this.name = "ChannelClosedError";
  }
}

/** The owner took a call no more (it is shutting down): nothing of the call ran. */
export class CallRefusedError extends Error {
  /** Stable code of the failure. */
  readonly code = "peer_call_refused";

  constructor() {
    super("The node is shutting down and took the call no more.");
    this.name = "CallRefusedError";
  }
}

function isAnswerHead(head: unknown): head is { status: number; headers: Record<string, string> } {
  if (typeof head !== "object" || head === null) return false;
  const { status, headers } = head as Record<string, unknown>;
  return Number.isInteger(status) && (status as number) >= 100 && (status as number) <= 599 && isStringRecord(headers);
}

/**
 * One connection from this node to another carrying every call forwarded there, many at
 * once (frames: peer-frames.ts), so that a forwarded call costs a frame each way instead
 * of an HTTP request and response. Opened with a proof made for the node (peer-auth.ts); see {@link PeerCalls}
 * for the owner's end.
 */
export class PeerChannel {
  readonly #socket: Duplex;
  readonly #seal: FrameSeal;
  readonly #pending = new Map<number, Pending>();
  #nextId = 1;
  #closed: Error | undefined;

  private constructor(socket: Duplex, head: Buffer, maxAnswerBytes: number, key: Buffer) {
    this.#socket = socket;
    this.#seal = new FrameSeal(key, "opener");
    const reader = new FrameReader(maxAnswerBytes, this.#seal);
    const read = (chunk: Buffer) => {
      try {
        reader.push(chunk, (frame) => this.#receive(frame));
      } catch (error) {
        socket.destroy(error as Error);
      }
    };
    socket.on("data", read);
    socket.on("error", (error) => this.#end(error));
    socket.once("end", () => this.#end(new Error("the node ended the connection")));
    socket.once("close", () => this.#end(new Error("the connection closed")));
    if (head.length > 0) read(head);
  }

  /**
   * Opens a channel to the node at `base` (`opening`: the proof of this opening, made for
   * that node, and the key of the channel's seals). Rejects when the node does not accept
   * it within `timeoutMs`, or when `signal` aborts first (with its reason).
   */
  static open(base: string, opening: ChannelOpening, options: { timeoutMs: number; maxAnswerBytes: number; signal?: AbortSignal }): Promise<PeerChannel> {
    const target = new URL(PEER_CHANNEL_PATH, base);
    const client = target.protocol === "https:" ? https : http;
    const { signal } = options;
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<PeerChannel>((resolve, reject) => {
      const request = client.request(target, {
        method: "GET",
        headers: { ...opening.headers, connection: "Upgrade", upgrade: PEER_CHANNEL_PROTOCOL },
        agent: false,
        timeout: options.timeoutMs,
      });
      request.once("timeout", () => request.destroy(new Error(`no answer within ${options.timeoutMs} ms`)));
      request.on("error", reject);
      // Only the handshake: an open channel is closed with close(), not with the signal.
      const abort = () => request.destroy(signal?.reason as Error);
      signal?.addEventListener("abort", abort, { once: true });
      request.once("close", () => signal?.removeEventListener("abort", abort));
      request.once("response", (response) => {
        response.resume();
        request.destroy();
        reject(new Error(`the node answered ${response.statusCode} instead of opening a channel`));
      });
      request.once("upgrade", (response, socket, head) => {
        request.setTimeout(0);
        socket.setTimeout(0);
        if (response.headers.upgrade !== PEER_CHANNEL_PROTOCOL) {
          socket.destroy();
          reject(new Error(`the node upgraded to ${JSON.stringify(response.headers.upgrade)}, not ${PEER_CHANNEL_PROTOCOL}`));
          return;
        }
        const net = socket as Socket;
        net.setNoDelay(true);
        net.setKeepAlive(true, 10_000);
        signal?.removeEventListener("abort", abort);
        resolve(new PeerChannel(socket, head, options.maxAnswerBytes, opening.key));
      });
      request.end();
    });
  }

  /** Whether the channel closed (no call can be sent on it). */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /** Calls open on the channel. */
  get open(): number {
    return this.#pending.size;
  }

  /**
   * Sends a call. Throws {@link ChannelClosedError} when the channel is closed, and a
   * RangeError when it holds {@link MAX_CALLS_PER_CHANNEL} calls already. An owner that
   * leaves the call unanswered for `timeoutMs` is not serving (its operations answer
   * sooner, an invocation within 120 s): the channel is closed, and its calls reject.
   */
  send(head: PeerCallHead, body: Buffer | string | undefined, timeoutMs: number): SentCall {
    if (this.#closed !== undefined) throw new ChannelClosedError("The channel is closed.", this.#closed);
    if (this.#pending.size >= MAX_CALLS_PER_CHANNEL) throw new RangeError(`The channel holds ${MAX_CALLS_PER_CHANNEL} calls already.`);
    let id = this.#nextId;
    while (this.#pending.has(id)) id = id >= 0xffff_ffff ? 1 : id + 1;
    this.#nextId = id >= 0xffff_ffff ? 1 : id + 1;
    const answer = new Promise<PeerAnswer>((resolve, reject) => {
      const timer = setTimeout(() => this.#end(new Error(`call ${id} had no answer within ${timeoutMs} ms`)), timeoutMs);
      this.#pending.set(id, { resolve, reject, timer });
    });
    this.#socket.write(encodeFrame(FrameKind.call, id, head, body, this.#seal));
    let left = false;
    return {
      answer,
      leave: () => {
        if (left || !this.#pending.has(id) || this.#closed !== undefined) return;
        left = true;
        this.#socket.write(encodeFrame(FrameKind.leave, id, null, undefined, this.#seal));
      },
    };
  }

  #receive(frame: Frame): void {
    const pending = this.#pending.get(frame.id);
    if (frame.kind !== FrameKind.answer && frame.kind !== FrameKind.refused) throw new FrameError(`The owner sent a frame of kind ${frame.kind}.`);
    if (pending === undefined) throw new FrameError(`The owner answered call ${frame.id}, which is not open.`);
    if (frame.kind === FrameKind.answer && !isAnswerHead(frame.head)) throw new FrameError("An answer's head is not { status, headers }.");
    this.#pending.delete(frame.id);
    clearTimeout(pending.timer);
    if (frame.kind === FrameKind.refused) pending.reject(new CallRefusedError());
    else {
      const head = frame.head as { status: number; headers: Record<string, string> };
      pending.resolve({ status: head.status, headers: head.headers, body: frame.body });
    }
  }

  #end(error: Error): void {
    if (this.#closed !== undefined) return;
    this.#closed = error;
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(new ChannelClosedError(`The channel closed before the answer came: ${error.message}`, error));
    }
    this.#pending.clear();
    this.#socket.destroy();
  }

  /** Closes the channel; its open calls reject. */
  close(): void {
    this.#end(new Error("this node closed the channel"));
  }
}
