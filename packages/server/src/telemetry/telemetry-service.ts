import type { BrowserTelemetryConfig } from "@browser-service/types";
import type { CdpRouter } from "../cdp/cdp-router.js";
import type { ServerLog } from "../observe/server-log.js";
import { BrowserTelemetry, type CapturedEvent, type CaptureSink } from "./browser-telemetry.js";
import { type OtlpDestination, OtlpExport } from "./otlp-export.js";
import { needsPageMonitor, PageMonitor } from "./page-monitor.js";
import type { TelemetryStore } from "./sql-telemetry-store.js";
import { DEFAULT_CHARS_PER_BROWSER, DEFAULT_CHARS_PER_PROJECT, type DestinationName } from "./telemetry-settings.js";

/** How the service keeps, bounds and exports events; each has the command line's default. */
export interface TelemetryServiceOptions {
  store: TelemetryStore;
  log: Pick<ServerLog, "info" | "warn" | "error">;
  /** The most events kept per browser; past it its oldest are dropped. */
  maxEventsPerBrowser: number;
  /** The most events kept per project; past it its oldest are dropped (by the sweep). */
  maxEventsPerProject: number;
  /** The most characters of events' JSON kept per browser; past it its oldest are dropped. Default 64 MiB. */
  maxCharsPerBrowser?: number;
  /** The most characters of events' JSON kept per project; past it its oldest are dropped (by the sweep). Default 1 GiB. */
  maxCharsPerProject?: number;
  /** How long a browser's events are kept after it ends, in milliseconds. */
  retentionMs: number;
  /** The OTLP destinations browsers may name. */
  destinations?: readonly OtlpDestination[];
  /** How often captured events are written (and handed to exports); default 250 ms. */
  flushMs?: number;
  /** How often retention and the per-project cap are applied; default 10 s. */
  sweepMs?: number;
  /** The most events one browser captures per second; past it they are dropped and counted. Default 2000. */
  maxEventsPerSecond?: number;
  /** The most bytes of events waiting to be written, all browsers together; past it new ones are dropped and counted. Default 32 MiB. */
  maxPendingBytes?: number;
}

/** What follows a browser's events as they are captured: a stream. */
export interface EventListener {
  event(captured: CapturedEvent): void;
  /** The browser ended (after its last event was given). */
  end(): void;
}

/** One browser's capture, what waits to be written, and who follows it. */
interface Capture {
  recorder: BrowserTelemetry;
  /** Settles once the store knows the browser (its events are written after). */
  begun: Promise<void>;
  monitor?: Promise<PageMonitor | undefined>;
  pending: CapturedEvent[];
  dropped: number;
  listeners: Set<EventListener>;
}

const DEFAULT_FLUSH_MS = 250;
const DEFAULT_SWEEP_MS = 10_000;
/** Rows in one INSERT: far under either database's cap on bound values. */
const ROWS_PER_WRITE = 500;

/**
 * The node's telemetry: a {@link BrowserTelemetry} per running browser that captures
 * anything, its events written in batches (never one write per event, so that capture
 * costs the DevTools path nothing but a push), streamed to followers at once, and handed
 * to the browser's OTLP export. What waits to be written is bounded in bytes; a write
 * failure is logged and the batch dropped and counted, never retried forever.
 */
export class TelemetryService implements CaptureSink {
  readonly #options: TelemetryServiceOptions;
  readonly #captures = new Map<string, Capture>();
  readonly #exports = new Map<string, OtlpExport>();
  readonly #destinations: readonly OtlpDestination[];
  readonly #flushTimer: NodeJS.Timeout;
  readonly #sweepTimer: NodeJS.Timeout;
  #pendingBytes = 0;
  #flushing: Promise<void> = Promise.resolve();
  #stopped = false;

