import { limits as specLimits } from "@browser-service/types";
import type { FastifyBaseLogger } from "fastify";
import type { LiveViewAccess } from "../cdp/browser-token.js";
import { type CdpConnection, CdpProtocolError } from "../cdp/cdp-connection.js";
import { scanCommandText } from "../cdp/command-text.js";
import { MessageBudget, STRUCTURE_COST } from "../cdp/message-budget.js";
import { ApiError, PayloadTooLargeError } from "../http/api-errors.js";
import type { BrowserWebMcp } from "../webmcp/browser-webmcp.js";
import { inputProblems, MAX_INPUT_DEPTH } from "../webmcp/input-rules.js";
import { inputCommand } from "./input-commands.js";
import type { LiveViewLimits } from "./live-view-limits.js";
import { TabScreencast } from "./tab-screencast.js";
import { INPUT_MESSAGES, MAX_TEXT_CHARS, parseViewerMessage, type ViewerMessage, ViewerMessageError } from "./viewer-messages.js";

/** One person watching a browser, as the live view sees their connection. */
export interface LiveViewer {
  /** What their token lets them do. */
  readonly access: LiveViewAccess;
  /** Sends a message (JSON text) in order; never dropped. */
  send(message: string | Buffer): void;
  /** Offers a frame: sent if the viewer has taken the last one, else it replaces a frame still waiting, so a slow viewer skips frames instead of queueing them. */
  offerFrame(frame: Buffer): void;
}

/** A tab as the viewers' tab strip shows it; `title` and `url` are page text. */
interface TabInfo {
  id: string;
  url: string;
  title: string;
}

interface ViewerState {
  tab: string | undefined;
  budget: MessageBudget;
  invocations: Set<AbortController>;
  toolsEtag: string | undefined;
  /** A listing of this viewer is under way; `listAgain`: it asked again meanwhile. */
  listing: boolean;
  listAgain: boolean;
  lastRefusalAt: number;
}

const MAX_TITLE_CHARS = specLimits.schemas.WebMcpToolSource.page_title.maxLength;
const MAX_URL_CHARS = specLimits.schemas.WebMcpToolSource.page_url.maxLength;
const MAX_INPUT_BYTES = specLimits.schemas.WebMcpInvokeRequest.input.maxBytes;
const DEFAULT_TIMEOUT_SEC = specLimits.schemas.WebMcpInvokeRequest.timeout_sec.default;
// Titles change without an event; the strip is read again this often while anyone watches.
const TAB_POLL_MS = 1_000;
// Input commands sent to the browser and not yet answered, for the whole browser; past it input is dropped.
const MAX_PENDING_INPUT = 256;
// A viewer told "rate_limited" or "read_only" hears it at most this often.
const REFUSAL_INTERVAL_MS = 1_000;
// The deepest a viewer's message may be: an invocation's input, inside its request, inside the message.
const MAX_MESSAGE_DEPTH = MAX_INPUT_DEPTH + 2;
// The longest message a watch-only viewer has a use for (a tab to watch, the tools).
const MAX_WATCH_MESSAGE_CHARS = 1024;
// How long a live view waits for the browser's DevTools to answer while it starts.
const START_TIMEOUT_MS = 10_000;
// A tab whose capture could not start is tried this often, this many times (5 s in all).
const CAPTURE_RETRY_MS = 250;
const CAPTURE_ATTEMPTS = 20;
// Pages of Chromium's own (settings, DevTools, its UI): no viewer is shown or sent into them.
const CHROMIUM_PAGE = /^(?:chrome|chrome-untrusted|devtools):/i;

/**
 * The live view of one browser while anyone watches it: one DevTools connection of its
 * own (a channel of the browser's pipe), the tab strip, and a {@link TabScreencast} per
 * tab someone watches, stopped when its last viewer leaves or looks elsewhere. Viewers'
 * input goes to the tab they watch, as the few DevTools commands
 * {@link inputCommand} builds; a watch-only viewer's never does.
 */
