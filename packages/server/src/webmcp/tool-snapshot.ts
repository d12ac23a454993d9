import type { PageFrame, PageFrameTree, TargetInfo } from "./cdp-protocol.js";
import { PAGE_DATA_LIMITS, toToolDefinition, type ToolDefinition } from "./page-data.js";
import type { SourceNumbers } from "./source-numbers.js";
import type { ToolRefTable } from "./tool-refs.js";

/** A tab: one page target and its DevTools session. */
export interface TabRecord {
  targetId: string;
  /** The small number `source.tab_id` shows. */
  tabNumber: number;
  /** The top-level document's URL, without its fragment. */
  url: string;
  /** The window the tab is in, once the browser said (`undefined` if it could not). */
  windowId: Promise<number | undefined>;
}

/** A frame known to one session, and the URL of its current document. */
interface FrameRecord {
  parentId: string | undefined;
  url: string;
  /** Known only from the target's info at attach time, which a redirect may have outdated. */
  provisional: boolean;
}

/**
 * One attached target: a tab's page, or an out-of-process iframe of a tab. Tools are
 * reported, and invoked, on the session that runs their frame.
 */
export interface SessionRecord {
  sessionId: string;
  targetId: string;
  kind: "page" | "iframe";
  tab: TabRecord;
  parent: SessionRecord | undefined;
  children: Set<SessionRecord>;
  frames: Map<string, FrameRecord>;
  /** By frame id and tool name (a document registers a name once). */
  registrations: Map<string, Registration>;
}

/** One live tool registration: a name in one document of one frame. */
export interface Registration {
  ref: string;
  tool: ToolDefinition;
  frameId: string;
  session: SessionRecord;
  /** Order of arrival, for a stable listing. */
  serial: number;
}

/** The parts of the logger the snapshot writes to. */
export interface SnapshotLog {
  warn(details: object, message: string): void;
}

/** Something an invocation may be waiting on is gone: a whole session (`frameId` undefined) or one frame of it. */
export type GoneListener = (sessionId: string, frameId: string | undefined) => void;

const withoutFragment = (url: string): string => {
  const hash = url.indexOf("#");
  return hash === -1 ? url : url.slice(0, hash);
};

const registrationKey = (frameId: string, name: string): string => `${frameId}\n${name}`;

/**
 * The browser-wide snapshot of WebMCP tools, kept current from DevTools events rather
 * than rebuilt per request: `toolsAdded`/`toolsRemoved`, and the target and frame
 * lifecycle that ends documents (navigation, frame removal, detach, renderer crash).
 * Each registration holds one `tool_ref`; whatever ends the registration retires it.
 */
export class ToolSnapshot {
  readonly #refs: ToolRefTable<Registration>;
  readonly #numbers: SourceNumbers;
  readonly #log: SnapshotLog;
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #goneListeners = new Set<GoneListener>();
  #registrationCount = 0;
  #serial = 0;
  #warnedFull = false;

  constructor(refs: ToolRefTable<Registration>, numbers: SourceNumbers, log: SnapshotLog) {
    this.#refs = refs;
    this.#numbers = numbers;
    this.#log = log;
  }

  /** Calls `listener` whenever a session or a frame goes away for good; returns the function that stops it. */
  onGone(listener: GoneListener): () => void {
    this.#goneListeners.add(listener);
    return () => this.#goneListeners.delete(listener);
  }

