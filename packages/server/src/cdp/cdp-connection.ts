import type { CdpChannel, CdpRouter, ChannelCloseReason, ChannelMessage, DroppedEvent, ProtocolMessage } from "./cdp-router.js";

/** An event the browser sent over the DevTools protocol. */
export interface CdpEvent {
  method: string;
  params: Record<string, unknown>;
  /** The flattened session the event belongs to; `undefined` for the browser itself. */
  sessionId: string | undefined;
}

/** The browser answered a command with a protocol error (such as "Tool not found"). */
export class CdpProtocolError extends Error {
  /** Stable code of the failure. */
  readonly code = "cdp_protocol_error";
  /** The command that failed. */
  readonly method: string;
  /** The protocol's numeric error code. */
  readonly protocolCode: number;

  constructor(method: string, protocolCode: number, message: string) {
    super(message);
    this.name = "CdpProtocolError";
    this.method = method;
    this.protocolCode = protocolCode;
  }
}

/** The connection to the browser closed; commands in flight may or may not have run. */
export class CdpDisconnectedError extends Error {
  /** Stable code of the failure. */
  readonly code = "cdp_disconnected";

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "CdpDisconnectedError";
  }
}

/** A command was not sent because the connection had already closed. */
export class CdpNotConnectedError extends Error {
  /** Stable code of the failure. */
  readonly code = "cdp_not_connected";

  constructor(method: string) {
    super(`The DevTools connection is closed; ${method} was not sent.`);
    this.name = "CdpNotConnectedError";
  }
}

/** The session a command was sent on detached before it answered; the command may or may not have run. */
export class CdpSessionClosedError extends Error {
  /** Stable code of the failure. */
  readonly code = "cdp_session_closed";
  /** The session that detached. */
  readonly sessionId: string;

  constructor(method: string, sessionId: string) {
    super(`The target of session ${sessionId} detached before ${method} answered.`);
    this.name = "CdpSessionClosedError";
    this.sessionId = sessionId;
  }
}

interface PendingCommand {
  method: string;
  sessionId: string | undefined;
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/**
 * The largest message (in characters) the server parses at once for its own use: above
 * the 4 MiB output cap, so outputs just over it are still reported as dropped by size.
 * A larger event is read by the reader registered for its method, if any (a replay of
 * thousands of tools, tool by tool), or else dropped.
 */
const MAX_PARSED_CHARS = 8 * 1024 * 1024;

/**
 * Reads an event too large to parse at once, given as its JSON text, and resolves once
 * it has; the connection's later messages wait until then, so that order is kept. It
 * reports its own failures: the connection goes on either way.
 */
export type LargeEventReader = (json: string, sessionId: string | undefined) => Promise<void>;

// An event's method leads its text, its session (if any) ends it; see CdpRouter.
const EVENT_METHOD = /^\{"method":"([^"\\]+)"/;
const EVENT_SESSION = /,"sessionId":"([^"\\]*)"\}$/;

/** What reaches the connection from its channel, in order. */
type Arrival = { message: ChannelMessage } | { dropped: DroppedEvent };

/** How long a command may go unanswered before it fails with {@link CdpTimeoutError}. */
export const DEFAULT_COMMAND_TIMEOUT_MS = 30_000;

/** A command got no answer in time; it may or may not have run. */
export class CdpTimeoutError extends Error {
  /** Stable code of the failure. */
  readonly code = "cdp_timeout";
  /** The command that timed out. */
  readonly method: string;

  constructor(method: string, timeoutMs: number) {
    super(`The browser did not answer ${method} within ${timeoutMs} ms.`);
    this.name = "CdpTimeoutError";
    this.method = method;
  }
}

/**
 * The server's own DevTools connection to a browser: one {@link CdpChannel} of the
 * browser's pipe (its own browser-target session, beside any client's), with flattened
 * sessions: commands carry an optional `sessionId`, events arrive through one listener
 * in the order the browser sent them. Every command has a timeout.
 */
export class CdpConnection {
  readonly #channel: CdpChannel;
  readonly #pending = new Map<number, PendingCommand>();
  readonly #eventListeners: ((event: CdpEvent) => void)[] = [];
  readonly #closeListeners: ((error: CdpDisconnectedError) => void)[] = [];
  readonly #droppedListeners: ((event: DroppedEvent) => void)[] = [];
  readonly #largeReaders = new Map<string, LargeEventReader>();
  // While a large event is being read, what arrives after it waits here.
  #reading = false;
  readonly #waiting: Arrival[] = [];
  #nextId = 1;
  #closedBy: CdpDisconnectedError | undefined;