export class BrowserLiveView {
  readonly #connection: CdpConnection;
  readonly #limits: LiveViewLimits;
  readonly #webmcp: () => Promise<BrowserWebMcp>;
  readonly #budget: MessageBudget;
  // What the tool lists sent to this browser's viewers may take: four times what they may send.
  readonly #listBudget: MessageBudget;
  readonly #log: FastifyBaseLogger;
  readonly #viewers = new Map<LiveViewer, ViewerState>();
  readonly #casts = new Map<string, TabScreencast>();
  readonly #endListeners: (() => void)[] = [];
  readonly #closeListeners: (() => void)[] = [];
  #tabs: TabInfo[] = [];
  #tabsText = "";
  #poll: NodeJS.Timeout | undefined;
  #pendingInput = 0;
  // The last tool list sent, as a viewer message, for every viewer that asks for that snapshot.
  #toolsMessage: { etag: string; message: Buffer } | undefined;
  #closed = false;

  /**
   * `webmcp` gives the browser's WebMCP, or throws the API's error when the browser no
   * longer runs; `budget` is what all the browser's viewers may send together (bytes, each
   * character of JSON structure counted as {@link STRUCTURE_COST}).
   */
  constructor(connection: CdpConnection, limits: LiveViewLimits, webmcp: () => Promise<BrowserWebMcp>, budget: MessageBudget, log: FastifyBaseLogger) {
    this.#connection = connection;
    this.#budget = budget;
    this.#listBudget = new MessageBudget({ messageRate: 0, byteRate: 4 * limits.byteRate });
    this.#limits = limits;
    this.#webmcp = webmcp;
    this.#log = log;
    connection.onEvent(({ method, params, sessionId }) => {
      if (method === "Page.screencastFrame") this.#castOf(sessionId)?.frame(params);
      else if (method === "Target.detachedFromTarget") this.#castOf(params.sessionId as string | undefined)?.detached();
      else if (method === "Target.targetCreated" || method === "Target.targetDestroyed" || method === "Target.targetInfoChanged") this.#refreshTabsSoon();
    });
    connection.onClose(() => this.#end());
  }

  /** Viewers watching now. */
  get viewerCount(): number {
    return this.#viewers.size;
  }

  /** Tabs being captured now. */
  get screencastCount(): number {
    return this.#casts.size;
  }

  /** Whether the live view has ended (closed by its owner, or the browser ended). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Calls `listener` once when the browser ends under the viewers (not when the last one leaves). */
  onEnd(listener: () => void): void {
    this.#endListeners.push(listener);
  }

  /** Calls `listener` once when the live view closes, for whatever reason. */
  onClose(listener: () => void): void {
    this.#closeListeners.push(listener);
  }

  /** Starts following the browser's tabs; rejects if its DevTools cannot be reached. */
  async start(): Promise<void> {
    // A browser whose DevTools hang (a page can keep Chromium that busy) fails the start
    // rather than holding the viewers waiting for it.
    await this.#connection.send("Target.setDiscoverTargets", { discover: true }, undefined, START_TIMEOUT_MS);
    await this.#refreshTabs(START_TIMEOUT_MS);
    this.#poll = setInterval(() => this.#refreshTabsSoon(), TAB_POLL_MS);
  }

  /** A viewer joins: they get the greeting, the tab strip and the first tab's screen. */
  join(viewer: LiveViewer): void {
    this.#viewers.set(viewer, {
      tab: undefined,
      budget: new MessageBudget({ messageRate: this.#limits.inputRate, byteRate: 0 }),
      invocations: new Set(),
      toolsEtag: undefined,
      listing: false,
      listAgain: false,
      lastRefusalAt: Number.NEGATIVE_INFINITY,
    });
    const maxMessageChars = viewer.access === "watch" ? MAX_WATCH_MESSAGE_CHARS : this.#limits.maxMessageBytes;
    viewer.send(JSON.stringify({ type: "hello", access: viewer.access, max_message_bytes: maxMessageChars, max_text_chars: MAX_TEXT_CHARS }));
    this.#watch(viewer, this.#tabs[0]?.id);
  }

  /**
   * A viewer left: their invocations stop waiting, and a tab nobody watches any more stops
   * being captured. The live view itself ends with {@link close}, which its owner calls
   * once nobody watches.
   */
  leave(viewer: LiveViewer): void {
    const state = this.#viewers.get(viewer);
    if (!state) return;
    this.#viewers.delete(viewer);
    for (const invocation of state.invocations) invocation.abort();
    this.#release(state.tab);
  }

  /** Handles one message of a viewer. */
  receive(viewer: LiveViewer, text: string): void {
    const state = this.#viewers.get(viewer);
    if (!state) return;
    const readOnly = "This live view is watch-only: input and invocations are not sent to the browser.";
    // Everything before the parse costs at most a scan: a message is refused unread when a
    // watch-only viewer could not have a use for its size, or a budget is spent.
    if (viewer.access === "watch" && text.length > MAX_WATCH_MESSAGE_CHARS) {
      this.#refuse(viewer, state, "read_only", readOnly);
      return;
    }
    // Every message counts, switching tabs and asking for tools too: each costs the browser work.
    if (state.budget.msUntilReady() > 0 || this.#budget.msUntilReady() > 0) {
      this.#refuse(
        viewer,
        state,
        "rate_limited",
        `A viewer may send ${this.#limits.inputRate} messages a second, within its browser's byte budget; this one was dropped.`,
      );
      return;
    }
    const scan = scanCommandText(text, MAX_MESSAGE_DEPTH);
    state.budget.charge(text.length);
    // Parsing costs by structure far more than by string data: each character of it is charged as STRUCTURE_COST bytes.
    this.#budget.charge(text.length + scan.structure * (STRUCTURE_COST - 1));
    if (!scan.ok) {
      this.#refuse(
        viewer,
        state,
        "invalid_message",
        scan.problem === "malformed" ? "A message must be JSON." : "The message is nested too deeply or holds too much structure.",
      );
      return;
    }
    let message: ViewerMessage;
    try {
      message = parseViewerMessage(text);
    } catch (error) {
      if (!(error instanceof ViewerMessageError)) throw error;
      this.#refuse(viewer, state, error.code, error.message);
      return;
    }
    if (INPUT_MESSAGES.has(message.type) && viewer.access === "watch") {
      this.#refuse(viewer, state, "read_only", readOnly);
      return;
    }
    switch (message.type) {
      case "select":
        if (this.#tabs.some((tab) => tab.id === message.tab)) this.#watch(viewer, message.tab);
        else viewer.send(JSON.stringify({ type: "error", code: "tab_not_found", message: "That tab is not open any more." }));
        return;
      case "tools":
        this.#sendTools(viewer, state);
        return;
      case "invoke":
        this.#invoke(viewer, state, message);
        return;
      default:
        this.#input(viewer, state, message);
    }
  }

