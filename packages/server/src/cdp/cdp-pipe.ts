import type { Readable, Writable } from "node:stream";

/** What the pipe reports about a message it did not deliver because it was too large. */
export interface OversizedMessage {
  /** The message's first bytes, enough to read its `id` (responses start with it) or an event's method. */
  head: string;
  /** Its last bytes, where Chromium writes an event's `sessionId`. */
  tail: string;
  /** Its size in bytes. */
  bytes: number;
}

/** Settings of {@link CdpPipe}. */
export interface CdpPipeOptions {
  /**
   * A message from the browser larger than this is skipped as it streams in, never
   * buffered whole; {@link CdpPipe.onOversized} says so. Page data (tool outputs,
   * screenshots of huge pages) travels inside messages, so this bounds memory per browser.
   */
  maxMessageBytes: number;
}

// Enough of each end of a dropped message to read its id, method and session.
const EDGE_BYTES = 256;

/**
 * Chromium's `--remote-debugging-pipe` transport: the browser reads JSON messages from
 * its fd 3 and writes them to its fd 4, each terminated by a NUL byte. No port, no
 * socket: only the process holding these pipes can speak to the browser.
 */
export class CdpPipe {
  readonly #toBrowser: Writable;
  readonly #maxMessageBytes: number;
  readonly #messageListeners: ((text: string) => void)[] = [];
  readonly #oversizedListeners: ((message: OversizedMessage) => void)[] = [];
  readonly #closeListeners: (() => void)[] = [];
  #chunks: Buffer[] = [];
  #buffered = 0;
  // While > 0, the rest of an oversized message is being dropped; counts its bytes so far.
  #skipping = 0;
  #skippedHead = "";
  #skippedTail: Buffer = Buffer.alloc(0);
  #closed = false;

  constructor(toBrowser: Writable, fromBrowser: Readable, options: CdpPipeOptions) {
    this.#toBrowser = toBrowser;
    this.#maxMessageBytes = options.maxMessageBytes;
    fromBrowser.on("data", (chunk: Buffer) => this.#receive(chunk));
    fromBrowser.once("close", () => this.#close());
    fromBrowser.on("error", () => this.#close());
    // The browser exiting closes its end; a write after that fails with EPIPE, reported by close.
    toBrowser.on("error", () => this.#close());
  }

  /** Whether the browser's end has closed. */
  get closed(): boolean {
    return this.#closed;
  }

  /** Bytes written to the browser that it has not read yet. */
  get backlogBytes(): number {
    return this.#toBrowser.writableLength;
  }

  /** Sends one message (already JSON). Returns false when the pipe is closed and nothing was sent. */
  send(json: string): boolean {
    if (this.#closed) return false;
    this.#toBrowser.write(`${json}\0`);
    return true;
  }

  /** Calls `listener` with every message from the browser, in order. */
  onMessage(listener: (json: string) => void): void {
    this.#messageListeners.push(listener);
  }

  /** Calls `listener` for every message skipped for its size. */
  onOversized(listener: (message: OversizedMessage) => void): void {
    this.#oversizedListeners.push(listener);
  }

  /** Calls `listener` once when the browser's end closes. */
  onClose(listener: () => void): void {
    if (this.#closed) listener();
    else this.#closeListeners.push(listener);
  }

  /** Stops sending; the browser sees end of input on its fd 3. */
  close(): void {
    this.#toBrowser.end();
  }

  #receive(chunk: Buffer): void {
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(0, start);
      const piece = end === -1 ? chunk.subarray(start) : chunk.subarray(start, end);
      if (this.#skipping > 0) {
        this.#skipping += piece.length;
        this.#skippedTail = Buffer.concat([this.#skippedTail, piece.subarray(-EDGE_BYTES)]).subarray(-EDGE_BYTES);
      } else if (this.#buffered + piece.length > this.#maxMessageBytes) {
        this.#chunks.push(piece);
        this.#skippedHead = Buffer.concat(this.#chunks).subarray(0, EDGE_BYTES).toString("utf8");
        this.#skippedTail = Buffer.from(piece.subarray(-EDGE_BYTES));
        this.#skipping = this.#buffered + piece.length;
        this.#chunks = [];
        this.#buffered = 0;
      } else if (piece.length > 0) {
        this.#chunks.push(piece);
        this.#buffered += piece.length;
      }
      if (end === -1) return;
      start = end + 1;
      if (this.#skipping > 0) {
        const skipped = { head: this.#skippedHead, tail: this.#skippedTail.toString("utf8"), bytes: this.#skipping };
        this.#skipping = 0;
        this.#skippedHead = "";
        this.#skippedTail = Buffer.alloc(0);
        for (const listener of this.#oversizedListeners) listener(skipped);
        continue;
      }
      const text = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer).toString("utf8") : Buffer.concat(this.#chunks).toString("utf8");
      this.#chunks = [];
      this.#buffered = 0;
      for (const listener of this.#messageListeners) listener(text);
    }
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const listener of this.#closeListeners.splice(0)) listener();
  }
}