  /** Records a newly attached tab. */
  addPageSession(sessionId: string, info: TargetInfo, windowId: Promise<number | undefined>): SessionRecord {
    const tab: TabRecord = { targetId: info.targetId, tabNumber: this.#numbers.tab(info.targetId), url: withoutFragment(info.url), windowId };
    return this.#addSession({ sessionId, targetId: info.targetId, kind: "page", tab, parent: undefined });
  }

  /** Records an out-of-process iframe attached under `parentSessionId`; `undefined` if that session is gone. */
  addFrameSession(parentSessionId: string, sessionId: string, info: TargetInfo): SessionRecord | undefined {
    const parent = this.#sessions.get(parentSessionId);
    if (!parent) return undefined;
    const session = this.#addSession({ sessionId, targetId: info.targetId, kind: "iframe", tab: parent.tab, parent });
    // An iframe target's id is its frame's id.
    session.frames.set(info.targetId, { parentId: undefined, url: withoutFragment(info.url), provisional: true });
    parent.children.add(session);
    return session;
  }

  /** Learns the frames of a session that events have not described yet. */
  applyFrameTree(sessionId: string, tree: PageFrameTree): void {
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    const visit = (node: PageFrameTree): void => {
      const known = session.frames.get(node.frame.id);
      // Events that arrived meanwhile are newer than the tree.
      if (!known || known.provisional) this.#setFrame(session, node.frame);
      for (const child of node.childFrames ?? []) visit(child);
    };
    visit(tree);
  }

  /** A frame committed a new document: the old document's registrations end. */
  frameNavigated(sessionId: string, frame: PageFrame): void {
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    for (const frameId of this.#subtree(session, frame.id)) {
      this.#dropFrameRegistrations(session, frameId);
      if (frameId !== frame.id) session.frames.delete(frameId);
    }
    this.#setFrame(session, frame);
  }

  /** A frame's URL changed within its document (fragment, history API): registrations stay. */
  navigatedWithinDocument(sessionId: string, frameId: string, url: string): void {
    const session = this.#sessions.get(sessionId);
    const frame = session?.frames.get(frameId);
    if (!session || !frame) return;
    frame.url = withoutFragment(url);
    if (session.kind === "page" && frame.parentId === undefined) session.tab.url = frame.url;
  }

  /**
   * A frame left this session: `remove` ends it and its subtree; `swap` hands it to
   * another process (a navigation), whose own session reports its tools.
   */
  frameDetached(sessionId: string, frameId: string, reason: string): void {
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    const subtree = this.#subtree(session, frameId);
    for (const id of subtree) {
      this.#dropFrameRegistrations(session, id);
      session.frames.delete(id);
    }
    if (reason === "swap") return;
    for (const id of subtree) {
      this.#numbers.forgetFrame(id);
      this.#emitGone(session.sessionId, id);
    }
  }

  /** The renderer of a session crashed: every document in it, and below it, is gone. */
  documentsLost(sessionId: string): void {
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    for (const each of this.#sessionTree(session)) {
      this.#dropAllRegistrations(each);
      this.#emitGone(each.sessionId, undefined);
    }
  }

  /** A session detached (tab closed, iframe gone or moved): it and the sessions below it are gone. */
  removeSession(sessionId: string): void {
    const session = this.#sessions.get(sessionId);
    if (session) this.#removeTree(session, session.kind === "page");
  }

  /**
   * Everything is gone from sight (the connection to the browser closed). Tab and frame
   * numbers are kept: the tabs may still be open when the browser is attached again.
   */
  clear(): void {
    for (const session of [...this.#sessions.values()]) if (session.parent === undefined) this.#removeTree(session, false);
    this.#sessions.clear();
  }

  /** `WebMCP.toolsAdded` on a session. */
  toolsAdded(sessionId: string, tools: unknown): void {
    const session = this.#sessions.get(sessionId);
    if (!session || !Array.isArray(tools)) return;
    for (const raw of tools) {
      const frameId = (raw as { frameId?: unknown } | null)?.frameId;
      if (typeof frameId !== "string") continue;
      const checked = toToolDefinition(raw);
      if (!checked.ok) {
        this.#log.warn({ frameId, reason: checked.reason }, "a page registered a WebMCP tool the service does not list");
        continue;
      }
      const key = registrationKey(frameId, checked.tool.name);
      const previous = session.registrations.get(key);
      if (previous) {
        // The browser reports a new registration under a live name: the old one ended unseen.
        this.#retire(previous);
        session.registrations.delete(key);
      }
      if (this.#registrationCount >= PAGE_DATA_LIMITS.registrationsPerBrowser) {
        if (!this.#warnedFull) this.#log.warn({ limit: PAGE_DATA_LIMITS.registrationsPerBrowser }, "the browser has too many WebMCP registrations; later ones are not listed");
        this.#warnedFull = true;
        continue;
      }
      const registration: Registration = { ref: "", tool: checked.tool, frameId, session, serial: this.#serial++ };
      registration.ref = this.#refs.issue(registration);
      session.registrations.set(key, registration);
      this.#registrationCount++;
    }
  }

  /** `WebMCP.toolsRemoved` on a session. */
  toolsRemoved(sessionId: string, tools: unknown): void {
    const session = this.#sessions.get(sessionId);
    if (!session || !Array.isArray(tools)) return;
    for (const raw of tools) {
      const { name, frameId } = (raw ?? {}) as { name?: unknown; frameId?: unknown };
      if (typeof name !== "string" || typeof frameId !== "string") continue;
      const key = registrationKey(frameId, name);
      const registration = session.registrations.get(key);
      if (!registration) continue;
      this.#retire(registration);
      session.registrations.delete(key);
    }
  }

  /** Whether the registration is still in the snapshot. */
  isRegistered(registration: Registration): boolean {
    return registration.session.registrations.get(registrationKey(registration.frameId, registration.tool.name)) === registration && this.#sessions.get(registration.session.sessionId) === registration.session;
  }

  /** Drops one registration the browser says no longer exists. */
  forget(registration: Registration): void {
    if (!this.isRegistered(registration)) return;
    this.#retire(registration);
    registration.session.registrations.delete(registrationKey(registration.frameId, registration.tool.name));
  }

  /** Every live registration, by tab and then in order of arrival. */
  registrations(): Registration[] {
    const all: Registration[] = [];
    for (const session of this.#sessions.values()) all.push(...session.registrations.values());
    return all.sort((a, b) => a.session.tab.tabNumber - b.session.tab.tabNumber || a.serial - b.serial);
  }

  /** Whether a registration is a top-level one (its frame is the tab's main frame). */
  isTopLevel(registration: Registration): boolean {
    const { session, frameId } = registration;
    if (session.kind !== "page") return false;
    const frame = session.frames.get(frameId);
    // Chromium gives a tab's main frame the id of its page target.
    return frame === undefined ? frameId === session.targetId : frame.parentId === undefined;
  }

  /** The URL of a registration's frame document, without its fragment. */
  frameUrl(registration: Registration): string {
    return registration.session.frames.get(registration.frameId)?.url ?? "";
  }

  #removeTree(session: SessionRecord, tabClosed: boolean): void {
    for (const each of this.#sessionTree(session).reverse()) {
      this.#dropAllRegistrations(each);
      this.#sessions.delete(each.sessionId);
      // An iframe session also ends when its frame moves back into its parent's process,
      // where the frame lives on under the same number.
      if (tabClosed) for (const frameId of each.frames.keys()) this.#numbers.forgetFrame(frameId);
      this.#emitGone(each.sessionId, undefined);
    }
    session.parent?.children.delete(session);
    if (tabClosed) this.#numbers.forgetTab(session.targetId);
  }

  #addSession(fields: Pick<SessionRecord, "sessionId" | "targetId" | "kind" | "tab" | "parent">): SessionRecord {
    const session: SessionRecord = { ...fields, children: new Set(), frames: new Map(), registrations: new Map() };
    this.#sessions.set(session.sessionId, session);
    return session;
  }

  #setFrame(session: SessionRecord, frame: PageFrame): void {
    const url = withoutFragment(typeof frame.url === "string" ? frame.url : "");
    const parentId = typeof frame.parentId === "string" ? frame.parentId : undefined;
    // An iframe session's own frame has a parent in another process; here it is the root.
    const ownRoot = session.kind === "iframe" && frame.id === session.targetId;
    session.frames.set(frame.id, { parentId: ownRoot ? undefined : parentId, url, provisional: false });
    if (session.kind === "page" && parentId === undefined) session.tab.url = url;
  }

  /** `frameId` and every frame below it in this session. */
  #subtree(session: SessionRecord, frameId: string): string[] {
    const ids = [frameId];
    for (let i = 0; i < ids.length; i++) {
      for (const [id, frame] of session.frames) if (frame.parentId === ids[i]) ids.push(id);
    }
    return ids;
  }

  /** `session` and every session below it, parents first. */
  #sessionTree(session: SessionRecord): SessionRecord[] {
    const tree = [session];
    for (let i = 0; i < tree.length; i++) tree.push(...(tree[i] as SessionRecord).children);
    return tree;
  }

  #dropFrameRegistrations(session: SessionRecord, frameId: string): void {
    for (const [key, registration] of session.registrations) {
      if (registration.frameId !== frameId) continue;
      this.#retire(registration);
      session.registrations.delete(key);
    }
  }

  #dropAllRegistrations(session: SessionRecord): void {
    for (const registration of session.registrations.values()) this.#retire(registration);
    session.registrations.clear();
  }

  #retire(registration: Registration): void {
    this.#refs.retire(registration.ref);
    this.#registrationCount--;
  }

  #emitGone(sessionId: string, frameId: string | undefined): void {
    for (const listener of this.#goneListeners) listener(sessionId, frameId);
  }
}
