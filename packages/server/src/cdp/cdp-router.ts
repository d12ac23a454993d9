import type { CdpPipe, OversizedMessage } from "./cdp-pipe.js";
import { type ClientCommand, type CommandProblem, parseClientCommand, plainSessionId } from "./client-command.js";
import { judgeCommand, paramsInspected } from "./command-policy.js";
import { MAX_COMMAND_DEPTH, MAX_COMMAND_STRUCTURE, scanCommandText, type TextSpan } from "./command-text.js";

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
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const SERVER_ERROR = -32000;
const SESSION_NOT_FOUND = -32001;

// Commands whose `params.sessionId` names a session the caller must own.
const SESSION_PARAM_METHODS = new Set(["Target.detachFromTarget", "Target.sendMessageToTarget"]);
// Commands whose result names a new session of the caller.
const ATTACH_METHODS = new Set(["Target.attachToTarget", "Target.attachToBrowserTarget"]);

/** Whether an attach event's `targetInfo` is one of Chromium's own UI pages (`browser_ui`, or a `chrome:` or `devtools:` URL). */
function isBrowserUi(targetInfo: unknown): boolean {
  if (typeof targetInfo !== "object" || targetInfo === null) return false;
  const { type, url } = targetInfo as { type?: unknown; url?: unknown };
  return type === "browser_ui" || (typeof url === "string" && /^(chrome|chrome-untrusted|devtools):/i.test(url));
}

/** An event too large to relay, as its channel learns of it: its ends, size and session (`undefined`: the channel's browser session). */
export interface DroppedEvent extends OversizedMessage {
  sessionId: string | undefined;
}

/** Commands queued for the browser past this many bytes are refused rather than buffered. */
const MAX_BACKLOG_BYTES = 64 * 1024 * 1024;
/** The refusal of a command while the browser's backlog is over its bound: nothing was sent, so it may be sent again. */
export const BACKLOG_REFUSAL = "The browser is not reading commands as fast as they are sent; this one was not sent. Wait for answers before sending more.";

/** Messages larger than this (in characters) are routed by their ends rather than parsed. */
const PARSE_LIMIT = 1024 * 1024;
const EDGE_CHARS = 256;
const SESSION_SUFFIX = /,"sessionId":"([^"\\]*)"\}$/;
// Chromium writes an attach event's own `sessionId` first in its params (then `targetInfo`,
// which a long URL can make large), so the new session is read from the head.
const ATTACHED_HEAD = /^\{"method":"Target\.attachedToTarget","params":\{"sessionId":"([^"\\]*)"/;
// Chromium writes an answer's `id` first and an event's `method` first.
const RESPONSE_HEAD = /^\{"id":(\d+),/;
const EVENT_HEAD = /^\{"method":"([^"\\]*)"/;

/** A serialized message less its trailing `,"sessionId":"…"` member. */
function withoutSession(json: string, sessionId: string): string {
  return `${json.slice(0, json.length - `,"sessionId":"${sessionId}"}`.length)}}`;
}

/**
 * A message for a channel: its JSON text as the browser sent it (most messages, ready to
 * relay as they are), or an object (what the router read in full: answers to attach
 * commands, `Target.*` events, and its own refusals).
 */
export type ChannelMessage = ProtocolMessage | string;

/** Why a channel closed. */
export type ChannelCloseReason = "client" | "detached" | "browser";

interface ChannelCommand {
  kind: "channel";
  channel: CdpChannel;
  clientId: number;
  method: string;
  /** When it was sent (`performance.now()`), for a command its channel's observer reports; else absent. */
  sentAt?: number;
  /** The session the client sent it on; only kept for a reported command. */
  clientSession?: string | undefined;
}

/** How a client's command ended, as a {@link CommandObserver} is told. */
export interface ObservedCommand {
  method: string;
  /** The session the client named; `undefined` for its browser session. */
  sessionId: string | undefined;
  durationMs: number;
  /** `ok`: the browser answered with a result; `error`: with an error; `refused`: the service answered it, unsent. */
  outcome: "ok" | "error" | "refused";
}

/**
 * Told of a channel's commands (the telemetry of its browser): which methods it reports,
 * and how each reported one ended. It is asked once per command, so it must be cheap;
 * a method it does not report costs nothing more.
 */
