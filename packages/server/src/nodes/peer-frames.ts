/**
 * The frames of a peer channel (see peer-channel.ts): one connection between two nodes
 * carrying many forwarded calls at once. A frame is
 *
 *     length (u32, the bytes after it) | kind (u8) | call id (u32) | head length (u32) | head (JSON) | body
 *
 * all integers big-endian: the head says what the call or answer is, the body carries its
 * bytes as they are (a request's JSON text, a response's body), never re-encoded.
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

/** Whether `value` is an object of strings only: the headers a head carries. */
export function isStringRecord(value: unknown): value is Record<string, string> {
  return typeof value === "object" && value !== null && !Array.isArray(value) && Object.values(value).every((each) => typeof each === "string");
}

/** The bytes of a frame, in one buffer so that it leaves in one write. */
export function encodeFrame(kind: FrameKind, id: number, head: unknown, body?: Buffer | string): Buffer {
  if (!Number.isInteger(id) || id < 0 || id > MAX_CALL_ID) throw new RangeError(`A call id is a u32; received ${id}.`);
  const headText = JSON.stringify(head ?? null);
  const headBytes = Buffer.byteLength(headText);
  const bodyBytes = body === undefined ? 0 : Buffer.byteLength(body);
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + headBytes + bodyBytes);
  frame.writeUInt32BE(frame.length - 4, 0);
  frame.writeUInt8(kind, 4);
  frame.writeUInt32BE(id, 5);
  frame.writeUInt32BE(headBytes, 9);
  frame.write(headText, PREFIX_BYTES, "utf8");
  if (typeof body === "string") frame.write(body, PREFIX_BYTES + headBytes, "utf8");
  else if (body !== undefined) body.copy(frame, PREFIX_BYTES + headBytes);
  return frame;
}

/**
 * Cuts a byte stream into frames. A frame longer than `maxFrameBytes`, an unknown kind, a
 * head that is not JSON or longer than its frame throw {@link FrameError}: the peer is
 * not speaking the protocol, and nothing it sends after can be trusted to start a frame.
 */
export class FrameReader {
  readonly #maxFrameBytes: number;
  #chunks: Buffer[] = [];
  #buffered = 0;

  constructor(maxFrameBytes: number) {
    this.#maxFrameBytes = maxFrameBytes;
  }

  /** The frames completed by `chunk`, in order. */
  push(chunk: Buffer): Frame[] {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    const frames: Frame[] = [];
    while (this.#buffered >= 4) {
      const first = this.#chunks[0] as Buffer;
      const length = (first.length >= 4 ? first : this.#take(4, false)).readUInt32BE(0);
      if (length + 4 > this.#maxFrameBytes) throw new FrameError(`A frame of ${length + 4} bytes is over the bound of ${this.#maxFrameBytes}.`);
      if (length < PREFIX_BYTES - 4) throw new FrameError(`A frame of ${length + 4} bytes is shorter than its prefix.`);
      if (this.#buffered < length + 4) break;
      frames.push(decode(this.#take(length + 4, true)));
    }
    return frames;
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
