import type { CdpPipe, OversizedMessage } from "./cdp-pipe.js";

/** A DevTools protocol message: a command, its response, or an event. */
export interface ProtocolMessage {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  sessionId?: string;
  result?: unknown;
  error?: { code: number; message: string; data?: string };
}

/** How a client's command is answered when the router refuses it (JSON-RPC codes, as Chromium uses them). */
const INVALID_REQUEST = -32600;
const SERVER_ERROR = -32000;
const SESSION_NOT_FOUND = -32001;

// Commands whose `params.sessionId` names a session the caller must own.
const SESSION_PARAM_METHODS = new Set(["Target.detachFromTarget", "Target.sendMessageToTarget"]);
// Commands whose result names a new session of the caller.
const ATTACH_METHODS = new Set(["Target.attachToTarget", "Target.attachToBrowserTarget"]);
// `Tethering.bind` opens a listening TCP port in the browser, which would give every
// local user a way in; no client of this service needs it.
const REFUSED_METHODS = new Map([["Tethering.bind", "Tethering is disabled on this service: it would open a TCP port on the server."]]);
// Downloads land in the browser's own folder, never where a client's path points on the server.
const DOWNLOAD_METHODS = new Set(["Browser.setDownloadBehavior", "Page.setDownloadBehavior"]);

/** An event too large to relay, as its channel learns of it: its ends, size and session (`undefined`: the channel's browser session). */
export interface DroppedEvent extends OversizedMessage {
  sessionId: string | undefined;
}

/** Commands queued for the browser past this many bytes are refused rather than buffered. */
const MAX_BACKLOG_BYTES = 64 * 1024 * 1024;

/** Messages larger than this (in characters) are routed by their ends rather than parsed. */
const PARSE_LIMIT = 1024 * 1024;
const EDGE_CHARS = 256;
const SESSION_SUFFIX = /,"sessionId":"([^"\\]*)"\}$/;

/** A serialized message less its trailing `,"sessionId":"…"` member. */
function withoutSession(json: string, sessionId: string): string {
  return `${json.slice(0, json.length - `,"sessionId":"${sessionId}"}`.length)}}`;
}

/** A message for a channel: parsed, or (when large) still serialized, ready to relay as it is. */
export type ChannelMessage = ProtocolMessage | string;

/** Why a channel closed. */
export type ChannelCloseReason = "client" | "detached" | "browser";

interface ChannelCommand {
  kind: "channel";
  channel: CdpChannel;
  clientId: number;
  method: string;
}

interface RouterCommand {
  kind: "router";
  method: string;
  resolve(result: Record<string, unknown>): void;
  reject(error: Error): void;
}

/** A command the router itself sent failed, or the browser closed first. */
export class CdpRouterError extends Error {
  /** Stable code of the failure. */
  readonly code = "cdp_router_error";

  constructor(message: string) {
    super(message);
    this.name = "CdpRouterError";
  }
}

/** Settings of {@link CdpRouter}. */
export interface CdpRouterOptions {
  /** Where `Browser.setDownloadBehavior` and `Page.setDownloadBehavior` always point. */
  downloadPath: string;
}

/**
 * Shares one browser's DevTools pipe among many clients. Each client is a
 * {@link CdpChannel} with its own browser-target session (`Target.attachToBrowserTarget`):
 * its commands go out on that session with ids the router assigns, and it sees only the
 * responses and events of its own sessions, including every child session its own
 * `Target.setAutoAttach` or `Target.attachToTarget` creates. Nothing reaches a client
 * from a session it does not own, and it cannot name another client's session.
 */
export class CdpRouter {
  readonly #pipe: CdpPipe;
  readonly #downloadPath: string;
  readonly #pending = new Map<number, ChannelCommand | RouterCommand>();
  // Every live session, by id, to the channel that owns it.
  readonly #owners = new Map<string, CdpChannel>();
  readonly #channels = new Set<CdpChannel>();
  readonly #closeRequestedListeners: (() => void)[] = [];
  readonly #oversizedListeners: ((message: OversizedMessage) => void)[] = [];
  #nextId = 1;