  private constructor(channel: CdpChannel) {
    this.#channel = channel;
    channel.onMessage((message) => this.#arrive({ message }));
    channel.onDropped((dropped) => this.#arrive({ dropped }));
    channel.onClose((reason) => this.#closed(new CdpDisconnectedError(DISCONNECT_REASONS[reason])));
  }

  /** Opens a channel of the browser's pipe. */
  static async open(router: CdpRouter): Promise<CdpConnection> {
    try {
      return new CdpConnection(await router.openChannel());
    } catch (error) {
      throw new CdpDisconnectedError(`Could not open a DevTools session: ${(error as Error).message}`, error);
    }
  }

  /** Whether the connection has closed. */
  get closed(): boolean {
    return this.#channel.closed;
  }

  /** Calls `listener` with every event, in order. */
  onEvent(listener: (event: CdpEvent) => void): void {
    this.#eventListeners.push(listener);
  }

  /** Calls `listener` for every event the browser sent this connection that was too large to relay or to read. */
  onDropped(listener: (event: DroppedEvent) => void): void {
    this.#droppedListeners.push(listener);
  }

  /**
   * Hands each event of `method` too large to parse at once to `reader` rather than
   * dropping it; the events and answers that follow it are delivered once it is read.
   */
  readLarge(method: string, reader: LargeEventReader): void {
    this.#largeReaders.set(method, reader);
  }

  /** Calls `listener` once when the connection closes, for whatever reason. */
  onClose(listener: (error: CdpDisconnectedError) => void): void {
    this.#closeListeners.push(listener);
  }

  /**
   * Sends a command and resolves with its result. Rejects with {@link CdpProtocolError}
   * when the browser refuses it, {@link CdpSessionClosedError} when its session detaches
   * first, {@link CdpDisconnectedError} when the connection closes first,
   * {@link CdpTimeoutError} when no answer comes within `timeoutMs`, and
   * {@link CdpNotConnectedError} when it was already closed (nothing was sent).
   */
  send<T = Record<string, unknown>>(method: string, params: object = {}, sessionId?: string, timeoutMs: number = DEFAULT_COMMAND_TIMEOUT_MS): Promise<T> {
    if (this.#channel.closed) return Promise.reject(new CdpNotConnectedError(method));
    const id = this.#nextId++;
    const message: ProtocolMessage = { id, method, params: params as Record<string, unknown> };
    if (sessionId !== undefined) message.sessionId = sessionId;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        if (this.#pending.delete(id)) reject(new CdpTimeoutError(method, timeoutMs));
      }, timeoutMs);
      const settle =
        <A>(fn: (value: A) => void) =>
        (value: A) => {
          clearTimeout(timer);
          fn(value);
        };
      this.#pending.set(id, { method, sessionId, resolve: settle(resolve as (result: unknown) => void), reject: settle(reject) });
      this.#channel.send(message);
    });
  }

  /** Closes the connection; commands in flight reject with {@link CdpDisconnectedError}. */
  async close(): Promise<void> {
    this.#closedBy ??= new CdpDisconnectedError("The DevTools connection was closed by the server.");
    this.#channel.close();
  }

  #arrive(arrival: Arrival): void {
    if (this.#reading) {
      this.#waiting.push(arrival);
      return;
    }
    if ("dropped" in arrival) {
      for (const listener of this.#droppedListeners) listener(arrival.dropped);
      return;
    }
    this.#receive(arrival.message);
  }

  #receive(received: ChannelMessage): void {
    const message = typeof received === "string" ? this.#parseLarge(received) : received;
    if (message === undefined) return;
    if (message.id !== undefined) {
      const pending = this.#pending.get(message.id);
      // Already failed: its session detached, or it timed out.
      if (!pending) return;
      this.#pending.delete(message.id);
      if (message.error) pending.reject(new CdpProtocolError(pending.method, message.error.code, message.error.message));
      else pending.resolve(message.result ?? {});
      return;
    }
    if (message.method === undefined) return;
    const event: CdpEvent = { method: message.method, params: message.params ?? {}, sessionId: message.sessionId };
    if (event.method === "Target.detachedFromTarget") this.#failSession(String(event.params.sessionId));
    for (const listener of this.#eventListeners) listener(event);
  }

  /**
   * A large message the router relayed unparsed. Past {@link MAX_PARSED_CHARS} the server
   * does not parse it at once: an answer fails its command, an event goes to the reader
   * of its method (see {@link readLarge}) or is reported dropped (a tool output), so
   * that no page can make the server parse tens of megabytes in one turn of its event loop.
   */
  #parseLarge(json: string): ProtocolMessage | undefined {
    if (json.length <= MAX_PARSED_CHARS) return JSON.parse(json) as ProtocolMessage;
    const head = json.slice(0, 256);
    const tail = json.slice(-256);
    const id = /^\{"id":(\d+),/.exec(head)?.[1];
    if (id !== undefined)
      return {
        id: Number(id),
        error: { code: -32000, message: `The browser's answer (${json.length} characters) is larger than the server reads (${MAX_PARSED_CHARS}).` },
      };
    const sessionId = EVENT_SESSION.exec(tail)?.[1];
    const reader = this.#largeReaders.get(EVENT_METHOD.exec(head)?.[1] ?? "");
    if (reader === undefined) {
      for (const listener of this.#droppedListeners) listener({ head, tail, bytes: json.length, sessionId });
      return undefined;
    }
    this.#reading = true;
    const done = () => {
      this.#reading = false;
      // In order, until the next large event (if any) is being read in turn.
      while (!this.#reading && this.#waiting.length > 0) this.#arrive(this.#waiting.shift() as Arrival);
    };
    reader(json, sessionId).then(done, done);
    return undefined;
  }

  #failSession(sessionId: string): void {
    for (const [id, pending] of this.#pending) {
      if (pending.sessionId !== sessionId) continue;
      this.#pending.delete(id);
      pending.reject(new CdpSessionClosedError(pending.method, sessionId));
    }
  }

  #closed(fallback: CdpDisconnectedError): void {
    const error = (this.#closedBy ??= fallback);
    this.#waiting.length = 0;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    for (const listener of this.#closeListeners) listener(error);
  }
}

const DISCONNECT_REASONS: Record<ChannelCloseReason, string> = {
  client: "The DevTools connection was closed by the server.",
  detached: "The browser detached the server's DevTools session.",
  browser: "The browser's DevTools pipe closed (the browser exited).",
};
