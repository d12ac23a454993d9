import WebSocket from "ws";

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

interface ProtocolMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  sessionId?: string;
  result?: unknown;
  error?: { code: number; message: string };
}

/**
 * Page data (tool schemas, outputs) travels inside protocol messages, so a message may be
 * large; past this the connection is dropped rather than buffering without bound.
 */
const MAX_MESSAGE_BYTES = 256 * 1024 * 1024;
/** A browser's DevTools endpoint is local; one that does not answer the handshake in this long is not coming up. */
const HANDSHAKE_TIMEOUT_MS = 10_000;

/**
 * One DevTools protocol connection to a browser's browser-level WebSocket, with
 * flattened sessions: commands carry an optional `sessionId`, events arrive through one
 * listener in the order the browser sent them.
 */
export class CdpConnection {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, PendingCommand>();
  readonly #eventListeners: ((event: CdpEvent) => void)[] = [];
  readonly #closeListeners: ((error: CdpDisconnectedError) => void)[] = [];
  #nextId = 1;
  #closedBy: CdpDisconnectedError | undefined;

  private constructor(socket: WebSocket) {
    this.#socket = socket;
    socket.on("message", (data: WebSocket.RawData) => this.#receive(data));
    socket.on("close", (code: number, reason: Buffer) => this.#closed(new CdpDisconnectedError(`The DevTools connection closed (code ${code}${reason.length > 0 ? `, ${reason.toString()}` : ""}).`)));
    // The close event follows every error; the error only explains it.
    socket.on("error", (error: Error) => {
      this.#closedBy ??= new CdpDisconnectedError(`The DevTools connection failed: ${error.message}`, error);
    });
  }

  /** Connects to a DevTools WebSocket URL such as `ws://127.0.0.1:9222/devtools/browser/…`. */
  static async open(url: string): Promise<CdpConnection> {
    const socket = new WebSocket(url, { perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES, handshakeTimeout: HANDSHAKE_TIMEOUT_MS });
    await new Promise<void>((resolve, reject) => {
      const onError = (error: Error) => reject(new CdpDisconnectedError(`Could not connect to DevTools at ${url}: ${error.message}`, error));
      socket.once("error", onError);
      socket.once("open", () => {
        socket.off("error", onError);
        resolve();
      });
    });
    return new CdpConnection(socket);
  }

  /** Whether the connection has closed. */
  get closed(): boolean {
    return this.#socket.readyState !== WebSocket.OPEN;
  }

  /** Calls `listener` with every event, in order. */
  onEvent(listener: (event: CdpEvent) => void): void {
    this.#eventListeners.push(listener);
  }

  /** Calls `listener` once when the connection closes, for whatever reason. */
  onClose(listener: (error: CdpDisconnectedError) => void): void {
    this.#closeListeners.push(listener);
  }

  /**
   * Sends a command and resolves with its result. Rejects with {@link CdpProtocolError}
   * when the browser refuses it, {@link CdpSessionClosedError} when its session detaches
   * first, {@link CdpDisconnectedError} when the connection closes first, and
   * {@link CdpNotConnectedError} when it was already closed (nothing was sent).
   */
  send<T = Record<string, unknown>>(method: string, params: object = {}, sessionId?: string): Promise<T> {
    if (this.#socket.readyState !== WebSocket.OPEN) return Promise.reject(new CdpNotConnectedError(method));
    const id = this.#nextId++;
    const message: { id: number; method: string; params: object; sessionId?: string } = { id, method, params };
    if (sessionId !== undefined) message.sessionId = sessionId;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { method, sessionId, resolve: resolve as (result: unknown) => void, reject });
      this.#socket.send(JSON.stringify(message), (error) => {
        if (error && this.#pending.delete(id)) reject(new CdpDisconnectedError(`Could not send ${method}: ${error.message}`, error));
      });
    });
  }

  /** Closes the connection; commands in flight reject with {@link CdpDisconnectedError}. */
  async close(): Promise<void> {
    if (this.#socket.readyState === WebSocket.CLOSED) return;
    const closed = new Promise<void>((resolve) => this.#socket.once("close", () => resolve()));
    this.#closedBy ??= new CdpDisconnectedError("The DevTools connection was closed by the server.");
    this.#socket.close();
    await closed;
  }

  #receive(data: WebSocket.RawData): void {
    let message: ProtocolMessage;
    try {
      message = JSON.parse(data.toString()) as ProtocolMessage;
    } catch (error) {
      // A browser that sends something other than JSON cannot be followed any further.
      this.#closedBy = new CdpDisconnectedError("The browser sent a DevTools message that is not JSON.", error);
      this.#socket.terminate();
      return;
    }
    if (message.id !== undefined) {
      const pending = this.#pending.get(message.id);
      // Already failed because its session detached or the send failed.
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

  #failSession(sessionId: string): void {
    for (const [id, pending] of this.#pending) {
      if (pending.sessionId !== sessionId) continue;
      this.#pending.delete(id);
      pending.reject(new CdpSessionClosedError(pending.method, sessionId));
    }
  }

  #closed(fallback: CdpDisconnectedError): void {
    const error = (this.#closedBy ??= fallback);
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    for (const listener of this.#closeListeners) listener(error);
  }
}