  constructor(pipe: CdpPipe, options: CdpRouterOptions) {
    this.#pipe = pipe;
    this.#downloadPath = options.downloadPath;
    pipe.onMessage((json) => this.#receive(json));
    pipe.onOversized((message) => this.#oversized(message));
    pipe.onClose(() => this.#browserClosed());
  }

  /** Whether the browser's pipe has closed. */
  get closed(): boolean {
    return this.#pipe.closed;
  }

  /** How many channels are open. */
  get channelCount(): number {
    return this.#channels.size;
  }

  /** Sends a command on the browser's root session (the router's own, never a client's). */
  call(method: string, params: object = {}): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      this.#pending.set(id, { kind: "router", method, resolve, reject });
      if (!this.#pipe.send(JSON.stringify({ id, method, params }))) {
        this.#pending.delete(id);
        reject(new CdpRouterError(`The browser has closed; ${method} was not sent.`));
      }
    });
  }

  /** Opens a channel: a new browser-target session for one client. */
  async openChannel(): Promise<CdpChannel> {
    const { sessionId } = await this.call("Target.attachToBrowserTarget");
    if (typeof sessionId !== "string") throw new CdpRouterError("Target.attachToBrowserTarget answered without a session id.");
    const channel = new CdpChannel(this, sessionId);
    this.#channels.add(channel);
    this.#owners.set(sessionId, channel);
    return channel;
  }

  /** Calls `listener` when a client sends `Browser.close`: the owner decides how the browser ends. */
  onCloseRequested(listener: () => void): void {
    this.#closeRequestedListeners.push(listener);
  }

  /** Calls `listener` for every browser message dropped for its size. */
  onOversized(listener: (message: OversizedMessage) => void): void {
    this.#oversizedListeners.push(listener);
  }

  /** Stops talking to the browser; every channel closes. */
  close(): void {
    this.#pipe.close();
    this.#browserClosed();
  }

