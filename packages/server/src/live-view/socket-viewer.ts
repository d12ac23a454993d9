import type { LiveViewAccess } from "../cdp/browser-token.js";
import type { LiveViewer } from "./browser-live-view.js";

/** What a {@link SocketViewer} uses of its WebSocket (ws's `WebSocket`). */
export interface ViewerSocket {
  readonly readyState: number;
  readonly bufferedAmount: number;
  send(data: string | Buffer, options: { binary: boolean }, callback?: (error?: Error) => void): void;
  close(code: number, reason: string): void;
}

// WebSocket.OPEN.
const OPEN = 1;

/**
 * A viewer's WebSocket: messages are sent in order; frames one at a time, the newest
 * waiting while one is on its way, so a viewer on a slow link sees fewer frames and never
 * an old one. A viewer whose other output piles up past `maxBufferedBytes` (it stopped
 * reading) is disconnected (1008) rather than held in memory.
 */
export class SocketViewer implements LiveViewer {
  readonly access: LiveViewAccess;
  readonly #ws: ViewerSocket;
  readonly #maxBufferedBytes: number;
  #frameOnItsWay = false;
  #nextFrame: Buffer | undefined;

  /** `ws`: an open socket (anything with ws's `send`, `close`, `readyState` and `bufferedAmount`). */
  constructor(ws: ViewerSocket, access: LiveViewAccess, maxBufferedBytes: number) {
    this.#ws = ws;
    this.access = access;
    this.#maxBufferedBytes = maxBufferedBytes;
  }

  send(message: string | Buffer): void {
    if (this.#ws.readyState !== OPEN) return;
    if (this.#ws.bufferedAmount > this.#maxBufferedBytes) {
      this.#ws.close(1008, "The viewer is not reading what the server sends.");
      return;
    }
    this.#ws.send(message, { binary: false });
  }

  offerFrame(frame: Buffer): void {
    if (this.#frameOnItsWay) {
      this.#nextFrame = frame;
      return;
    }
    this.#sendFrame(frame);
  }

  #sendFrame(frame: Buffer): void {
    if (this.#ws.readyState !== OPEN) return;
    this.#frameOnItsWay = true;
    this.#ws.send(frame, { binary: false }, () => {
      this.#frameOnItsWay = false;
      const next = this.#nextFrame;
      this.#nextFrame = undefined;
      if (next !== undefined) this.#sendFrame(next);
    });
  }
}
