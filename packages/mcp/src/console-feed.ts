import { APIError, type BrowserServiceClient } from "@browser-service/client";
import type { TelemetryEvent } from "@browser-service/types";
import { fenceUntrusted } from "@browser-service/webmcp-helpers";
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";

/** The `logger` of every log message the bridge sends from the browser's console. */
export const consoleLoggerName = "browser-console";

/** The most characters of page text one log message carries; past it the text is cut, and says so. */
export const consoleTextCap = 2000;

/** One console line as an MCP log message: its level and its data, page text fenced. */
export interface ConsoleLine {
  level: LoggingLevel;
  data: string;
}

// What the bridge calls each console level the browser reports (DevTools' `ConsoleAPICalled.type`):
// a fixed word, so the text outside the fence never depends on what the stream carried.
const consoleCalls: Readonly<Record<string, { call: string; level: LoggingLevel }>> = {
  log: { call: "console.log", level: "info" },
  info: { call: "console.info", level: "info" },
  debug: { call: "console.debug", level: "debug" },
  warning: { call: "console.warn", level: "warning" },
  error: { call: "console.error", level: "error" },
  assert: { call: "console.assert", level: "error" },
  dir: { call: "console.dir", level: "info" },
  dirxml: { call: "console.dirxml", level: "info" },
  table: { call: "console.table", level: "info" },
  trace: { call: "console.trace", level: "info" },
  clear: { call: "console.clear", level: "info" },
  startGroup: { call: "console.group", level: "info" },
  startGroupCollapsed: { call: "console.groupCollapsed", level: "info" },
  endGroup: { call: "console.groupEnd", level: "info" },
  count: { call: "console.count", level: "info" },
  timeEnd: { call: "console.timeEnd", level: "info" },
  profile: { call: "console.profile", level: "info" },
  profileEnd: { call: "console.profileEnd", level: "info" },
};

/**
 * A `console` telemetry event as a log message, or `undefined` for any other event.
 * Levels: `debug` → debug; `warning` → warning; `error`, a failed `console.assert`, and
 * every `console_error` event (an uncaught exception too) → error; anything else (`log`,
 * `info`, `dir`, `table`, `trace`, …) → info. The data is one line of the bridge's words
 * (which call, or an uncaught exception) with the page's text fenced as untrusted,
 * cleaned and cut at {@link consoleTextCap} like every other page text the bridge shows.
 */
export function consoleLine(event: TelemetryEvent): ConsoleLine | undefined {
  if (event.category !== "console" || (event.type !== "console_log" && event.type !== "console_error")) return undefined;
  const data = event.data ?? {};
  const level = typeof data.level === "string" && Object.hasOwn(consoleCalls, data.level) ? data.level : undefined;
  const known = level === undefined ? undefined : consoleCalls[level];
  // An exception has no console level: the browser reported it thrown, not logged.
  const exception = event.type === "console_error" && level === undefined;
  const label = exception ? "Uncaught exception" : (known?.call ?? "console");
  const args = Array.isArray(data.args) ? data.args.filter((arg): arg is string => typeof arg === "string") : [];
  // DevTools prints every argument, space-separated; `text` is the first one (or the exception's message).
  const text = args.length > 0 && !exception ? args.join(" ") : typeof data.text === "string" ? data.text : "";
  const multiline = /[\r\n\u2028\u2029\u0085]/.test(text);
  return {
    level: event.type === "console_error" ? "error" : (known?.level ?? "info"),
    data: `${label} in the browser: ${fenceUntrusted(text, { maxLength: consoleTextCap, multiline })}`,
  };
}

/** Options of {@link ConsoleFeed}. */
export interface ConsoleFeedOptions {
  /** Project of the browser (an id), as the client takes it. */
  projectId?: string;
  /** Where the feed says what it does (following, reconnecting, giving up). Default: nowhere. */
  log?: (message: string) => void;
  /** Attempts to open the stream again after it dropped, before giving up; default 6. */
  maxRetries?: number;
  /** Wait before the first retry, doubled for each next one, at most 30 times it; default 500 ms. */
  retryDelayMs?: number;
  /** The most characters of one event frame read; a larger one is skipped. Default 4 MiB. */
  maxFrameChars?: number;
}

/** Why a stream was left for good. */
type Ending = "browser ended" | "console off" | "gave up" | undefined;