  constructor(options: TelemetryServiceOptions) {
    this.#options = options;
    this.#destinations = options.destinations ?? [];
    // Made now: a destination that cannot be exported to fails the server's start, not a flush.
    for (const destination of this.#destinations) this.#exports.set(destination.id, new OtlpExport(destination, { log: options.log }));
    this.#flushTimer = setInterval(() => void this.flush(), options.flushMs ?? DEFAULT_FLUSH_MS);
    this.#flushTimer.unref();
    this.#sweepTimer = setInterval(() => void this.sweep(), options.sweepMs ?? DEFAULT_SWEEP_MS);
    this.#sweepTimer.unref();
  }

  /** Bytes of events waiting to be written, all browsers together. */
  get pendingBytes(): number {
    return this.#pendingBytes;
  }

  /** The destinations a create may name. */
  destinationNames(): DestinationName[] {
    return this.#destinations.map(({ id, name }) => ({ id, name }));
  }

  /**
   * Starts the capture of a browser this node runs, and its tabs' monitor when a category
   * needs one; resolves once the monitor follows its tabs (or failed to, which is logged:
   * the browser runs without those events rather than not at all).
   */
  async start(
    browserId: string,
    projectId: string,
    config: BrowserTelemetryConfig,
    router: CdpRouter,
    options: { secretInputs?: boolean } = {},
  ): Promise<BrowserTelemetry> {
    const existing = this.#captures.get(browserId);
    if (existing !== undefined) return existing.recorder;
    const log = this.#options.log;
    const begun = config.storage.enabled
      ? this.#options.store
          .begin(browserId, projectId)
          .catch((error: unknown) => log.error({ err: error, browser: browserId }, "could not record a browser's telemetry"))
      : Promise.resolve();
    const recorder = new BrowserTelemetry(browserId, projectId, config, this, {
      maxPerSecond: this.#options.maxEventsPerSecond ?? 2000,
      secretInputs: options.secretInputs === true,
    });
    const capture: Capture = { recorder, begun, pending: [], dropped: 0, listeners: new Set() };
    this.#captures.set(browserId, capture);
    if (needsPageMonitor(recorder)) {
      capture.monitor = PageMonitor.open(router, recorder, log).catch((error: unknown) => {
        log.warn({ err: error, browser: browserId }, "could not follow a browser's tabs for its telemetry; its page events are not captured");
        return undefined;
      });
      await capture.monitor;
    }
    return recorder;
  }

  /** The capture of a running browser of this node, if it captures anything. */
  of(browserId: string): BrowserTelemetry | undefined {
    return this.#captures.get(browserId)?.recorder;
  }

  /**
   * Follows a running browser's events from now; `undefined` when this node runs no
   * capture of it. The returned function stops following.
   */
  follow(browserId: string, listener: EventListener): (() => void) | undefined {
    const capture = this.#captures.get(browserId);
    if (capture === undefined) return undefined;
    capture.listeners.add(listener);
    return () => capture.listeners.delete(listener);
  }

  /** @internal {@link CaptureSink}: an event of a browser's capture. */
  captured(recorder: BrowserTelemetry, captured: CapturedEvent): void {
    const capture = this.#captures.get(recorder.browserId);
    if (capture === undefined) return;
    for (const listener of capture.listeners) {
      // A follower's failure (its socket gone wrong) ends that follower, never the event's
      // producer: a DevTools socket's close listener or a router callback would end the process.
      try {
        listener.event(captured);
      } catch (error) {
        capture.listeners.delete(listener);
        this.#options.log.warn({ err: error, browser: recorder.browserId }, "a follower of a browser's telemetry failed; it no longer follows");
      }
    }
    const bytes = captured.json.length;
    if (this.#pendingBytes + bytes > (this.#options.maxPendingBytes ?? 32 * 1024 * 1024)) {
      capture.dropped++;
      return;
    }
    this.#pendingBytes += bytes;
    capture.pending.push(captured);
  }

  /** @internal {@link CaptureSink}: events the recorder dropped past its rate. */
  dropped(recorder: BrowserTelemetry, count: number): void {
    const capture = this.#captures.get(recorder.browserId);
    if (capture !== undefined) capture.dropped += count;
  }

  /** Writes and exports what was captured; one flush at a time. */
  flush(): Promise<void> {
    this.#flushing = this.#flushing.then(() => this.#flushNow());
    return this.#flushing;
  }

  async #flushNow(): Promise<void> {
    for (const [browserId, capture] of this.#captures) await this.#flushCapture(browserId, capture);
  }

  async #flushCapture(browserId: string, capture: Capture): Promise<void> {
    const { recorder } = capture;
    const batch = capture.pending;
    const dropped = capture.dropped;
    if (batch.length === 0 && dropped === 0) return;
    capture.pending = [];
    capture.dropped = 0;
    for (const item of batch) this.#pendingBytes -= item.json.length;
    const destination = recorder.config.export?.otlp.destination;
    if (destination !== undefined && batch.length > 0) {
      this.#exports.get(destination.id)?.push(batch.map(({ seq, event }) => ({ browserId, projectId: recorder.projectId, seq, event })));
    }
    if (!recorder.config.storage.enabled) return;
    await capture.begun;
    const store = this.#options.store;
    try {
      for (let i = 0; i < batch.length; i += ROWS_PER_WRITE) {
        await store.append(browserId, recorder.projectId, batch.slice(i, i + ROWS_PER_WRITE), {
          events: this.#options.maxEventsPerBrowser,
          chars: this.#options.maxCharsPerBrowser ?? DEFAULT_CHARS_PER_BROWSER,
        });
      }
      if (dropped > 0) await store.addDropped(browserId, dropped);
    } catch (error) {
      this.#options.log.error({ err: error, browser: browserId, events: batch.length }, "could not store a browser's telemetry events; they are dropped");
      await store.addDropped(browserId, batch.length + dropped).catch(() => undefined);
    }
  }

  /**
   * Ends a browser's capture: its last events are written, its followers' streams end,
   * and its retention period starts.
   */
  async close(browserId: string): Promise<void> {
    const capture = this.#captures.get(browserId);
    if (capture === undefined) return;
    capture.recorder.close();
    await (await capture.monitor)?.close().catch(() => undefined);
    await this.flush();
    this.#captures.delete(browserId);
    for (const listener of capture.listeners) listener.end();
    if (capture.recorder.config.storage.enabled) {
      await this.#options.store
        .end(browserId, Date.now())
        .catch((error: unknown) => this.#options.log.error({ err: error, browser: browserId }, "could not record the end of a browser's telemetry"));
    }
  }

  /** Applies retention and the per-project cap. */
  async sweep(): Promise<void> {
    if (this.#stopped) return;
    const now = Date.now();
    try {
      const { expired, dropped } = await this.#options.store.sweep(now, now - this.#options.retentionMs, {
        events: this.#options.maxEventsPerProject,
        chars: this.#options.maxCharsPerProject ?? DEFAULT_CHARS_PER_PROJECT,
      });
      if (expired > 0 || dropped > 0) this.#options.log.info({ expired, dropped }, "telemetry events past retention or the per-project cap were deleted");
    } catch (error) {
      this.#options.log.error({ err: error }, "could not apply telemetry retention; trying again at the next sweep");
    }
  }

  /** Ends every capture (their events written) and the exports. */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#flushTimer);
    clearInterval(this.#sweepTimer);
    await Promise.all([...this.#captures.keys()].map((browserId) => this.close(browserId)));
    await Promise.all([...this.#exports.values()].map((exporter) => exporter.shutdown()));
  }
}
