import type { BrowserTelemetryConfig, TelemetryEvent } from "@browser-service/types";
import { REPORTED_CDP_METHODS, TELEMETRY_CATEGORIES, type TelemetryCategoryName } from "./telemetry-settings.js";

/** The most characters of one string of an event's data; past it the string is cut and the event marked `truncated`. */
export const MAX_TEXT_CHARS = 16 * 1024;
/**
 * The most characters of one event as JSON. A page decides how much data its events carry
 * (32 console arguments, a request's headers), so each is held to this: past it, its
 * strings are cut shorter and shorter, then its lists and maps, and it is marked `truncated`.
 */
export const MAX_EVENT_CHARS = 64 * 1024;
/** What a too-large event's strings are cut to, step by step, until it fits. */
const SHRINK_STEPS = [4096, 1024, 256, 64];
/** The most items of a list, and entries of a map, an event keeps once it is too large. */
const SHRUNK_ENTRIES = 16;

/** A captured event with its number, handed to the service that keeps, streams and exports it. */
export interface CapturedEvent {
  seq: number;
  event: TelemetryEvent;
  json: string;
}

/** Where a {@link BrowserTelemetry} hands its events: the service's buffers, streams and exports. */
export interface CaptureSink {
  captured(recorder: BrowserTelemetry, captured: CapturedEvent): void;
  /** Told of events the recorder dropped itself, produced past its rate. */
  dropped(recorder: BrowserTelemetry, count: number): void;
}

/** Unix microseconds now, finer than `Date.now()`: events within one millisecond keep their order. */
export function nowMicros(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1000);
}

/** What `cdp_command` reporting does with a method: report it, count it as excluded, or ignore it (not a reported method, or `control` off). */
export type CommandReport = "report" | "excluded" | "ignore";

/**
 * One browser's telemetry as its create resolved it: whether a category is captured, and
 * the capture itself. Each event gets the next number; a category that is off captures
 * nothing (its producers ask {@link wants} first, so they do no work for it either).
 * Events past `maxPerSecond` (a page logging without pause) are dropped and counted.
 */
export class BrowserTelemetry {
  readonly browserId: string;
  readonly projectId: string;
  readonly config: BrowserTelemetryConfig;
  /**
   * The service's own browser that types stored secrets (a login flow's): request bodies,
   * which carry what it typed, are never recorded.
   */
  readonly secretInputs: boolean;
  readonly #on: ReadonlySet<TelemetryCategoryName>;
  readonly #excluded: ReadonlySet<string>;
  readonly #sink: CaptureSink;
  readonly #maxPerSecond: number;
  #seq = 0;
  #windowStart = 0;
  #inWindow = 0;
  #closed = false;

  constructor(
    browserId: string,
    projectId: string,
    config: BrowserTelemetryConfig,
    sink: CaptureSink,
    options: { maxPerSecond: number; secretInputs?: boolean },
  ) {
    this.browserId = browserId;
    this.projectId = projectId;
    this.config = config;
    this.#on = new Set(TELEMETRY_CATEGORIES.filter((category) => config.browser[category].enabled));
    this.#excluded = new Set(config.browser.control.cdp.excluded_methods);
    this.#sink = sink;
    this.#maxPerSecond = options.maxPerSecond;
    this.secretInputs = options.secretInputs === true;
  }

  /** Whether events of `category` are captured. */
  wants(category: TelemetryCategoryName): boolean {
    return !this.#closed && this.#on.has(category);
  }

  /** The number of the last event captured (0 before the first). */
  get lastSeq(): number {
    return this.#seq;
  }

  /** What a `cdp_command` of `method` becomes (see {@link CommandReport}). */
  commandReport(method: string): CommandReport {
    if (!this.#on.has("control") || !REPORTED_CDP_METHODS.has(method)) return "ignore";
    return this.#excluded.has(method) ? "excluded" : "report";
  }

  /** Captures an event of a category that is on; a category that is off, or a closed recorder, captures nothing. */
  emit(category: TelemetryCategoryName, type: string, source: TelemetryEvent["source"], data?: Record<string, unknown>, truncated = false): void {
    if (!this.wants(category)) return;
    const now = performance.now();
    if (now - this.#windowStart >= 1000) {
      this.#windowStart = now;
      this.#inWindow = 0;
    }
    if (++this.#inWindow > this.#maxPerSecond) {
      this.#sink.dropped(this, 1);
      return;
    }
    const event: TelemetryEvent = { category, type, ts: nowMicros(), source };
    if (data !== undefined) event.data = data;
    if (truncated) event.truncated = true;
    let json = JSON.stringify(event);
    for (const step of SHRINK_STEPS) {
      if (json.length <= MAX_EVENT_CHARS || event.data === undefined) break;
      event.data = shrunk(event.data, step) as Record<string, unknown>;
      event.truncated = true;
      json = JSON.stringify(event);
    }
    if (json.length > MAX_EVENT_CHARS) {
      event.data = {};
      event.truncated = true;
      json = JSON.stringify(event);
    }
    const seq = ++this.#seq;
    this.#sink.captured(this, { seq, event, json });
  }

  /** Counts events lost before they reached the recorder (a message too large to read). */
  lost(count: number): void {
    if (!this.#closed) this.#sink.dropped(this, count);
  }

  /** Captures nothing more. */
  close(): void {
    this.#closed = true;
  }
}

/** `text` cut to `max` characters (never inside a surrogate pair), and whether it was cut. */
export function cutText(text: string, max = MAX_TEXT_CHARS): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  const end = /[\uD800-\uDBFF]/.test(text[max - 1] ?? "") ? max - 1 : max;
  return { text: text.slice(0, end), cut: true };
}

/** `value` with every string cut to `max` characters and every list and map to {@link SHRUNK_ENTRIES} entries. */
function shrunk(value: unknown, max: number): unknown {
  if (typeof value === "string") return cutText(value, max).text;
  if (Array.isArray(value)) return value.slice(0, SHRUNK_ENTRIES).map((item) => shrunk(item, max));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .slice(0, SHRUNK_ENTRIES)
        .map(([key, item]) => [cutText(key, max).text, shrunk(item, max)]),
    );
  }
  return value;
}
