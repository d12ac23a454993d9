import { CdpConnection, type CdpDisconnectedError, type CdpEvent, CdpSessionClosedError } from "../cdp/cdp-connection.js";
import type { CdpRouter, DroppedEvent } from "../cdp/cdp-router.js";
import type { PageFrame, PageFrameTree, TargetInfo, ToolInvokedEvent, ToolRespondedEvent } from "./cdp-protocol.js";
import { InvocationEvents } from "./invocation-events.js";
import type { SourceNumbers } from "./source-numbers.js";
import { type TabTitle, TabTitles, type TitlesRead } from "./tab-titles.js";
import type { ToolRefTable } from "./tool-refs.js";
import { type Registration, type RegistryLog, ToolRegistry, withoutFragment } from "./tool-registry.js";
import { readToolsAdded } from "./tools-added-text.js";

/** What an attachment shares with the browser it belongs to, across reconnections. */
export interface AttachmentDeps {
  refs: ToolRefTable<Registration>;
  numbers: SourceNumbers;
  log: RegistryLog;
  /** How long one read of the tab titles serves listings (see {@link TabTitles}). */
  titleMaxAgeMs: number;
}

// Every tab at the browser level, every out-of-process iframe below a tab (or below
// another such iframe), and dedicated workers only to let them run (see below); nothing
// else (the browser's own UI pages).
// A new target waits until it is followed: `WebMCP.enable` replays the tools of the
// target's own (local root) frame only, never those of frames in the same process below
// it, so a same-origin iframe that registered before `enable` would be missing for good.
const AUTO_ATTACH = { autoAttach: true, waitForDebuggerOnStart: true, flatten: true } as const;
const TABS = [{ type: "page" }];
// Dedicated workers too: Chromium holds a page's new workers while any session of it waits
// for debuggers on start, even one whose filter leaves workers out, so each is attached
// here only to be let run and left.
const FRAMES_AND_WORKERS = [{ type: "iframe" }, { type: "worker" }];

/**
 * One DevTools connection to a browser that follows every tab and every
 * out-of-process iframe: it auto-attaches to them (recursively), enables `Page` (frame
 * lifecycle) and `WebMCP` on each (a new target waits until then), and keeps a
 * {@link ToolRegistry} from their events.
 * When the connection closes, everything it tracked is gone.
 */
export class BrowserAttachment {
  /** The connection; invocations are sent through it. */
  readonly connection: CdpConnection;
  /** The tools of every tab and frame, as events describe them. */
  readonly registry: ToolRegistry;
  /** `toolInvoked`/`toolResponded`, by invocation id. */
  readonly invocations = new InvocationEvents();
  /** Resolves when the connection closes. */
  readonly closed: Promise<CdpDisconnectedError>;
  readonly #log: RegistryLog;
  // Targets being set up (Page, frame tree, WebMCP.enable); they settle, never reject.
  readonly #following = new Set<Promise<void>>();
  readonly #titles: TabTitles;

