import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * The frames of a peer channel (see peer-channel.ts): one connection between two nodes
 * carrying many forwarded calls at once. A frame is
 *
 *     length (u32, the bytes after it) | kind (u8) | call id (u32) | head length (u32) | head (JSON) | body | seal (32 bytes)
 *
 * all integers big-endian: the head says what the call or answer is, the body carries its
 * bytes as they are (a request's JSON text, a response's body), never re-encoded. The
 * seal ({@link FrameSeal}) proves the frame came from the other node, in this place of
 * the stream.
 */

/** What a frame is. */
export const FrameKind = {
  /** Forwarding node → owner: a call (head: the operation and its resolved scope; body: the request's body). */
  call: 1,
  /** Forwarding node → owner: the caller of a call left (it closed, or half-closed an invocation). */
  leave: 2,
  /** Owner → forwarding node: a call's answer (head: status and headers; body: the response's body). */
  answer: 3,
  /** Owner → forwarding node: a call the owner takes no more, as it is shutting down; nothing of it ran. */
  refused: 4,
} as const;
export type FrameKind = (typeof FrameKind)[keyof typeof FrameKind];

const KINDS = new Set<number>(Object.values(FrameKind));
// length, kind, call id, head length.
const PREFIX_BYTES = 4 + 1 + 4 + 4;
// The largest call id: a u32.
const MAX_CALL_ID = 0xffff_ffff;

/** One decoded frame. */
export interface Frame {
  kind: FrameKind;
  id: number;
  head: unknown;
  body: Buffer;
}

/** A peer sent bytes that are not frames, or a frame over the reader's bound: the channel is closed. */
export class FrameError extends Error {
  /** Stable code of the failure. */
  readonly code = "peer_frame_invalid";

  constructor(message: string) {
    super(message);
    this.name = "FrameError";
  }
}

/** The bytes of a frame's seal: an HMAC-SHA256. */
export const SEAL_BYTES = 32;

/**
 * The seals of one channel's frames, both ways. Past the handshake (whose proof the owner
 * checked) a channel is a plain TCP stream: anyone on the path could write a call frame
 * into it, with a browser row and an operation of their choosing. Each frame therefore
 * ends with an HMAC-SHA256, keyed by the channel's own key (derived from the nodes'
 * secret and the opening proof's nonce, see peer-auth.ts), over its direction, its
 * number in that direction and its bytes: a frame injected, changed, replayed, dropped
 * or reordered does not check, and the channel is closed.
 */
export class FrameSeal {
  readonly #key: Buffer;
  readonly #sending: number;
  readonly #receiving: number;
  #sent = 0n;
  #received = 0n;

  /** `role`: the side that opened the channel (the forwarding node) or the one that accepted it (the owner). */
  constructor(key: Buffer, role: "opener" | "owner") {
    this.#key = key;
    this.#sending = role === "opener" ? 1 : 2;
    this.#receiving = role === "opener" ? 2 : 1;
  }

  /** Writes the seal of the next frame sent into the last {@link SEAL_BYTES} of `frame`. */
  sign(frame: Buffer): void {
    this.#tag(this.#sending, this.#sent++, frame).copy(frame, frame.length - SEAL_BYTES);
  }

  /** Whether `frame` ends with the seal of the next frame received; it is counted either way. */
  check(frame: Buffer): boolean {
    const expected = this.#tag(this.#receiving, this.#received++, frame);
    return timingSafeEqual(expected, frame.subarray(frame.length - SEAL_BYTES));
  }

  #tag(direction: number, number: bigint, frame: Buffer): Buffer {
    const prefix = Buffer.allocUnsafe(9);
    prefix.writeUInt8(direction, 0);
    prefix.writeBigUInt64BE(number, 1);
    return createHmac("sha256", this.#key)
      .update(prefix)
      .update(frame.subarray(0, frame.length - SEAL_BYTES))
      .digest();
  }
}

/** Whether `value` is an object of strings only: the headers a head carries. */
export function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((each) => typeof each === "string");
}