  /** Ends the live view: every capture stops and its DevTools connection closes. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#poll);
    for (const state of this.#viewers.values()) for (const invocation of state.invocations) invocation.abort();
    this.#casts.clear();
    // Closing the channel detaches its sessions, which ends their screencasts.
    this.#connection.close().catch((error: unknown) => this.#log.warn({ err: error }, "could not close a live view's DevTools connection"));
    for (const listener of this.#closeListeners) listener();
  }

  #end(): void {
    const viewersLeft = this.#viewers.size > 0;
    this.close();
    if (viewersLeft) for (const listener of this.#endListeners) listener();
  }

  #castOf(sessionId: string | undefined): TabScreencast | undefined {
    if (sessionId === undefined) return undefined;
    for (const cast of this.#casts.values()) if (cast.sessionId === sessionId) return cast;
    return undefined;
  }

  /** Points a viewer at a tab (or at none), capturing it if nobody did. */
  #watch(viewer: LiveViewer, tabId: string | undefined): void {
    const state = this.#viewers.get(viewer);
    if (!state || this.#closed) return;
    const previous = state.tab;
    state.tab = tabId;
    viewer.send(this.#tabsMessage(tabId));
    if (previous !== tabId) this.#release(previous);
    if (tabId === undefined) return;
    const cast = this.#casts.get(tabId);
    if (!cast) this.#capture(tabId, 0);
    else if (cast.lastFrame !== undefined) viewer.offerFrame(cast.lastFrame);
  }

  /**
   * Starts capturing a tab. A tab in the middle of its first navigation has no page to
   * capture yet ("Not attached to an active page"), so a failed start is tried again a
   * little later, while anyone still watches the tab, a bounded number of times.
   */
  #capture(tabId: string, attempt: number): void {
    const started = new TabScreencast(this.#connection, tabId, this.#limits, (frame) => this.#fanOut(tabId, frame));
    this.#casts.set(tabId, started);
    started.start().catch((error: unknown) => {
      if (this.#casts.get(tabId) !== started) return;
      this.#casts.delete(tabId);
      if (this.#closed) return;
      if (attempt + 1 >= CAPTURE_ATTEMPTS) {
        this.#log.warn({ err: error, tab: tabId }, "could not capture a tab for the live view");
        return;
      }
      setTimeout(() => {
        if (!this.#closed && !this.#casts.has(tabId) && this.#watched(tabId)) this.#capture(tabId, attempt + 1);
      }, CAPTURE_RETRY_MS);
    });
  }

  #watched(tabId: string): boolean {
    for (const state of this.#viewers.values()) if (state.tab === tabId) return true;
    return false;
  }

  /** Stops capturing a tab nobody watches any more. */
  #release(tabId: string | undefined): void {
    if (tabId === undefined || this.#watched(tabId)) return;
    const cast = this.#casts.get(tabId);
    this.#casts.delete(tabId);
    cast?.stop().catch((error: unknown) => this.#log.debug({ err: error }, "could not stop a live view capture"));
  }

  #fanOut(tabId: string, frame: Buffer): void {
    for (const [viewer, state] of this.#viewers) if (state.tab === tabId) viewer.offerFrame(frame);
  }

  #tabsMessage(selected: string | undefined): string {
    return `{"type":"tabs","selected":${JSON.stringify(selected ?? null)},"tabs":${this.#tabsText || "[]"}}`;
  }

  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;

  #refreshTabsSoon(): void {
    if (this.#closed) return;
    if (this.#refreshing) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = this.#refreshTabs()
      .catch((error: unknown) => {
        if (!this.#closed) this.#log.debug({ err: error }, "could not read the tabs for the live view");
      })
      .finally(() => {
        this.#refreshing = undefined;
        if (this.#refreshAgain) {
          this.#refreshAgain = false;
          this.#refreshTabsSoon();
        }
      });
  }

  async #refreshTabs(timeoutMs?: number): Promise<void> {
    const { targetInfos } = await this.#connection.send<{ targetInfos: { targetId: string; type: string; url: string; title: string }[] }>(
      "Target.getTargets",
      {},
      undefined,
      timeoutMs,
    );
    if (this.#closed) return;
    const tabs = targetInfos
      .filter((info) => info.type === "page" && !CHROMIUM_PAGE.test(info.url))
      .map((info) => ({ id: info.targetId, url: cut(info.url, MAX_URL_CHARS), title: cut(info.title, MAX_TITLE_CHARS) }));
    const text = JSON.stringify(tabs);
    if (text === this.#tabsText) return;
    this.#tabs = tabs;
    this.#tabsText = text;
    for (const [viewer, state] of this.#viewers) {
      // A viewer whose tab closed moves to the first one left.
      if (state.tab === undefined || !tabs.some((tab) => tab.id === state.tab)) this.#watch(viewer, tabs[0]?.id);
      else viewer.send(this.#tabsMessage(state.tab));
    }
  }

  #input(viewer: LiveViewer, state: ViewerState, message: Extract<ViewerMessage, { type: "mouse" | "wheel" | "key" | "text" }>): void {
    const sessionId = state.tab === undefined ? undefined : this.#casts.get(state.tab)?.sessionId;
    if (sessionId === undefined) return;
    if (this.#pendingInput >= MAX_PENDING_INPUT) {
      this.#refuse(viewer, state, "rate_limited", "The browser is not keeping up with input; this message was dropped.");
      return;
    }
    const { method, params } = inputCommand(message);
    this.#pendingInput++;
    this.#connection
      .send(method, params, sessionId)
      .catch((error: unknown) => {
        if (error instanceof CdpProtocolError) viewer.send(JSON.stringify({ type: "error", code: "input_failed", message: error.message.slice(0, 300) }));
      })
      .finally(() => this.#pendingInput--);
  }

  /**
   * Answers a viewer's `tools`: one listing of a viewer at a time (asking again meanwhile
   * asks once more when it ends), "unchanged" when the viewer has the current one, and the
   * lists sent to a browser's viewers take their turns within a byte rate, so that small
   * requests cannot make the server send without bound. The message is built once per
   * snapshot.
   */
  #sendTools(viewer: LiveViewer, state: ViewerState): void {
    if (state.listing) {
      state.listAgain = true;
      return;
    }
    const wait = this.#listBudget.msUntilReady();
    if (wait > 0) {
      // Lists this browser's viewers were sent are still being paid for: this one waits its turn.
      state.listing = true;
      setTimeout(() => {
        state.listing = false;
        if (!this.#closed && this.#viewers.has(viewer)) this.#sendTools(viewer, state);
      }, wait);
      return;
    }
    state.listing = true;
    this.#webmcp()
      .then((webmcp) => webmcp.listTools(state.toolsEtag))
      .then(
        ({ json, etag }) => {
          if (!this.#viewers.has(viewer)) return;
          if (json === undefined || etag === state.toolsEtag) {
            viewer.send('{"type":"tools","unchanged":true}');
            return;
          }
          state.toolsEtag = etag;
          if (this.#toolsMessage?.etag !== etag) {
            this.#toolsMessage = { etag, message: Buffer.concat([Buffer.from('{"type":"tools","snapshot":'), json, Buffer.from("}")]) };
          }
          this.#listBudget.charge(this.#toolsMessage.message.length);
          viewer.send(this.#toolsMessage.message);
        },
        (error: unknown) => {
          if (this.#viewers.has(viewer)) viewer.send(JSON.stringify({ type: "tools", error: errorBody(error, this.#log) }));
        },
      )
      .finally(() => {
        state.listing = false;
        if (state.listAgain && this.#viewers.has(viewer)) {
          state.listAgain = false;
          this.#sendTools(viewer, state);
        }
      });
  }

  #invoke(viewer: LiveViewer, state: ViewerState, message: Extract<ViewerMessage, { type: "invoke" }>): void {
    const answer = (body: Record<string, unknown>) => {
      if (this.#viewers.has(viewer)) viewer.send(JSON.stringify({ type: "invocation", id: message.id, ...body }));
    };
    if (state.invocations.size >= this.#limits.maxInvocations) {
      answer({ error: { status: 429, code: "rate_limited", message: `At most ${this.#limits.maxInvocations} invocations of one viewer run at once.` } });
      return;
    }
    const { tool_ref, input, timeout_sec } = message.request;
    const problems = inputProblems(input);
    if (problems.length > 0) {
      answer({ error: { status: 400, code: "bad_request", message: problems[0]?.message ?? "The input is invalid." } });
      return;
    }
    const bytes = Buffer.byteLength(JSON.stringify(input));
    if (bytes > MAX_INPUT_BYTES) {
      answer({ error: errorBody(new PayloadTooLargeError(`The serialized input is ${bytes} bytes; the limit is ${MAX_INPUT_BYTES}.`)) });
      return;
    }
    const gone = new AbortController();
    state.invocations.add(gone);
    this.#webmcp()
      .then((webmcp) => webmcp.invoke(tool_ref, input, timeout_sec ?? DEFAULT_TIMEOUT_SEC, gone.signal))
      .then(
        (result) => answer({ result }),
        (error: unknown) => answer({ error: errorBody(error, this.#log) }),
      )
      .finally(() => state.invocations.delete(gone));
  }

  #refuse(viewer: LiveViewer, state: ViewerState, code: string, message: string): void {
    const now = performance.now();
    if (now - state.lastRefusalAt < REFUSAL_INTERVAL_MS) return;
    state.lastRefusalAt = now;
    viewer.send(JSON.stringify({ type: "error", code, message }));
  }
}

/** An error as the viewer shows it: the API's status and body (with `invocation_id` for outcome_unknown; an unexpected one is a 500 that says nothing more, and is logged). */
function errorBody(error: unknown, log?: FastifyBaseLogger): Record<string, unknown> {
  if (error instanceof ApiError) return { status: error.status, ...error.toBody() };
  log?.error({ err: error }, "a live view request failed");
  return { status: 500, code: "internal_error", message: "The server could not complete this request." };
}

function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