/**
 * The browser's console lines, followed through its telemetry stream
 * (`GET /browsers/{id}/telemetry/stream?category=console`) only while some listener (an
 * MCP session) is subscribed, and only when the browser's record says its `console`
 * telemetry category is on (read each time following starts). A dropped stream is opened
 * again with `Last-Event-ID`, so nothing kept in between is missed, at most `maxRetries`
 * times in a row with a doubling wait; a stream that carries anything counts as healthy
 * again. Following ends for good when the browser ends (its record is gone or not
 * running). Each event becomes one {@link ConsoleLine}, made once and handed to every
 * listener; listeners decide what to send (level, rate, a slow client), so nothing
 * here is held for anybody.
 */
export class ConsoleFeed {
  readonly #client: BrowserServiceClient;
  readonly #browser: string;
  readonly #options: ConsoleFeedOptions;
  readonly #listeners = new Set<(line: ConsoleLine) => void>();
  #run: AbortController | undefined;
  #ended = false;
  #closed = false;
  #saidOff = false;

  /** @param browser - the browser's id. */
  constructor(client: BrowserServiceClient, browser: string, options: ConsoleFeedOptions = {}) {
    this.#client = client;
    this.#browser = browser;
    this.#options = options;
  }

  /** Whether the stream is followed now (or about to be). */
  get following(): boolean {
    return this.#run !== undefined;
  }

  /**
   * Calls `listener` with each console line from now on. The first listener starts
   * following (unless the browser ended or the feed is closed); when the last one goes,
   * the stream is closed. Returns the function that unsubscribes.
   */
  subscribe(listener: (line: ConsoleLine) => void): () => void {
    this.#listeners.add(listener);
    if (this.#run === undefined && !this.#ended && !this.#closed) this.#start();
    return () => {
      this.#listeners.delete(listener);
      if (this.#listeners.size === 0) this.#stop();
    };
  }

  /** Stops following for good. */
  close(): void {
    this.#closed = true;
    this.#stop();
  }

  #start(): void {
    const run = new AbortController();
    this.#run = run;
    this.#follow(run.signal)
      .then((ending) => {
        if (ending === "browser ended") this.#ended = true;
      })
      .catch((error: unknown) => this.#options.log?.(`stopped following the browser's console: ${(error as Error).message}`))
      .finally(() => {
        if (this.#run === run) this.#run = undefined;
      });
  }

  #stop(): void {
    this.#run?.abort();
    this.#run = undefined;
  }

  #request(signal: AbortSignal) {
    return { signal, ...(this.#options.projectId !== undefined && { projectId: this.#options.projectId }) };
  }

  /** Reads the browser's record: whether it ended, or whether its console category is off. */
  async #check(signal: AbortSignal): Promise<Ending> {
    try {
      const record = await this.#client.browsers.get(this.#browser, this.#request(signal));
      if (record.status !== "running") return "browser ended";
      return record.telemetry?.browser.console.enabled === true ? undefined : "console off";
    } catch (error) {
      if (error instanceof APIError && error.status === 404) return "browser ended";
      throw error;
    }
  }

  async #follow(signal: AbortSignal): Promise<Ending> {
    const log = this.#options.log;
    const maxRetries = this.#options.maxRetries ?? 6;
    const firstDelay = this.#options.retryDelayMs ?? 500;
    const first = await this.#check(signal).catch((error: unknown) => {
      if (!signal.aborted) log?.(`could not read the browser's record, so its console is not followed: ${(error as Error).message}`);
      return "gave up" as const;
    });
    if (signal.aborted) return undefined;
    if (first === "console off") {
      if (!this.#saidOff) log?.("the browser's console telemetry category is off: no log messages (create it with telemetry.browser.console.enabled)");
      this.#saidOff = true;
      return first;
    }
    if (first !== undefined) return first;
    log?.("following the browser's console: its lines go to MCP clients as log messages");
    let lastEventId: string | undefined;
    let failures = 0;
    for (;;) {
      let why = "the stream ended";
      try {
        const stream = await this.#client.telemetry.stream(
          this.#browser,
          { category: ["console"] },
          { ...this.#request(signal), ...(lastEventId !== undefined && { headers: { "Last-Event-ID": lastEventId } }) },
        );
        await readEvents(stream, this.#options.maxFrameChars ?? 4 * 1024 * 1024, {
          bytes: () => {
            failures = 0;
          },
          frame: (id, data) => {
            if (id !== undefined) lastEventId = id;
            this.#dispatch(data);
          },
          skipped: (chars) => log?.(`skipped a console event of ${chars}+ characters`),
        });
      } catch (error) {
        if (signal.aborted) return undefined;
        if (error instanceof APIError && error.status === 404) return "browser ended";
        why = `the stream failed: ${(error as Error).message}`;
      }
      if (signal.aborted) return undefined;
      // The stream ends when the browser does; anything else is a dropped connection.
      const now = await this.#check(signal).catch(() => undefined);
      if (signal.aborted) return undefined;
      if (now !== undefined) {
        log?.(
          now === "browser ended" ? "the browser ended: no more console lines" : "the browser's console telemetry category is off now: no more log messages",
        );
        return now;
      }
      failures++;
      if (failures > maxRetries) {
        log?.(`stopped following the browser's console after ${maxRetries} attempts to reconnect (${why}); a new MCP session tries again`);
        return "gave up";
      }
      const delay = Math.min(firstDelay * 2 ** (failures - 1), firstDelay * 30);
      log?.(`${why}; following the browser's console again in ${delay} ms (attempt ${failures} of ${maxRetries})`);
      if (!(await sleep(delay, signal))) return undefined;
    }
  }

  #dispatch(data: string): void {
    let line: ConsoleLine | undefined;
    try {
      const parsed = JSON.parse(data) as { event?: TelemetryEvent } | null;
      if (typeof parsed?.event !== "object" || parsed.event === null) return;
      line = consoleLine(parsed.event);
    } catch {
      return;
    }
    if (line === undefined) return;
    for (const listener of this.#listeners) {
      try {
        listener(line);
      } catch (error) {
        this.#options.log?.(`a console line could not be handed to a session: ${(error as Error).message}`);
      }
    }
  }
}