/** The bytes of a frame, in one buffer so that it leaves in one write; sealed by `seal`, the sender's. */
export function encodeFrame(kind: FrameKind, id: number, head: unknown, body: Buffer | string | undefined, seal: FrameSeal): Buffer {
  if (!Number.isInteger(id) || id < 0 || id > MAX_CALL_ID) throw new RangeError(`A call id is a u32; received ${id}.`);
  const headText = JSON.stringify(head ?? null);
  const headBytes = Buffer.byteLength(headText);
  const bodyBytes = body === undefined ? 0 : Buffer.byteLength(body);
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + headBytes + bodyBytes + SEAL_BYTES);
  frame.writeUInt32BE(frame.length - 4, 0);
  frame.writeUInt8(kind, 4);
  frame.writeUInt32BE(id, 5);
  frame.writeUInt32BE(headBytes, 9);
  frame.write(headText, PREFIX_BYTES, "utf8");
  if (typeof body === "string") frame.write(body, PREFIX_BYTES + headBytes, "utf8");
  else if (body !== undefined) body.copy(frame, PREFIX_BYTES + headBytes);
  seal.sign(frame);
  return frame;
}

/**
 * Cuts a byte stream into frames. A frame longer than `maxFrameBytes`, one whose seal
 * does not check (`seal`, the receiver's), an unknown kind, a head that is not JSON or
 * longer than its frame throw {@link FrameError}: the peer is not speaking the protocol,
 * or someone else is speaking for it, and nothing after can be trusted.
 */
export class FrameReader {
  readonly #maxFrameBytes: number;
  readonly #seal: FrameSeal;
  #chunks: Buffer[] = [];
  #buffered = 0;

  constructor(maxFrameBytes: number, seal: FrameSeal) {
    this.#maxFrameBytes = maxFrameBytes + SEAL_BYTES;
    this.#seal = seal;
  }

  /** Hands `onFrame` each frame completed by `chunk`, in order (what `onFrame` throws stops the reading and is thrown). */
  push(chunk: Buffer, onFrame: (frame: Frame) => void): void {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    while (this.#buffered >= 4) {
      const first = this.#chunks[0] as Buffer;
      const length = (first.length >= 4 ? first : this.#take(4, false)).readUInt32BE(0);
      if (length + 4 > this.#maxFrameBytes) throw new FrameError(`A frame of ${length + 4} bytes is over the bound of ${this.#maxFrameBytes}.`);
      if (length < PREFIX_BYTES - 4 + SEAL_BYTES) throw new FrameError(`A frame of ${length + 4} bytes is shorter than its prefix and seal.`);
      if (this.#buffered < length + 4) break;
      const frame = this.#take(length + 4, true);
      if (!this.#seal.check(frame))
        throw new FrameError("A frame's seal does not check: it was not sent by the node that opened the channel, or not in this place.");
      // Each frame is handled as soon as it checks: one that arrived whole is answered for
      // even when a bad one follows it in the same chunk.
      onFrame(decode(frame.subarray(0, frame.length - SEAL_BYTES)));
    }
  }

  /** The first `bytes` buffered, removed when `consume`. */
  #take(bytes: number, consume: boolean): Buffer {
    const all = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#buffered);
    const taken = all.subarray(0, bytes);
    if (consume) {
      const rest = all.subarray(bytes);
      this.#chunks = rest.length > 0 ? [rest] : [];
      this.#buffered = rest.length;
    } else {
      this.#chunks = [all];
    }
    return taken;
  }
}

function decode(frame: Buffer): Frame {
  const kind = frame.readUInt8(4);
  if (!KINDS.has(kind)) throw new FrameError(`Unknown frame kind ${kind}.`);
  const id = frame.readUInt32BE(5);
  const headBytes = frame.readUInt32BE(9);
  if (PREFIX_BYTES + headBytes > frame.length) throw new FrameError("A frame's head is longer than the frame.");
  let head: unknown;
  try {
    head = JSON.parse(frame.toString("utf8", PREFIX_BYTES, PREFIX_BYTES + headBytes));
  } catch {
    throw new FrameError("A frame's head is not JSON.");
  }
  return { kind: kind as FrameKind, id, head, body: frame.subarray(PREFIX_BYTES + headBytes) };
}
