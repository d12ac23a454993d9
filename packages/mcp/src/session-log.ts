import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js";
import { type ConsoleLine, consoleLoggerName } from "./console-feed.js";

/** MCP's log levels, least severe first (RFC 5424's, as the MCP spec orders them). */
const severities: readonly LoggingLevel[] = ["debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"];

/**
 * The least severe level a session gets before its client sends `logging/setLevel`. The
 * MCP spec leaves it to the server; the bridge sends `info` and above (console debug
 * lines wait for a client that asks for `debug`).
 */
export const defaultLogLevel: LoggingLevel = "info";

/** The most log messages one session gets in one second; the rest are dropped and counted. */
export const maxLogMessagesPerSecond = 50;

/** The most log messages of one session that its transport has not finished writing; past it lines are dropped. */
export const maxPendingLogMessages = 64;

/** The parameters of one `notifications/message`. */
export interface LogMessage {
  level: LoggingLevel;
  logger: string;
  data: string;
}

/** Options of {@link SessionLog}. */
export interface SessionLogOptions {
  /** Sends one `notifications/message` to the session; resolves when its transport has written it. */
  send(message: LogMessage): Promise<void>;
  /** Whether the session's transport holds unwritten output now (a client not reading): nothing is added then. */
  backlogged?: () => boolean;
  /** Messages per second; default {@link maxLogMessagesPerSecond}. */
  perSecond?: number;
  /** Messages not yet written; default {@link maxPendingLogMessages}. */
  maxPending?: number;
  /** The clock, in milliseconds. Default `performance.now`. */
  now?: () => number;
}

/**
 * What one MCP session is sent of the browser's console: the lines at or above its level
 * (`logging/setLevel`; {@link defaultLogLevel} until then), at most `perSecond` a second
 * (a fixed one-second window), and nothing while its transport has `maxPending` messages
 * unwritten or says it is backlogged, so a slow client costs a count, never a queue. A
 * line not sent is counted, and once there is room again the session gets one warning
 * that says how many were dropped and why (if its level lets warnings through).
 */
export class SessionLog {
  readonly #options: SessionLogOptions;
  readonly #perSecond: number;
  readonly #maxPending: number;
  readonly #now: () => number;
  #level: LoggingLevel | undefined;
  #windowStart = Number.NEGATIVE_INFINITY;
  #inWindow = 0;
  #pending = 0;
  #overRate = 0;
  #unread = 0;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: SessionLogOptions) {
    this.#options = options;
    this.#perSecond = options.perSecond ?? maxLogMessagesPerSecond;
    this.#maxPending = options.maxPending ?? maxPendingLogMessages;
    this.#now = options.now ?? (() => performance.now());
  }

  /** The level the client set, or `undefined` before it set one. */
  get level(): LoggingLevel | undefined {
    return this.#level;
  }

  /** `logging/setLevel`: from now on, only lines at `level` or above. */
  setLevel(level: LoggingLevel): void {
    this.#level = level;
  }

  /** Whether a message at `level` passes the session's level. */
  wants(level: LoggingLevel): boolean {
    return severities.indexOf(level) >= severities.indexOf(this.#level ?? defaultLogLevel);
  }

  /** Offers one console line: sent, ignored (below the level), or dropped and counted. */
  offer(line: ConsoleLine): void {
    if (this.#closed || !this.wants(line.level)) return;
    this.#roll();
    if (this.#overRate + this.#unread > 0 && !this.#reportDropped()) {
      this.#drop();
      return;
    }
    if (!this.#room()) {
      this.#drop();
      return;
    }
    this.#send({ level: line.level, logger: consoleLoggerName, data: line.data });
  }

  /** Stops sending; what was dropped is not reported any more. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #roll(): void {
    const now = this.#now();
    if (now - this.#windowStart >= 1000) {
      this.#windowStart = now;
      this.#inWindow = 0;
    }
  }

  #backlogged(): boolean {
    return this.#pending >= this.#maxPending || this.#options.backlogged?.() === true;
  }

  #room(): boolean {
    return this.#inWindow < this.#perSecond && !this.#backlogged();
  }

  #drop(): void {
    if (this.#inWindow >= this.#perSecond) this.#overRate++;
    else this.#unread++;
    this.#schedule();
  }

  /** Sends the warning about dropped lines if there is room; false when there is none yet. */
  #reportDropped(): boolean {
    const [overRate, unread] = [this.#overRate, this.#unread];
    if (!this.wants("warning")) {
      // The client asked for errors and worse only: the count goes unsaid.
      this.#overRate = this.#unread = 0;
      return true;
    }
    if (!this.#room()) return false;
    this.#overRate = this.#unread = 0;
    const reasons = [
      ...(overRate > 0 ? [`${overRate} over the limit of ${this.#perSecond} a second`] : []),
      ...(unread > 0 ? [`${unread} while the client was not reading its messages`] : []),
    ];
    this.#send({
      level: "warning",
      logger: consoleLoggerName,
      data: `The bridge dropped ${overRate + unread} browser console line${overRate + unread === 1 ? "" : "s"}: ${reasons.join(", ")}.`,
    });
    return true;
  }

  /** Tries the warning again when the window ends (and each second after, while there is no room). */
  #schedule(): void {
    if (this.#timer !== undefined || this.#closed) return;
    const wait = Math.max(1, Math.ceil(this.#windowStart + 1000 - this.#now()));
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (this.#closed || this.#overRate + this.#unread === 0) return;
      this.#roll();
      if (!this.#reportDropped()) this.#schedule();
    }, wait);
    this.#timer.unref?.();
  }

  #send(message: LogMessage): void {
    this.#inWindow++;
    this.#pending++;
    let sending: Promise<void>;
    try {
      sending = this.#options.send(message);
    } catch {
      this.#pending--;
      return;
    }
    // A session that closed meanwhile, or a transport that failed: the message is lost, as any notification would be.
    sending.catch(() => undefined).finally(() => this.#pending--);
  }
}
