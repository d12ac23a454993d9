import type { CdpConnection } from "../cdp/cdp-connection.js";
import type { LiveViewLimits } from "./live-view-limits.js";

/**
 * One tab's screen, captured while someone watches it: a DevTools session of the tab
 * (on the live view's own connection) running `Page.startScreencast`. Each frame is
 * written once as the viewer message (`{"type":"frame",...}`, UTF-8) and handed to
 * `deliver`; it is acknowledged, which lets Chromium capture the next, no sooner than
 * the frame rate cap allows, so a tab that changes fast costs at most `maxFps` frames a
 * second whoever watches.
 */
export class TabScreencast {
  readonly targetId: string;
  readonly #connection: CdpConnection;
  readonly #limits: LiveViewLimits;
  readonly #deliver: (frame: Buffer) => void;
  #sessionId: string | undefined;
  #lastFrame: Buffer | undefined;
  #lastFrameAt = Number.NEGATIVE_INFINITY;
  #ackTimer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(connection: CdpConnection, targetId: string, limits: LiveViewLimits, deliver: (frame: Buffer) => void) {
    this.#connection = connection;
    this.targetId = targetId;
    this.#limits = limits;
    this.#deliver = deliver;
  }

  /** The DevTools session of the tab, once attached: where input to the tab is sent. */
  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  /** The newest frame, for a viewer who starts watching between frames. */
  get lastFrame(): Buffer | undefined {
    return this.#lastFrame;
  }

  /** Attaches to the tab and starts capturing; rejects if the tab is gone. */
  async start(): Promise<void> {
    const { sessionId } = await this.#connection.send<{ sessionId: string }>("Target.attachToTarget", { targetId: this.targetId, flatten: true });
    if (this.#stopped) {
      await this.#detach(sessionId);
      return;
    }
    this.#sessionId = sessionId;
    await this.#connection.send(
      "Page.startScreencast",
      { format: "jpeg", quality: this.#limits.quality, maxWidth: this.#limits.maxWidth, maxHeight: this.#limits.maxHeight, everyNthFrame: 1 },
      sessionId,
    );
    // A screencast sends a frame when the page paints: a page that has finished painting
    // would show its viewers nothing until it changes. Its current screen is taken once.
    if (this.#lastFrame === undefined) await this.#firstFrame(sessionId);
  }

  async #firstFrame(sessionId: string): Promise<void> {
    const { cssVisualViewport: viewport } = await this.#connection.send<{ cssVisualViewport: { clientWidth: number; clientHeight: number } }>(
      "Page.getLayoutMetrics",
      {},
      sessionId,
    );
    const width = Math.max(1, Math.floor(viewport.clientWidth));
    const height = Math.max(1, Math.floor(viewport.clientHeight));
    const scale = Math.min(1, this.#limits.maxWidth / width, this.#limits.maxHeight / height);
    const { data } = await this.#connection.send<{ data: string }>(
      "Page.captureScreenshot",
      { format: "jpeg", quality: this.#limits.quality, clip: { x: 0, y: 0, width, height, scale } },
      sessionId,
    );
    if (this.#stopped || this.#lastFrame !== undefined) return;
    this.frame({ data, metadata: { deviceWidth: width, deviceHeight: height } });
  }

  /** A `Page.screencastFrame` event of this tab's session. */
  frame(params: Record<string, unknown>): void {
    if (this.#stopped) return;
    const {
      data,
      metadata,
      sessionId: frameId,
    } = params as { data?: unknown; metadata?: { deviceWidth?: unknown; deviceHeight?: unknown }; sessionId?: unknown };
    const width = metadata?.deviceWidth;
    const height = metadata?.deviceHeight;
    if (typeof data === "string" && typeof width === "number" && typeof height === "number") {
      // Encoded once for every viewer. JSON.stringify of base64 is a copy (a 95 KB frame in
      // tens of µs); a check that it is base64 cost ten times that, per frame.
      this.#lastFrame = Buffer.from(
        `{"type":"frame","tab":${JSON.stringify(this.targetId)},"width":${JSON.stringify(width)},"height":${JSON.stringify(height)},"data":${JSON.stringify(data)}}`,
      );
      this.#deliver(this.#lastFrame);
    }
    if (typeof frameId !== "number") return;
    const now = performance.now();
    const wait = Math.max(0, this.#lastFrameAt + 1000 / this.#limits.maxFps - now);
    this.#lastFrameAt = now + wait;
    this.#ackTimer = setTimeout(() => {
      this.#ackTimer = undefined;
      if (this.#stopped || this.#sessionId === undefined) return;
      this.#connection.send("Page.screencastFrameAck", { sessionId: frameId }, this.#sessionId).catch(() => {
        // The tab went away or the connection closed: there is no next frame to ask for.
      });
    }, wait);
  }

  /** Stops capturing and leaves the tab; the tab itself is untouched. */
  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    clearTimeout(this.#ackTimer);
    const sessionId = this.#sessionId;
    this.#sessionId = undefined;
    if (sessionId !== undefined) await this.#detach(sessionId);
  }

  /** The session ended on Chromium's side (the tab closed): nothing is left to stop. */
  detached(): void {
    this.#stopped = true;
    clearTimeout(this.#ackTimer);
    this.#sessionId = undefined;
  }

  async #detach(sessionId: string): Promise<void> {
    if (this.#connection.closed) return;
    // Detaching ends the session's screencast with it.
    await this.#connection.send("Target.detachFromTarget", { sessionId }).catch(() => {
      // Already gone with its tab.
    });
  }
}
