import type { ServerLog } from "../observe/server-log.js";
import type { BrowserLauncher, LaunchedBrowser } from "./browser-launcher.js";
import { ReadyBrowser } from "./ready-browser.js";
import type { WarmBrowserRecord, WarmBrowserRecords } from "./warm-browser-records.js";

/** Settings of {@link WarmPool}. */
export interface WarmPoolOptions {
  /** How many browsers to keep launched and ready; 0 keeps none. */
  size: number;
  /** Starts the browsers (the same launcher as cold launches use). */
  launcher: BrowserLauncher;
  /**
   * Readies each warm browser once its tab is attached (the server starts following its
   * WebMCP tools, so that the start_url it is later sent to is seen whole); a failure is
   * logged and the browser kept, as after a cold launch.
   */
  prepare?: (launched: LaunchedBrowser) => Promise<void>;
  /** Where warm browsers are written down for the next start after a kill; none in tests that do not need it. */
  records?: WarmBrowserRecords;
  /** Where failures to launch or crashes of warm browsers are reported. */
  log: Pick<ServerLog, "info" | "warn" | "error">;
  /** The first wait after a failed launch, doubled on each failure in a row. Default 1,000 ms. */
  retryMs?: number;
  /** The longest wait between failed launches. Default 60,000 ms. */
  maxRetryMs?: number;
}

/** A browser taken from the pool: the caller now owns it. */
export interface TakenBrowser {
  /** The browser, ready to be handed over. */
  warm: ReadyBrowser;
  /** Call once the browser's session record names its process: the pool's own record is then dropped. */
  recorded(): void;
}

/**
 * A ready browser held out of the pool while a create writes its reservation: no other
 * create sees it meanwhile. Exactly one of `take` and `release` is called.
 */
export interface HeldBrowser {
  /** The browser, ready to be handed over once taken. */
  warm: ReadyBrowser;
  /** Makes it the caller's for good, as {@link WarmPool.take} does. */
  take(): TakenBrowser;
  /** Puts it back first in line (the create was refused), or closes it if it died or the pool closed meanwhile. */
  release(): void;
}

/** What the pool holds right now. */
export interface WarmPoolStats {
  /** Browsers launched and waiting. */
  ready: number;
  /** Browsers being launched for the pool. */
  launching: number;
  /**
   * Browsers taken from the pool since the server started, each for one create (the rest
   * launched cold); one whose hand-over failed, then closed, counts too.
   */
  taken: number;
}

// A burst of creates arrives within a few milliseconds; its answers go out before the
// refill's launch (a synchronous fork, then Chromium's start on the same cores) begins.
const REFILL_DELAY_MS = 100;

interface Waiting {
  warm: ReadyBrowser;
  record: WarmBrowserRecord | undefined;
}

/**
 * Keeps up to `size` browsers launched, each with its own fresh profile, so that creating
 * a session does not wait for Chromium to start. A browser is taken once and never comes
 * back; the pool then launches a replacement in the background, one at a time, so that
 * ready plus launching browsers never exceed `size` (and refilling never competes with
 * more than one launch for the CPU). A warm browser that dies while waiting is replaced.
 * Failed launches (no usable Chromium) are retried with a growing pause and logged once
 * per run of failures.
 */
export class WarmPool {
  readonly #size: number;
  readonly #launcher: BrowserLauncher;
  readonly #records: WarmBrowserRecords | undefined;
  readonly #prepare: ((launched: LaunchedBrowser) => Promise<void>) | undefined;
  readonly #log: Pick<ServerLog, "info" | "warn" | "error">;
  readonly #retryMs: number;
  readonly #maxRetryMs: number;
  readonly #ready: Waiting[] = [];
  // Taken out of #ready by hold(), until their create takes or releases them.
  readonly #held = new Set<Waiting>();
  #launching = 0;
  #taken = 0;
  #failures = 0;
  #retryTimer: NodeJS.Timeout | undefined;
  #refillTimer: NodeJS.Timeout | undefined;
  #closed = false;
  // Every launch and discard the pool started; close() waits for them.
  readonly #inFlight = new Set<Promise<void>>();

  constructor(options: WarmPoolOptions) {
    if (!Number.isSafeInteger(options.size) || options.size < 0)
      throw new RangeError(`The warm pool size must be a non-negative integer; received ${options.size}.`);
    this.#size = options.size;
    this.#launcher = options.launcher;
    this.#records = options.records;
    this.#prepare = options.prepare;
    this.#log = options.log;
    this.#retryMs = options.retryMs ?? 1_000;
    this.#maxRetryMs = options.maxRetryMs ?? 60_000;
  }

  /** How many browsers the pool keeps. */
  get size(): number {
    return this.#size;
  }