/** Waits `ms`; false when `signal` aborted first. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(false);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", aborted);
      resolve(true);
    }, ms);
    const aborted = () => {
      clearTimeout(timer);
      resolve(false);
    };
    signal.addEventListener("abort", aborted, { once: true });
  });
}

/** What {@link readEvents} reports. */
export interface EventSink {
  /** Some bytes arrived (an event or a keepalive comment): the connection works. */
  bytes(): void;
  /** One event: its `id` field (the last one given, as Server-Sent Events define it) and its data lines joined. */
  frame(id: string | undefined, data: string): void;
  /** An event longer than the cap was dropped. */
  skipped(chars: number): void;
}

/**
 * Reads a `text/event-stream` body to its end, as the Server-Sent Events format defines
 * it (lines ending in LF, CRLF or CR; `:` comments; `id` and `data` fields; a blank line
 * ends an event), holding at most `maxFrameChars` of one event: a longer one is skipped
 * to its end, never buffered.
 */
export async function readEvents(stream: ReadableStream<Uint8Array>, maxFrameChars: number, sink: EventSink): Promise<void> {
  const decoder = new TextDecoder();
  const reader = stream.getReader();
  const lineBreak = /\r\n|\r|\n/g;
  let pending = "";
  let data: string[] = [];
  let size = 0;
  let id: string | undefined;
  let skipping = false;
  // The rest of a line whose start was dropped with an event being skipped.
  let continuing = false;
  let afterCr = false;
  const skip = (chars: number) => {
    sink.skipped(chars);
    skipping = true;
    data = [];
    size = 0;
  };
  const line = (text: string) => {
    if (text === "") {
      if (!skipping && data.length > 0) sink.frame(id, data.join("\n"));
      data = [];
      size = 0;
      skipping = false;
      return;
    }
    if (skipping || text.startsWith(":")) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "data") {
      data.push(value);
      size += value.length + 1;
      if (size > maxFrameChars) skip(size);
    } else if (field === "id" && !value.includes("\0")) id = value;
  };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      sink.bytes();
      let text = decoder.decode(value, { stream: true });
      // A CR at the end of the last chunk, then an LF: one line break.
      if (afterCr && text.startsWith("\n")) text = text.slice(1);
      afterCr = false;
      let start = 0;
      lineBreak.lastIndex = 0;
      for (let found = lineBreak.exec(text); found !== null; found = lineBreak.exec(text)) {
        if (found[0] === "\r" && found.index === text.length - 1) afterCr = true;
        if (continuing) continuing = false;
        else line(pending + text.slice(start, found.index));
        pending = "";
        start = found.index + found[0].length;
      }
      const rest = text.slice(start);
      if (!skipping && !continuing) {
        pending += rest;
        if (size + pending.length > maxFrameChars) skip(size + pending.length);
      }
      // Nothing of an event being skipped is kept, not even the line being read.
      if (skipping && (pending !== "" || rest !== "")) {
        pending = "";
        continuing = true;
      }
    }
  } finally {
    // Read to its end, or left early (aborted, a listener failed): either way the body is let go.
    reader.cancel().catch(() => undefined);
  }
}
