/** How often idle browsers are looked for: a browser ends within this much after its timeout. */
export const IDLE_SWEEP_MS = 1_000;

interface Watched {
  timeoutMs: number;
  /** When it was last active, by the clock; while `held` > 0 it is active now. */
  lastActive: number;
  /** Connections open on it (DevTools clients, live view viewers). */
  held: number;
}

/** Settings of {@link IdleTimeouts}. */
export interface IdleTimeoutsOptions {
  /** Ends a browser that timed out, as `DELETE` does. A rejection is logged by the caller's `end`. */
  end: (browserId: string, idleMs: number) => Promise<void>;
  /** Milliseconds, monotonic enough for durations; default `performance.now`. */
  clock?: () => number;
  /** How often to look; default {@link IDLE_SWEEP_MS}. `0`: never by itself (a test calls {@link IdleTimeouts.sweep}). */
  sweepMs?: number;
}

/**
 * The inactivity timeouts of the browsers this node runs (`timeout_seconds` of each
 * create). A browser is active while a connection holds it (a DevTools client, a live
 * view viewer) and at each request on it; one neither held nor asked for during its
 * timeout is ended, as `DELETE` ends it, so that a forgotten browser gives its slot back.
 * Warm browsers are not sessions and are never watched.
 */
export class IdleTimeouts {
  readonly #watched = new Map<string, Watched>();
  readonly #end: IdleTimeoutsOptions["end"];
  readonly #clock: () => number;
  readonly #timer: NodeJS.Timeout | undefined;

  constructor(options: IdleTimeoutsOptions) {
    this.#end = options.end;
    this.#clock = options.clock ?? (() => performance.now());
    const sweepMs = options.sweepMs ?? IDLE_SWEEP_MS;
    if (sweepMs > 0) {
      this.#timer = setInterval(() => this.sweep(), sweepMs);
      this.#timer.unref();
    }
  }

  /** Watches a browser handed over now, with its timeout in seconds. */
  watch(browserId: string, timeoutSeconds: number): void {
    this.#watched.set(browserId, { timeoutMs: timeoutSeconds * 1000, lastActive: this.#clock(), held: 0 });
  }

  /** A request on the browser: its idle time starts again. Nothing for a browser not watched here. */
  touch(browserId: string): void {
    const watched = this.#watched.get(browserId);
    if (watched !== undefined) watched.lastActive = this.#clock();
  }

  /**
   * A connection opens on the browser: it is active until the returned release is called
   * (once; later calls do nothing), and its idle time starts then.
   */
  hold(browserId: string): () => void {
    const watched = this.#watched.get(browserId);
    if (watched === undefined) return () => undefined;
    watched.held++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      watched.held--;
      watched.lastActive = this.#clock();
    };
  }

  /** Stops watching a browser that ended (deleted, crashed, shut down). */
  forget(browserId: string): void {
    this.#watched.delete(browserId);
  }

  /** Ends each browser idle past its timeout; called every {@link IDLE_SWEEP_MS}. */
  sweep(): void {
    const now = this.#clock();
    for (const [browserId, watched] of this.#watched) {
      const idleMs = now - watched.lastActive;
      if (watched.held > 0 || idleMs < watched.timeoutMs) continue;
      this.#watched.delete(browserId);
      void this.#end(browserId, idleMs);
    }
  }

  /** Stops looking (the server is closing). */
  close(): void {
    clearInterval(this.#timer);
    this.#watched.clear();
  }
}