  /** @internal A client's command, already parsed. */
  forward(channel: CdpChannel, message: ProtocolMessage): void {
    const refused = this.#refusal(channel, message);
    if (refused !== undefined) {
      channel.deliver({ id: message.id as number, error: refused });
      return;
    }
    if (this.#pipe.backlogBytes > MAX_BACKLOG_BYTES) {
      // Clients send as fast as their sockets allow; the browser reads one command at a time.
      channel.deliver({ id: message.id as number, error: { code: SERVER_ERROR, message: "The browser is not reading commands as fast as they are sent; this one was not sent. Wait for answers before sending more." } });
      return;
    }
    if (message.method === "Browser.close") {
      channel.deliver({ id: message.id as number, result: {} });
      for (const listener of this.#closeRequestedListeners) listener();
      return;
    }
    const id = this.#nextId++;
    this.#pending.set(id, { kind: "channel", channel, clientId: message.id as number, method: message.method as string });
    const params = DOWNLOAD_METHODS.has(message.method as string) && message.params?.downloadPath !== undefined
      ? { ...message.params, downloadPath: this.#downloadPath }
      : message.params;
    const out: ProtocolMessage = { id, method: message.method as string, sessionId: message.sessionId ?? channel.browserSessionId };
    if (params !== undefined) out.params = params;
    if (!this.#pipe.send(JSON.stringify(out))) {
      this.#pending.delete(id);
      channel.deliver({ id: message.id as number, error: { code: SERVER_ERROR, message: "The browser has closed." } });
    }
  }

  /** @internal Detaches a channel's browser session (and with it every child session). */
  release(channel: CdpChannel): void {
    if (!this.#channels.delete(channel)) return;
    this.#forget(channel);
    if (!this.#pipe.closed) {
      const id = this.#nextId++;
      // Nobody waits for the answer: the session is gone for the client either way.
      this.#pending.set(id, { kind: "router", method: "Target.detachFromTarget", resolve: () => undefined, reject: () => undefined });
      this.#pipe.send(JSON.stringify({ id, method: "Target.detachFromTarget", params: { sessionId: channel.browserSessionId } }));
    }
  }

  #refusal(channel: CdpChannel, message: ProtocolMessage): ProtocolMessage["error"] | undefined {
    const method = message.method as string;
    const why = REFUSED_METHODS.get(method);
    if (why !== undefined) return { code: SERVER_ERROR, message: why };
    if (message.sessionId !== undefined && this.#owners.get(message.sessionId) !== channel) {
      return { code: SESSION_NOT_FOUND, message: "Session with given id not found." };
    }
    const named = message.params?.sessionId;
    if (SESSION_PARAM_METHODS.has(method) && named !== undefined && (typeof named !== "string" || this.#owners.get(named) !== channel)) {
      return { code: SESSION_NOT_FOUND, message: "No session with given id found." };
    }
    return undefined;
  }

  #receive(json: string): void {
    if (json.length > PARSE_LIMIT) {
      this.#receiveLarge(json);
      return;
    }
    let message: ProtocolMessage;
    try {
      message = JSON.parse(json) as ProtocolMessage;
    } catch {
      // Chromium only sends JSON; a message that is not is dropped rather than guessed at.
      return;
    }
    if (message.id !== undefined) {
      this.#respond(message.id, message);
      return;
    }
    const sessionId = message.sessionId;
    const params = message.params ?? {};
    if (sessionId === undefined) {
      // The root session is the router's; of its events only a channel's end matters.
      if (message.method === "Target.detachedFromTarget" && typeof params.sessionId === "string") {
        const channel = this.#owners.get(params.sessionId);
        if (channel?.browserSessionId === params.sessionId) this.#end(channel, "detached");
      }
      return;
    }
    const owner = this.#owners.get(sessionId);
    if (!owner) return;
    if (message.method === "Target.attachedToTarget" && typeof params.sessionId === "string") {
      this.#own(owner, params.sessionId);
    } else if (message.method === "Target.detachedFromTarget" && typeof params.sessionId === "string") {
      this.#owners.delete(params.sessionId);
      owner.sessions.delete(params.sessionId);
    }
    if (sessionId === owner.browserSessionId) delete message.sessionId;
    owner.deliver(message);
  }

  /**
   * Routes a large message by its two ends, without parsing it: Chromium writes a
   * response's `id` first and a message's `sessionId` last, and a JSON string cannot hide
   * a quote, so both are read exactly. Parsing (and re-serializing) a screenshot or a
   * replay of thousands of tools would stall the server for every other client.
   */
  #receiveLarge(json: string): void {
    const response = /^\{"id":(\d+),/.exec(json);
    const sessionId = SESSION_SUFFIX.exec(json.slice(-EDGE_CHARS))?.[1];
    if (response) {
      const id = Number(response[1]);
      const pending = this.#pending.get(id);
      if (!pending) return;
      if (pending.kind === "router") {
        this.#respond(id, JSON.parse(json) as ProtocolMessage);
        return;
      }
      this.#pending.delete(id);
      const { channel } = pending;
      if (!this.#channels.has(channel)) return;
      const renumbered = `{"id":${pending.clientId},${json.slice(response[0].length)}`;
      channel.deliver(sessionId === channel.browserSessionId ? withoutSession(renumbered, sessionId) : renumbered);
      return;
    }
    // A large event of the root session (the router's own) concerns no client.
    const owner = sessionId === undefined ? undefined : this.#owners.get(sessionId);
    if (!owner || sessionId === undefined) return;
    owner.deliver(sessionId === owner.browserSessionId ? withoutSession(json, sessionId) : json);
  }

  #respond(id: number, message: ProtocolMessage): void {
    const pending = this.#pending.get(id);
    if (!pending) return;
    this.#pending.delete(id);
    if (pending.kind === "router") {
      if (message.error) pending.reject(new CdpRouterError(`${pending.method} failed: ${message.error.message}`));
      else pending.resolve((message.result ?? {}) as Record<string, unknown>);
      return;
    }
    const { channel } = pending;
    if (!this.#channels.has(channel)) return;
    if (ATTACH_METHODS.has(pending.method)) {
      const attached = (message.result as { sessionId?: unknown } | undefined)?.sessionId;
      if (typeof attached === "string") this.#own(channel, attached);
    }
    message.id = pending.clientId;
    if (message.sessionId === channel.browserSessionId) delete message.sessionId;
    channel.deliver(message);
  }

  #oversized(skipped: OversizedMessage): void {
    for (const listener of this.#oversizedListeners) listener(skipped);
    const id = /^\{"id":(\d+)[,}]/.exec(skipped.head)?.[1];
    if (id === undefined) {
      // An event: its owner, if any, is told what it missed; the event itself is gone.
      const sessionId = /"sessionId":"([^"\\]*)"\}$/.exec(skipped.tail)?.[1];
      const owner = sessionId === undefined ? undefined : this.#owners.get(sessionId);
      owner?.dropped({ ...skipped, sessionId: sessionId === owner.browserSessionId ? undefined : sessionId });
      return;
    }
    this.#respond(Number(id), {
      id: Number(id),
      error: { code: SERVER_ERROR, message: `The browser's answer (${skipped.bytes} bytes) is larger than this server relays; it was dropped.` },
    });
  }

  #own(channel: CdpChannel, sessionId: string): void {
    if (!this.#channels.has(channel)) return;
    this.#owners.set(sessionId, channel);
    channel.sessions.add(sessionId);
  }

  #forget(channel: CdpChannel): void {
    this.#owners.delete(channel.browserSessionId);
    for (const sessionId of channel.sessions) this.#owners.delete(sessionId);
    channel.sessions.clear();
    for (const [id, pending] of this.#pending) if (pending.kind === "channel" && pending.channel === channel) this.#pending.delete(id);
  }

  #end(channel: CdpChannel, reason: ChannelCloseReason): void {
    if (!this.#channels.delete(channel)) return;
    this.#forget(channel);
    channel.ended(reason);
  }

  #browserClosed(): void {
    for (const pending of this.#pending.values()) if (pending.kind === "router") pending.reject(new CdpRouterError(`The browser closed before ${pending.method} answered.`));
    this.#pending.clear();
    for (const channel of [...this.#channels]) this.#end(channel, "browser");
  }
}

/**
 * One client's view of the browser: commands without a `sessionId` go to the client's
 * own browser-target session, and every message it receives belongs to its sessions.
 */
export class CdpChannel {
  /** The browser-target session this channel's session-less commands go to. */
  readonly browserSessionId: string;
  /** @internal Child sessions this channel created (auto-attach, attachToTarget). */
  readonly sessions = new Set<string>();
  readonly #router: CdpRouter;
  readonly #messageListeners: ((message: ChannelMessage) => void)[] = [];
  readonly #closeListeners: ((reason: ChannelCloseReason) => void)[] = [];
  readonly #droppedListeners: ((message: DroppedEvent) => void)[] = [];
  #closed: ChannelCloseReason | undefined;

  /** @internal Made by {@link CdpRouter.openChannel}. */
  constructor(router: CdpRouter, browserSessionId: string) {
    this.#router = router;
    this.browserSessionId = browserSessionId;
  }

  /** Whether the channel has closed (by its client, or because the browser went away). */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /**
   * Sends a client's command. A message that is not a command (an integer `id` and a
   * string `method`, optional object `params` and string `sessionId`) is answered with
   * an error and not sent; so is one naming a session the channel does not own.
   */
  send(message: unknown): void {
    if (this.#closed !== undefined) return;
    const problem = commandProblem(message);
    if (problem !== undefined) {
      const id = (message as { id?: unknown } | null)?.id;
      this.deliver({ id: Number.isSafeInteger(id) ? (id as number) : 0, error: { code: INVALID_REQUEST, message: problem } });
      return;
    }
    this.#router.forward(this, message as ProtocolMessage);
  }

  /**
   * Calls `listener` with every message for this channel, in order: an object, or for a
   * large message its JSON text, already renumbered for the client.
   */
  onMessage(listener: (message: ChannelMessage) => void): void {
    this.#messageListeners.push(listener);
  }

  /** Calls `listener` once when the channel closes. */
  onClose(listener: (reason: ChannelCloseReason) => void): void {
    if (this.#closed !== undefined) listener(this.#closed);
    else this.#closeListeners.push(listener);
  }

  /** Calls `listener` for each event of this channel's sessions dropped for its size. */
  onDropped(listener: (message: DroppedEvent) => void): void {
    this.#droppedListeners.push(listener);
  }

  /** Closes the channel: its sessions detach in the browser; other channels are untouched. */
  close(): void {
    if (this.#closed !== undefined) return;
    this.#router.release(this);
    this.ended("client");
  }

  /** @internal */
  deliver(message: ChannelMessage): void {
    if (this.#closed !== undefined) return;
    for (const listener of this.#messageListeners) listener(message);
  }

  /** @internal */
  dropped(message: DroppedEvent): void {
    if (this.#closed !== undefined) return;
    for (const listener of this.#droppedListeners) listener(message);
  }

  /** @internal */
  ended(reason: ChannelCloseReason): void {
    if (this.#closed !== undefined) return;
    this.#closed = reason;
    for (const listener of this.#closeListeners.splice(0)) listener(reason);
  }
}

function commandProblem(message: unknown): string | undefined {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return "A command must be a JSON object.";
  const { id, method, params, sessionId } = message as Record<string, unknown>;
  if (!Number.isSafeInteger(id) || (id as number) < 0) return "A command needs a non-negative integer id.";
  if (typeof method !== "string" || method.length === 0) return "A command needs a method name.";
  if (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params))) return "params must be an object.";
  if (sessionId !== undefined && typeof sessionId !== "string") return "sessionId must be a string.";
  return undefined;
}