export interface CommandObserver {
  /** `report`: time it and tell {@link done}; `excluded`: only count it; `ignore`: nothing. */
  report(method: string): "report" | "excluded" | "ignore";
  done(command: ObservedCommand): void;
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
  /**
   * The only directory whose files a client may hand to a page (`DOM.setFileInputFiles`,
   * `Input.dispatchDragEvent`): the browser's own profile. Default: none, every path is refused.
   */
  filesRoot?: string | undefined;
  /**
   * Told of an error thrown while the router handled a message from the browser; the
   * message is dropped and the router goes on. Default: a process warning.
   */
  onError?: (error: unknown) => void;
}

/** Settings of one {@link CdpChannel}. */
export interface CdpChannelOptions {
  /**
   * Commands of the channel awaiting the browser's answer at most; past it a command is
   * answered with an error and not sent. Default: no cap (the server's own channel).
   */
  maxPending?: number;
  /** Told of the channel's commands (see {@link CommandObserver}); default none. */
  commands?: CommandObserver | undefined;
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
  readonly #filesRoot: string | undefined;
  readonly #onError: (error: unknown) => void;
  readonly #pending = new Map<number, ChannelCommand | RouterCommand>();
  // Every live session, by id, to the channel that owns it.
  readonly #owners = new Map<string, CdpChannel>();
  // Sessions a client's attach opened on Chromium's own UI, detached at once: their attach
  // answer must not make them the client's.
  readonly #uiSessions = new Set<string>();
  readonly #channels = new Set<CdpChannel>();
  readonly #closeRequestedListeners: (() => void)[] = [];
  readonly #oversizedListeners: ((message: OversizedMessage) => void)[] = [];
  #nextId = 1;

  constructor(pipe: CdpPipe, options: CdpRouterOptions) {
    this.#pipe = pipe;
    this.#downloadPath = options.downloadPath;
    this.#filesRoot = options.filesRoot;
    this.#onError =
      options.onError ?? ((error) => process.emitWarning(`The DevTools router dropped a message from the browser: ${(error as Error).stack ?? String(error)}`));
    // These run in the pipe's stream handlers: an exception there would end the process.
    pipe.onMessage((json) => this.#guarded(() => this.#receive(json)));
    pipe.onOversized((message) => this.#guarded(() => this.#oversized(message)));
    pipe.onClose(() => this.#guarded(() => this.#browserClosed()));
  }

  #guarded(handle: () => void): void {
    try {
      handle();
    } catch (error) {
      this.#onError(error);
    }
  }

  /** Whether the browser's pipe has closed. */
  get closed(): boolean {
    return this.#pipe.closed;
  }

  /** How many channels are open. */
  get channelCount(): number {
    return this.#channels.size;
  }

  /**
   * Sends a command on the browser's root session (the router's own, never a client's), or
   * on `sessionId`, a session the router itself attached: none of the checks a client's
   * commands pass applies.
   */
  call(method: string, params: object = {}, sessionId?: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      this.#pending.set(id, { kind: "router", method, resolve, reject });
      if (!this.#pipe.send(JSON.stringify(sessionId === undefined ? { id, method, params } : { id, method, params, sessionId }))) {
        this.#pending.delete(id);
        reject(new CdpRouterError(`The browser has closed; ${method} was not sent.`));
      }
    });
  }