  private constructor(connection: CdpConnection, deps: AttachmentDeps) {
    this.connection = connection;
    this.#log = deps.log;
    this.#titles = new TabTitles(() => this.#readTitles(), { maxAgeMs: deps.titleMaxAgeMs });
    this.registry = new ToolRegistry(deps.refs, deps.numbers, deps.log);
    this.closed = new Promise((resolve) =>
      connection.onClose((error) => {
        this.registry.clear();
        resolve(error);
      }),
    );
    connection.onEvent((event) => this.#handle(event));
    connection.onDropped((event) => this.#dropped(event));
    connection.readLarge("WebMCP.toolsAdded", (json, sessionId) => this.#readToolsAdded(json, sessionId));
  }

  /** Opens a session on the browser's pipe and starts following its tabs. */
  static async open(router: CdpRouter, deps: AttachmentDeps): Promise<BrowserAttachment> {
    const attachment = new BrowserAttachment(await CdpConnection.open(router), deps);
    try {
      // Tabs that already exist are attached too.
      await attachment.connection.send("Target.setAutoAttach", { ...AUTO_ATTACH, filter: TABS });
    } catch (error) {
      await attachment.connection.close();
      throw error;
    }
    return attachment;
  }

  /** The title of every tab, by target id, for a listing at the registry's current version (see {@link TabTitles}). */
  tabTitles(): Promise<TitlesRead> {
    return this.#titles.current(this.registry.version);
  }

  // Titles change without an event, so they are read from the browser.
  async #readTitles(): Promise<Map<string, TabTitle>> {
    const { targetInfos } = await this.connection.send<{ targetInfos: TargetInfo[] }>("Target.getTargets", { filter: TABS });
    return new Map(
      targetInfos.map((info) => [
        info.targetId,
        { title: typeof info.title === "string" ? info.title : "", url: withoutFragment(typeof info.url === "string" ? info.url : "") },
      ]),
    );
  }

  /** Closes the connection. */
  async close(): Promise<void> {
    await this.connection.close();
  }

  #handle({ method, params, sessionId }: CdpEvent): void {
    const registry = this.registry;
    switch (method) {
      case "Target.attachedToTarget":
        this.#attached(sessionId, params.sessionId as string, params.targetInfo as TargetInfo, params.waitingForDebugger === true);
        return;
      case "Target.detachedFromTarget":
        registry.removeSession(params.sessionId as string);
        return;
      case "Inspector.targetCrashed":
        if (sessionId !== undefined) registry.documentsLost(sessionId);
        return;
      case "Page.frameNavigated":
        // Every navigation commits a new document: the launcher turns the back/forward cache off.
        if (sessionId !== undefined) registry.frameNavigated(sessionId, params.frame as PageFrame);
        return;
      case "Page.navigatedWithinDocument":
        if (sessionId !== undefined) registry.navigatedWithinDocument(sessionId, params.frameId as string, params.url as string);
        return;
      case "Page.frameDetached":
        if (sessionId !== undefined) registry.frameDetached(sessionId, params.frameId as string, String(params.reason));
        return;
      case "WebMCP.toolsAdded":
        if (sessionId !== undefined) registry.toolsAdded(sessionId, params.tools);
        return;
      case "WebMCP.toolsRemoved":
        if (sessionId !== undefined) registry.toolsRemoved(sessionId, params.tools);
        return;
      case "WebMCP.toolInvoked":
        this.invocations.invoked(params as unknown as ToolInvokedEvent);
        return;
      case "WebMCP.toolResponded":
        this.invocations.responded(params as unknown as ToolRespondedEvent);
        return;
      default:
        return;
    }
  }

  /**
   * An event too large to relay or read: a `toolsAdded` over the pipe's cap, whose tools
   * are then missing (the snapshot says so), or a `toolResponded` whose output is
   * dropped, which ends its invocation at once with an error text rather than a timeout.
   */
  #dropped(event: DroppedEvent): void {
    const method = /^\{"method":"([^"]+)"/.exec(event.head)?.[1];
    if (method === "WebMCP.toolsAdded" && event.sessionId !== undefined) {
      this.registry.messageDropped(event.sessionId);
    } else if (method === "WebMCP.toolResponded") {
      const invocationId = /"invocationId":"([^"\\]+)"/.exec(event.head)?.[1];
      const status = /"status":"([A-Za-z]+)"/.exec(event.head)?.[1];
      if (invocationId === undefined) return;
      this.invocations.responded({ invocationId, status: status === "Completed" ? "Completed" : "Error", outputDroppedBytes: event.bytes });
    }
  }

  /**
   * A `toolsAdded` too large to parse at once: the tools a frame registered before it was
   * followed, replayed in one message. Read tool by tool, so that the caps, not the
   * message's size, decide which are kept.
   */
  async #readToolsAdded(json: string, sessionId: string | undefined): Promise<void> {
    if (sessionId === undefined) return;
    try {
      const read = await readToolsAdded(
        json,
        (tools) => this.registry.toolsAdded(sessionId, tools),
        () => !this.connection.closed,
      );
      if (!read) this.registry.messageDropped(sessionId);
    } catch (error) {
      this.#log.warn({ err: error }, "could not read a large report of WebMCP tools");
      this.registry.messageDropped(sessionId);
    }
  }

  #attached(parentSessionId: string | undefined, sessionId: string, info: TargetInfo, waiting: boolean): void {
    if (parentSessionId === undefined && info.type === "page") {
      const windowId = this.connection.send<{ windowId: number }>("Browser.getWindowForTarget", { targetId: info.targetId }).then(
        ({ windowId }) => windowId,
        (error: unknown) => {
          this.#log.warn({ targetId: info.targetId, err: error }, "could not read the window of a tab; its tools are not listed");
          return undefined;
        },
      );
      this.registry.addPageSession(sessionId, info, windowId);
    } else if (parentSessionId !== undefined && info.type === "iframe") {
      if (!this.registry.addFrameSession(parentSessionId, sessionId, info)) {
        this.#resume(sessionId, info, waiting);
        return;
      }
    } else {
      this.#resume(sessionId, info, waiting);
      return;
    }
    const following = this.#follow(sessionId)
      .catch((error: unknown) => this.#followFailed(info, error))
      // Whether or not the setup worked: a target left waiting would never load.
      .finally(() => {
        this.#resume(sessionId, info, waiting);
        this.#following.delete(following);
      });
    this.#following.add(following);
  }

  /**
   * Resolves once every target attached so far is followed (WebMCP enabled on it, or its
   * setup failed): from then on a document that loads in one of them, frames in its own
   * process included, has its tools reported as it registers them.
   */
  async followed(): Promise<void> {
    // A target attached later waits for its own setup (waitForDebuggerOnStart).
    await Promise.all([...this.#following]);
  }

  /**
   * Sets up one session. The frame tree is read before `WebMCP.enable`, whose replay of
   * the tools already registered then finds every frame's URL.
   */
  async #follow(sessionId: string): Promise<void> {
    const send = (method: string, params: object = {}) => this.connection.send(method, params, sessionId);
    await Promise.all([send("Target.setAutoAttach", { ...AUTO_ATTACH, filter: FRAMES_AND_WORKERS }), send("Page.enable")]);
    const { frameTree } = (await send("Page.getFrameTree")) as { frameTree: PageFrameTree };
    this.registry.applyFrameTree(sessionId, frameTree);
    await send("WebMCP.enable");
  }

  /** Lets a target that waits for its debuggers run (it runs once every client that made it wait has said so). */
  #resume(sessionId: string, info: TargetInfo, waiting: boolean): void {
    const resumed = waiting ? this.connection.send("Runtime.runIfWaitingForDebugger", {}, sessionId) : Promise.resolve();
    // A worker is attached only so that it runs (see FRAMES_AND_WORKERS): its session is left at once.
    const left = info.type === "worker" ? resumed.then(() => this.connection.send("Target.detachFromTarget", { sessionId })) : resumed;
    left.catch((error: unknown) => this.#followFailed(info, error));
  }

  #followFailed(info: TargetInfo, error: unknown): void {
    // A target that closes while it is being set up is simply gone.
    if (error instanceof CdpSessionClosedError || this.connection.closed) return;
    this.#log.warn({ targetId: info.targetId, err: error }, "could not follow the WebMCP tools of a target");
  }
}