  /** What the pool holds right now. */
  stats(): WarmPoolStats {
    return { ready: this.#ready.length, launching: this.#launching, taken: this.#taken };
  }

  /** Starts filling the pool in the background. */
  start(): void {
    this.#fill();
  }

  /**
   * The ready browser a create would take, still the pool's, or `undefined` when none is
   * (the caller launches one itself). Looking is free: only {@link take} uses it up, so a
   * create refused by a limit leaves the pool as it was.
   */
  next(): ReadyBrowser | undefined {
    // A dead one is being cleaned up by its exit listener.
    return this.#ready.find((entry) => entry.warm.usable)?.warm;
  }

  /**
   * Takes `warm` (from {@link next}, in the same tick) out of the pool for good, and
   * starts its replacement a moment later, so that the answers to a burst of creates go
   * out before the replacement's launch takes its share of the CPU.
   */
  take(warm: ReadyBrowser): TakenBrowser {
    const index = this.#ready.findIndex((entry) => entry.warm === warm);
    if (index === -1) throw new Error("This browser is not waiting in the warm pool.");
    const [{ record }] = this.#ready.splice(index, 1) as [Waiting];
    this.#taken++;
    this.#refillSoon();
    return { warm, recorded: () => void this.#forget(record) };
  }

  /**
   * Holds the next ready browser out of the pool for a create that must first write its
   * reservation (an await): concurrent creates cannot take the same one, and a create
   * refused by a limit or a name gives it back first in line, so the pool is as it was.
   * Held browsers count toward the pool's size. `undefined` when none is ready.
   */
  hold(): HeldBrowser | undefined {
    const index = this.#ready.findIndex((entry) => entry.warm.usable);
    if (index === -1) return undefined;
    const [entry] = this.#ready.splice(index, 1) as [Waiting];
    this.#held.add(entry);
    let settled = false;
    const settle = () => {
      if (settled) throw new Error("This held browser was already taken or released.");
      settled = true;
      this.#held.delete(entry);
    };
    return {
      warm: entry.warm,
      take: () => {
        settle();
        this.#taken++;
        this.#refillSoon();
        return { warm: entry.warm, recorded: () => void this.#forget(entry.record) };
      },
      release: () => {
        settle();
        if (this.#closed || !entry.warm.usable) {
          this.#track(this.#discard(entry).finally(() => this.#fill()));
          return;
        }
        this.#ready.unshift(entry);
      },
    };
  }

  /** Stops refilling and closes every warm browser, including those still launching. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retryTimer);
    clearTimeout(this.#refillTimer);
    const waiting = this.#ready.splice(0);
    await Promise.allSettled([...waiting.map((entry) => this.#discard(entry)), ...this.#inFlight]);
  }

  #refillSoon(): void {
    if (this.#closed || this.#refillTimer !== undefined) return;
    this.#refillTimer = setTimeout(() => {
      this.#refillTimer = undefined;
      this.#fill();
    }, REFILL_DELAY_MS);
    this.#refillTimer.unref();
  }

  /** Counts `work` among what close() waits for. */
  #track(work: Promise<void>): void {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work));
  }

  #fill(): void {
    if (this.#closed || this.#retryTimer !== undefined || this.#launching > 0 || this.#ready.length + this.#held.size >= this.#size) return;
    this.#launching++;
    const launch = this.#launchOne().finally(() => {
      this.#launching--;
      this.#inFlight.delete(launch);
      this.#fill();
    });
    this.#inFlight.add(launch);
  }

  async #launchOne(): Promise<void> {
    let launched: LaunchedBrowser;
    try {
      launched = await this.#launcher.launch({});
    } catch (error) {
      this.#failed(error);
      return;
    }
    const record = await this.#recordOf(launched);
    let warm: ReadyBrowser;
    try {
      warm = await ReadyBrowser.prepare(launched);
    } catch (error) {
      await launched.close().catch(() => undefined);
      await this.#forget(record);
      this.#failed(error);
      return;
    }
    // As for a cold launch: a browser whose tools could not be followed yet still works (its
    // WebMCP connects again on the next WebMCP request), so it is kept.
    await this.#prepare?.(launched).catch((error: unknown) =>
      this.#log.warn(
        { err: error, pid: launched.pid },
        "could not follow a warm browser's WebMCP tools before its start_url; the next WebMCP request connects again",
      ),
    );
    if (this.#closed) {
      await this.#discard({ warm, record });
      return;
    }
    if (this.#failures > 0) this.#log.warn({ failures: this.#failures }, "warm browsers launch again");
    this.#failures = 0;
    const entry: Waiting = { warm, record };
    this.#ready.push(entry);
    launched.onExit((exit) => {
      const index = this.#ready.indexOf(entry);
      // Taken (its session handles the exit), held (its release closes it) or discarded by close().
      if (index === -1) return;
      this.#ready.splice(index, 1);
      this.#log.warn({ exit, pid: launched.pid }, "a warm browser exited while waiting; launching a replacement");
      this.#track(this.#discard(entry).finally(() => this.#fill()));
    });
  }

  async #recordOf(launched: LaunchedBrowser): Promise<WarmBrowserRecord | undefined> {
    try {
      return await this.#records?.add(launched);
    } catch (error) {
      // The browser still works; only its clean-up after a kill of the server is lost.
      this.#log.error({ err: error, pid: launched.pid }, "could not record a warm browser in the data directory");
      return undefined;
    }
  }

  async #discard({ warm, record }: Waiting): Promise<void> {
    try {
      await warm.close();
    } catch (error) {
      this.#log.error({ err: error, pid: warm.launched.pid }, "could not close a warm browser");
    } finally {
      await this.#forget(record);
    }
  }

  async #forget(record: WarmBrowserRecord | undefined): Promise<void> {
    try {
      await record?.remove();
    } catch (error) {
      // Left behind, it only makes the next start look for a process that is gone.
      this.#log.warn({ err: error }, "could not remove the record of a warm browser");
    }
  }

  #failed(error: unknown): void {
    if (this.#closed) return;
    if (this.#failures === 0) this.#log.error({ err: error }, "could not launch a warm browser; creates launch their own until this works again");
    const wait = Math.min(this.#retryMs * 2 ** this.#failures, this.#maxRetryMs);
    this.#failures++;
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#fill();
    }, wait);
    this.#retryTimer.unref();
  }
}