  /** Opens a channel: a new browser-target session for one client. */
  async openChannel(options: CdpChannelOptions = {}): Promise<CdpChannel> {
    const { sessionId } = await this.call("Target.attachToBrowserTarget");
    if (typeof sessionId !== "string") throw new CdpRouterError("Target.attachToBrowserTarget answered without a session id.");
    const channel = new CdpChannel(this, sessionId, options);
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

  /**
   * @internal A client's command, already checked (and, from a client's text, depth-checked).
   * `paramsText` is the command's own JSON of its `params`, relayed as it is unless the
   * router inspects that method's params; without it the params are serialized here.
   */
  forward(channel: CdpChannel, command: ClientCommand, paramsText?: string): void {
    const { id: clientId, method } = command;
    const observer = channel.commands;
    const report = observer === undefined ? "ignore" : observer.report(method);
    if (report === "excluded") channel.excludedCommands++;
    const sentAt = report === "report" ? performance.now() : undefined;
    // Answered in the session it was sent on, as Chromium answers: a client routes an
    // answer by its session, and one arriving in another session has no caller there.
    const refuse = (error: NonNullable<ProtocolMessage["error"]>) => {
      channel.refuse(clientId, command.sessionId, error);
      if (sentAt !== undefined) observer?.done({ method, sessionId: command.sessionId, durationMs: performance.now() - sentAt, outcome: "refused" });
    };
    const refused = this.#sessionRefusal(channel, command);
    if (refused !== undefined) {
      refuse(refused);
      return;
    }
    const verdict = judgeCommand(method, command.params, { downloadPath: this.#downloadPath, filesRoot: this.#filesRoot });
    if (verdict.kind === "refuse") {
      refuse({ code: SERVER_ERROR, message: verdict.message });
      return;
    }
    if (this.#pipe.backlogBytes > MAX_BACKLOG_BYTES) {
      // Clients send as fast as their sockets allow; the browser reads one command at a time.
      refuse({ code: SERVER_ERROR, message: BACKLOG_REFUSAL });
      return;
    }
    if (method === "Browser.close") {
      channel.deliver(command.sessionId === undefined ? { id: clientId, result: {} } : { id: clientId, result: {}, sessionId: command.sessionId });
      for (const listener of this.#closeRequestedListeners) listener();
      return;
    }
    if (channel.maxPending !== undefined && channel.pendingCommands >= channel.maxPending) {
      // Each command awaiting an answer holds memory here until the browser answers, which may be never.
      refuse({
        code: SERVER_ERROR,
        message: `This client already has ${channel.maxPending} commands awaiting the browser's answer, the most this service allows; this one was not sent. Wait for answers before sending more.`,
      });
      return;
    }
    const id = this.#nextId++;
    this.#pending.set(
      id,
      sentAt === undefined
        ? { kind: "channel", channel, clientId, method }
        : { kind: "channel", channel, clientId, method, sentAt, clientSession: command.sessionId },
    );
    channel.pendingCommands++;
    // The command is written anew from what was parsed: nothing of the client's text but
    // its params (valid JSON, so without a raw NUL that would end the message early on the
    // NUL-delimited pipe and start one of the client's choosing on the router's session).
    const params =
      paramsText !== undefined && !paramsInspected(method) ? paramsText : verdict.params === undefined ? undefined : JSON.stringify(verdict.params);
    const sessionId = command.sessionId ?? channel.browserSessionId;
    const out = `{"id":${id},"method":${JSON.stringify(method)},"sessionId":${JSON.stringify(sessionId)}${params === undefined ? "" : `,"params":${params}`}}`;
    if (!this.#pipe.send(out)) {
      this.#settled(id);
      refuse({ code: SERVER_ERROR, message: "The browser has closed." });
    }
  }

  /** @internal Detaches a channel's browser session (and with it every child session). */
  release(channel: CdpChannel): void {
    if (!this.#channels.delete(channel)) return;
    this.#forget(channel);
    this.#detach(channel.browserSessionId);
  }

  /**
   * Detaches `sessionId` through the session that attached it (`parent`; the root when
   * omitted). Nobody waits for the answer: the session is gone for its client either way.
   */
  #detach(sessionId: string, parent?: string): void {
    if (this.#pipe.closed) return;
    const id = this.#nextId++;
    this.#pending.set(id, { kind: "router", method: "Target.detachFromTarget", resolve: () => undefined, reject: () => undefined });
    const command = { id, method: "Target.detachFromTarget", params: { sessionId } };
    this.#pipe.send(JSON.stringify(parent === undefined ? command : { ...command, sessionId: parent }));
  }

  /** Settles a pending command: gone from the table and from its channel's count. */
  #settled(id: number): ChannelCommand | RouterCommand | undefined {
    const pending = this.#pending.get(id);
    if (pending === undefined) return undefined;
    this.#pending.delete(id);
    if (pending.kind === "channel") pending.channel.pendingCommands--;
    return pending;
  }

  /** Tells a reported command's observer how it ended, from the answer's text (`"error"` right after its id, as Chromium writes it). */
  #observed(pending: ChannelCommand, json: string, headLength: number): void {
    if (pending.sentAt === undefined) return;
    pending.channel.commands?.done({
      method: pending.method,
      sessionId: pending.clientSession,
      durationMs: performance.now() - pending.sentAt,
      outcome: json.startsWith('"error"', headLength) ? "error" : "ok",
    });
  }

  /** @internal Whether `sessionId` is one of `channel`'s sessions. */
  owns(channel: CdpChannel, sessionId: string): boolean {
    return this.#owners.get(sessionId) === channel;
  }

  #sessionRefusal(channel: CdpChannel, command: ClientCommand): ProtocolMessage["error"] | undefined {
    if (command.sessionId !== undefined && this.#owners.get(command.sessionId) !== channel) {
      return { code: SESSION_NOT_FOUND, message: "Session with given id not found." };
    }
    const named = command.params?.sessionId;
    if (SESSION_PARAM_METHODS.has(command.method) && named !== undefined && (typeof named !== "string" || this.#owners.get(named) !== channel)) {
      return { code: SESSION_NOT_FOUND, message: "No session with given id found." };
    }
    return undefined;
  }

  #receive(json: string): void {
    if (this.#relayed(json)) return;
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
    if (typeof message !== "object" || message === null) return;
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
      if (isBrowserUi(params.targetInfo)) {
        // Chromium's own UI pages (tab search, the omnibox popup) hold privileged bindings
        // (chrome.send, Mojo) that open any URL, file: and chrome: included, past the
        // URL rules: no client gets a session there. It is detached, never announced.
        this.#uiSessions.add(params.sessionId);
        this.#detach(params.sessionId, sessionId);
        return;
      }
      this.#own(owner, params.sessionId);
    } else if (message.method === "Target.detachedFromTarget" && typeof params.sessionId === "string") {
      this.#uiSessions.delete(params.sessionId);
      this.#owners.delete(params.sessionId);
      owner.sessions.delete(params.sessionId);
    }
    if (sessionId === owner.browserSessionId) delete message.sessionId;
    owner.deliver(message);
  }

  /**
   * Relays a message to the channel it belongs to without parsing it, when the router
   * needs nothing from inside it: an answer to a client's command other than an attach,
   * or an event other than `Target.*` of a client's session. That is nearly everything a
   * browser sends, and a client can make it send a lot (trace events in 64 KB chunks,
   * large values): parsing and serializing it again would cost the server's one thread
   * for every other tenant, past any budget of what the client itself sends. Returns
   * whether the message was handled (relayed, or dropped as nobody's).
   */
  #relayed(json: string): boolean {
    const response = RESPONSE_HEAD.exec(json);
    if (response) {
      const id = Number(response[1]);
      const waiting = this.#pending.get(id);
      if (!waiting) return true;
      if (waiting.kind === "router" || ATTACH_METHODS.has(waiting.method)) return false;
      const sessionId = SESSION_SUFFIX.exec(json.slice(-EDGE_CHARS))?.[1];
      this.#settled(id);
      this.#observed(waiting, json, response[0].length);
      const { channel, clientId } = waiting;
      if (!this.#channels.has(channel)) return true;
      const renumbered = `{"id":${clientId},${json.slice(response[0].length)}`;
      channel.deliver(sessionId === channel.browserSessionId ? withoutSession(renumbered, sessionId) : renumbered);
      return true;
    }
    const event = EVENT_HEAD.exec(json);
    if (!event || (event[1] as string).startsWith("Target.")) return false;
    const sessionId = SESSION_SUFFIX.exec(json.slice(-EDGE_CHARS))?.[1];
    // No session at its end: the router's root session, or a shape to read in full.
    if (sessionId === undefined) return false;
    const owner = this.#owners.get(sessionId);
    if (owner) owner.deliver(sessionId === owner.browserSessionId ? withoutSession(json, sessionId) : json);
    return true;
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
      const waiting = this.#pending.get(id);
      if (!waiting) return;
      if (waiting.kind === "router") {
        this.#respond(id, JSON.parse(json) as ProtocolMessage);
        return;
      }
      const pending = this.#settled(id) as ChannelCommand;
      this.#observed(pending, json, response[0].length);
      const { channel } = pending;
      if (!this.#channels.has(channel)) return;
      const renumbered = `{"id":${pending.clientId},${json.slice(response[0].length)}`;
      channel.deliver(sessionId === channel.browserSessionId ? withoutSession(renumbered, sessionId) : renumbered);
      return;
    }
    // A large event of the root session (the router's own) concerns no client.
    const owner = sessionId === undefined ? undefined : this.#owners.get(sessionId);
    if (!owner || sessionId === undefined) return;
    // An attach is the owner's new session however large its target info: else the client
    // could not use it, and a target waiting for the debugger would wait for ever.
    const attached = ATTACHED_HEAD.exec(json.slice(0, EDGE_CHARS))?.[1];
    if (attached !== undefined) this.#own(owner, attached);
    owner.deliver(sessionId === owner.browserSessionId ? withoutSession(json, sessionId) : json);
  }

  #respond(id: number, message: ProtocolMessage): void {
    const pending = this.#settled(id);
    if (!pending) return;
    if (pending.kind === "router") {
      if (message.error) pending.reject(new CdpRouterError(`${pending.method} failed: ${message.error.message}`));
      else pending.resolve((message.result ?? {}) as Record<string, unknown>);
      return;
    }
    const { channel } = pending;
    if (pending.sentAt !== undefined) {
      channel.commands?.done({
        method: pending.method,
        sessionId: pending.clientSession,
        durationMs: performance.now() - pending.sentAt,
        outcome: message.error === undefined ? "ok" : "error",
      });
    }
    if (!this.#channels.has(channel)) return;
    if (ATTACH_METHODS.has(pending.method)) {
      const attached = (message.result as { sessionId?: unknown } | undefined)?.sessionId;
      // A session on Chromium's UI was detached when its attach event came: never the client's.
      if (typeof attached === "string" && !this.#uiSessions.has(attached)) this.#own(channel, attached);
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
    channel.pendingCommands = 0;
  }

  #end(channel: CdpChannel, reason: ChannelCloseReason): void {
    if (!this.#channels.delete(channel)) return;
    this.#forget(channel);
    channel.ended(reason);
  }

  #browserClosed(): void {
    for (const pending of this.#pending.values())
      if (pending.kind === "router") pending.reject(new CdpRouterError(`The browser closed before ${pending.method} answered.`));
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
  /** Commands of this channel awaiting the browser's answer at most (see {@link CdpChannelOptions}). */
  readonly maxPending: number | undefined;
  /** @internal Commands of this channel the router sent that the browser has not answered. */
  pendingCommands = 0;
  /** Told of this channel's commands (its browser's telemetry); `undefined`: none. */
  readonly commands: CommandObserver | undefined;
  /** Commands whose method the observer excludes from its reports, counted. */
  excludedCommands = 0;
  readonly #router: CdpRouter;
  readonly #messageListeners: ((message: ChannelMessage) => void)[] = [];
  readonly #closeListeners: ((reason: ChannelCloseReason) => void)[] = [];
  readonly #droppedListeners: ((message: DroppedEvent) => void)[] = [];
  #closed: ChannelCloseReason | undefined;

  /** @internal Made by {@link CdpRouter.openChannel}. */
  constructor(router: CdpRouter, browserSessionId: string, options: CdpChannelOptions = {}) {
    this.#router = router;
    this.browserSessionId = browserSessionId;
    this.maxPending = options.maxPending;
    this.commands = options.commands;
  }

  /** Whether the channel has closed (by its client, or because the browser went away). */
  get closed(): boolean {
    return this.#closed !== undefined;
  }

  /**
   * Sends a client's command. A message that is not a command (the shape check of
   * `cdp/client-command.ts`) is answered with an error and not sent; so is one naming
   * a session the channel does not own.
   */
  send(message: unknown): void {
    if (this.#closed !== undefined) return;
    const parsed = parseClientCommand(message);
    if (!parsed.ok) {
      this.#refuseProblem(parsed);
      return;
    }
    this.#router.forward(this, parsed.command);
  }

  /**
   * Sends a client's command as the client wrote it. The text is walked once for its
   * depth (past `MAX_COMMAND_DEPTH` (200) levels it is refused before anything parses it) and
   * its top-level members, then parsed; the browser receives the command rewritten from
   * what was parsed, with the client's own `params` text unless the router inspects that
   * method. Whatever is wrong is answered with a DevTools error, as {@link send} does.
   * Returns how many characters of JSON structure the text held (0 when it was not
   * scanned), which the budgets charge for.
   */
  sendText(text: string): number {
    if (this.#closed !== undefined) return 0;
    const scan = scanCommandText(text);
    if (!scan.ok) {
      const error =
        scan.problem === "too_deep"
          ? {
              code: INVALID_REQUEST,
              message: `The command nests deeper than ${MAX_COMMAND_DEPTH} levels, which this service refuses before reading it (Chromium itself reads at most 300).`,
            }
          : scan.problem === "too_much_structure"
            ? {
                code: INVALID_REQUEST,
                message: `The command holds more than ${MAX_COMMAND_STRUCTURE} characters of JSON structure (outside strings), which this service refuses before parsing it; send large data as strings.`,
              }
            : { code: PARSE_ERROR, message: "Message is not valid JSON." };
      const { id, sessionId } = refusedMessageIds(text, scan.members);
      this.refuse(id, sessionId, error);
      return scan.structure;
    }
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      const { id, sessionId } = refusedMessageIds(text, scan.members);
      this.refuse(id, sessionId, { code: PARSE_ERROR, message: "Message is not valid JSON." });
      return scan.structure;
    }
    const parsed = parseClientCommand(message);
    if (!parsed.ok) {
      this.#refuseProblem(parsed);
      return scan.structure;
    }
    const params = scan.members.get("params");
    this.#router.forward(this, parsed.command, params === undefined ? undefined : text.slice(params.start, params.end));
    return scan.structure;
  }

  /**
   * Calls `listener` with every message for this channel, in order, already renumbered
   * for the client: its text or an object (see {@link ChannelMessage}).
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

  /**
   * @internal Answers the client's command `id` with `error`, in the session the command
   * named (`undefined`: its browser session, the one without an id), as Chromium answers.
   */
  refuse(id: number, sessionId: string | undefined, error: NonNullable<ProtocolMessage["error"]>): void {
    // A session the channel does not own is answered in its browser session, as Chromium
    // answers a command for a session it does not know: its id is nobody's to echo.
    this.deliver(sessionId === undefined || !this.#router.owns(this, sessionId) ? { id, error } : { id, error, sessionId });
  }

  /** Answers a message that is not a command (`parseClientCommand`'s problem), under its id when usable, else 0. */
  #refuseProblem(parsed: CommandProblem): void {
    this.refuse(parsed.id !== undefined && parsed.id >= 0 ? parsed.id : 0, parsed.sessionId, { code: INVALID_REQUEST, message: parsed.problem });
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

/** The id of a command that could not be parsed, when it is a plain integer; else 0, as Chromium answers what it cannot read. */
// The members a client library writes last, after `params`: Puppeteer writes `id` and
// then `sessionId`, Playwright `sessionId` alone (its `id` comes first).
const TRAILING_MEMBERS = /(?:,"id":(0|[1-9][0-9]{0,15}))?(?:,"sessionId":"([^"\\]{1,128})")?\}$/;

/**
 * The id and session of a message refused before it was parsed, so that the refusal goes
 * back to its caller in its session: the top-level members the scan read, else (a scan
 * stopped inside `params`, too deep or too large) the plain `id` and `sessionId` the
 * text ends with. An id that is not a plain integer is 0; a session that is not a plain
 * string is none.
 */
function refusedMessageIds(text: string, members: ReadonlyMap<string, TextSpan>): { id: number; sessionId: string | undefined } {
  const tail = TRAILING_MEMBERS.exec(text.slice(-200));
  const idSpan = members.get("id");
  const sessionSpan = members.get("sessionId");
  const idText = idSpan === undefined ? tail?.[1] : idSpan.end - idSpan.start > 16 ? undefined : text.slice(idSpan.start, idSpan.end);
  // A session id the router echoes is a JSON string of plain characters: the text between its quotes.
  const sessionJson = sessionSpan === undefined || sessionSpan.end - sessionSpan.start > 130 ? undefined : text.slice(sessionSpan.start, sessionSpan.end);
  const sessionText = sessionSpan === undefined ? tail?.[2] : sessionJson?.startsWith('"') && sessionJson.endsWith('"') ? sessionJson.slice(1, -1) : undefined;
  const id = idText !== undefined && /^(0|[1-9][0-9]*)$/.test(idText) && Number.isSafeInteger(Number(idText)) ? Number(idText) : 0;
  return { id, sessionId: plainSessionId(sessionText) };
}
