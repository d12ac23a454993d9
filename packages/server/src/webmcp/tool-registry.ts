import type { ServerLog } from "../observe/server-log.js";
import type { PageFrame, PageFrameTree, TargetInfo } from "./cdp-protocol.js";
import { capText, definitionBytes, type OmissionReason, PAGE_DATA_LIMITS, type ToolDefinition, toToolDefinition } from "./page-data.js";
import type { SourceNumbers } from "./source-numbers.js";
import type { ToolRefTable } from "./tool-refs.js";

/** A tab: one page target and its DevTools session. */
export interface TabRecord {
  targetId: string;
  /** The small number `source.tab_id` shows. */
  tabNumber: number;
  /** The top-level document's URL, without its fragment. */
  url: string;
  /**
   * The registry's version when the tab's top-level document committed (or the tab was
   * first seen): a title the browser was asked for before then may be another document's.
   */
  documentSince: number;
  /** The window the tab is in: `undefined` until the browser said, or if it could not (the tab is not listed then). */
  windowId: number | undefined;
  /** Set while the browser has not said which window the tab is in. */
  windowPending: Promise<void> | undefined;
  /** Live registrations in all of the tab's sessions. */
  registrationCount: number;
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
  /** Live registrations per frame (per current document). */
  documentCounts: Map<string, number>;
  /**
   * Registrations of each frame's current document that are not listed, by reason;
   * the key `""` holds what the session lost as a whole (a message too large to relay).
   */
  omitted: Map<string, Map<OmissionReason, number>>;
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

/** The parts of the logger the registry writes to. */
export type RegistryLog = Pick<ServerLog, "warn">;

/** Something an invocation may be waiting on is gone: a whole session (`frameId` undefined) or one frame of it. */
export type GoneListener = (sessionId: string, frameId: string | undefined) => void;

/** A page-provided URL as the API shows it: without its fragment, cut to the cap. */
export const withoutFragment = (url: string): string => {
  const hash = url.indexOf("#");
  return capText(hash === -1 ? url : url.slice(0, hash), PAGE_DATA_LIMITS.urlChars);
};

const SESSION_WIDE = "";

const registrationKey = (frameId: string, name: string): string => `${frameId}\n${name}`;

/**
 * The browser-wide registry of live WebMCP tool registrations, kept current from
 * DevTools events rather than rebuilt per request: `toolsAdded`/`toolsRemoved`, and the
 * target and frame lifecycle that ends documents (navigation, frame removal, detach,
 * renderer crash). Each listing of `GET .../webmcp/tools` is built from it. Each
 * registration holds one `tool_ref`; whatever ends the registration retires it.
 */
export class ToolRegistry {
  readonly #refs: ToolRefTable<Registration>;
  readonly #numbers: SourceNumbers;
  readonly #log: RegistryLog;
  readonly #sessions = new Map<string, SessionRecord>();
  readonly #goneListeners = new Set<GoneListener>();
  #registrationCount = 0;
  #definitionBytes = 0;
  #serial = 0;
  // Bumped by every method that may change what a listing shows, whether or not it did:
  // an extra bump costs one extra build, a missing one would serve a stale body.
  #version = 0;
  // Each reason is logged once per browser: a hostile page must not flood the log.
  readonly #warned = new Set<OmissionReason>();

  constructor(refs: ToolRefTable<Registration>, numbers: SourceNumbers, log: RegistryLog) {
    this.#refs = refs;
    this.#numbers = numbers;
    this.#log = log;
  }

  /**
   * Changes whenever anything a listing shows may have changed (registrations, omissions,
   * tabs, frames, URLs), never otherwise: two listings built at the same version from the
   * same tab titles are the same. A new registry (after a reconnection) starts again at 0.
   */
  get version(): number {
    return this.#version;
  }

  /** Calls `listener` whenever a session or a frame goes away for good; returns the function that stops it. */
  onGone(listener: GoneListener): () => void {
    this.#goneListeners.add(listener);
    return () => this.#goneListeners.delete(listener);
  }

  /** Records a newly attached tab. */
  addPageSession(sessionId: string, info: TargetInfo, windowId: Promise<number | undefined>): SessionRecord {
    this.#version++;
    const tab: TabRecord = {
      targetId: info.targetId,
      tabNumber: this.#numbers.tab(info.targetId),
      url: withoutFragment(info.url),
      documentSince: this.#version,
      windowId: undefined,
      windowPending: undefined,
      registrationCount: 0,
    };
    tab.windowPending = windowId.then((id) => {
      // The tab is listed from now on.
      this.#version++;
      tab.windowId = id;
      tab.windowPending = undefined;
    });
    return this.#addSession({ sessionId, targetId: info.targetId, kind: "page", tab, parent: undefined });
  }

  /**
   * Resolves once the browser has said which window each tab is in (at once if it has):
   * a listing made right after that, in the same turn, sees every tab it can show.
   */
  async windowsKnown(): Promise<void> {
    for (;;) {
      const pending: Promise<void>[] = [];
      for (const session of this.#sessions.values()) if (session.tab.windowPending !== undefined) pending.push(session.tab.windowPending);
      if (pending.length === 0) return;
      await Promise.all(pending);
    }
  }

  /** Records an out-of-process iframe attached under `parentSessionId`; `undefined` if that session is gone. */
  addFrameSession(parentSessionId: string, sessionId: string, info: TargetInfo): SessionRecord | undefined {
    this.#version++;
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
    this.#version++;
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
    this.#version++;
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    for (const frameId of this.#subtree(session, frame.id)) {
      this.#dropFrameRegistrations(session, frameId);
      if (frameId !== frame.id) session.frames.delete(frameId);
    }
    // The session's root frame took every document of the session with it, so the
    // messages dropped unread concerned none of its current documents.
    if (frame.parentId === undefined || !session.frames.has(frame.parentId)) session.omitted.delete(SESSION_WIDE);
    this.#setFrame(session, frame);
    if (session.kind === "page" && frame.parentId === undefined) session.tab.documentSince = this.#version;
  }

  /** A frame's URL changed within its document (fragment, history API): registrations stay. */
  navigatedWithinDocument(sessionId: string, frameId: string, url: string): void {
    this.#version++;
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
    this.#version++;
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
    this.#version++;
    const session = this.#sessions.get(sessionId);
    if (!session) return;
    for (const each of this.#sessionTree(session)) {
      this.#dropAllRegistrations(each);
      this.#emitGone(each.sessionId, undefined);
    }
  }

  /** A session detached (tab closed, iframe gone or moved): it and the sessions below it are gone. */
  removeSession(sessionId: string): void {
    this.#version++;
    const session = this.#sessions.get(sessionId);
    if (session) this.#removeTree(session, session.kind === "page");
  }

  /**
   * Everything is gone from sight (the connection to the browser closed). Tab and frame
   * numbers are kept: the tabs may still be open when the browser is attached again.
   */
  clear(): void {
    this.#version++;
    for (const session of [...this.#sessions.values()]) if (session.parent === undefined) this.#removeTree(session, false);
    this.#sessions.clear();
  }

  /** `WebMCP.toolsAdded` on a session. */
  toolsAdded(sessionId: string, tools: unknown): void {
    this.#version++;
    const session = this.#sessions.get(sessionId);
    if (!session || !Array.isArray(tools)) return;
    for (const raw of tools) {
      const frameId = (raw as { frameId?: unknown } | null)?.frameId;
      if (typeof frameId !== "string") continue;
      const checked = toToolDefinition(raw);
      if (!checked.ok) {
        this.#omit(session, frameId, "invalid", { problem: checked.reason });
        continue;
      }
      const key = registrationKey(frameId, checked.tool.name);
      const previous = session.registrations.get(key);
      if (previous) {
        // The browser reports a new registration under a live name: the old one ended unseen.
        this.#retire(previous);
        session.registrations.delete(key);
      }
      const over = this.#limitReached(session, frameId, checked.tool);
      if (over !== undefined) {
        this.#omit(session, frameId, over, {});
        continue;
      }
      const registration: Registration = { ref: "", tool: checked.tool, frameId, session, serial: this.#serial++ };
      registration.ref = this.#refs.issue(registration);
      session.registrations.set(key, registration);
      session.documentCounts.set(frameId, (session.documentCounts.get(frameId) ?? 0) + 1);
      session.tab.registrationCount++;
      this.#registrationCount++;
      this.#definitionBytes += definitionBytes(checked.tool);
    }
  }

  /**
   * A DevTools message of this session was too large to relay (a `toolsAdded` of
   * thousands of large tools, say): what it reported is missing until the session's
   * documents go away.
   */
  messageDropped(sessionId: string): void {
    this.#version++;
    const session = this.#sessions.get(sessionId);
    if (session) this.#omit(session, SESSION_WIDE, "message_too_large", {});
  }

  /** How many registrations of the current documents the registry left out, by reason. */
  omissions(): Map<OmissionReason, number> {
    const totals = new Map<OmissionReason, number>();
    for (const session of this.#sessions.values()) {
      for (const reasons of session.omitted.values()) for (const [reason, count] of reasons) totals.set(reason, (totals.get(reason) ?? 0) + count);
    }
    return totals;
  }

  #limitReached(session: SessionRecord, frameId: string, tool: ToolDefinition): OmissionReason | undefined {
    if ((session.documentCounts.get(frameId) ?? 0) >= PAGE_DATA_LIMITS.registrationsPerDocument) return "document_limit";
    if (session.tab.registrationCount >= PAGE_DATA_LIMITS.registrationsPerTab) return "tab_limit";
    if (
      this.#registrationCount >= PAGE_DATA_LIMITS.registrationsPerBrowser ||
      this.#definitionBytes + definitionBytes(tool) > PAGE_DATA_LIMITS.definitionBytesPerBrowser
    )
      return "browser_limit";
    return undefined;
  }

  #omit(session: SessionRecord, frameId: string, reason: OmissionReason, details: object): void {
    const reasons = session.omitted.get(frameId) ?? new Map<OmissionReason, number>();
    reasons.set(reason, (reasons.get(reason) ?? 0) + 1);
    session.omitted.set(frameId, reasons);
    if (this.#warned.has(reason)) return;
    this.#warned.add(reason);
    this.#log.warn({ frameId, reason, ...details }, "a page's WebMCP registration is omitted from the snapshot (logged once per reason and browser)");
  }

  /** `WebMCP.toolsRemoved` on a session. */
  toolsRemoved(sessionId: string, tools: unknown): void {
    this.#version++;
    const session = this.#sessions.get(sessionId);
    if (!session || !Array.isArray(tools)) return;
    for (const raw of tools) {
      const { name, frameId } = (raw ?? {}) as { name?: unknown; frameId?: unknown };
      if (typeof name !== "string" || typeof frameId !== "string") continue;
      const key = registrationKey(frameId, name);
      const registration = session.registrations.get(key);
      if (!registration) {
        this.#unomitOne(session, frameId);
        continue;
      }
      this.#retire(registration);
      session.registrations.delete(key);
    }
  }

  /**
   * An omitted registration was removed by its page. Omitted names are not kept (a page
   * could make that list grow without bound), so one count of the frame goes.
   */
  #unomitOne(session: SessionRecord, frameId: string): void {
    const reasons = session.omitted.get(frameId);
    const [reason, count] = reasons?.entries().next().value ?? [];
    if (!reasons || reason === undefined || count === undefined) return;
    if (count > 1) reasons.set(reason, count - 1);
    else reasons.delete(reason);
    if (reasons.size === 0) session.omitted.delete(frameId);
  }

  /** Whether the registration is still live in the registry. */
  isRegistered(registration: Registration): boolean {
    return (
      registration.session.registrations.get(registrationKey(registration.frameId, registration.tool.name)) === registration &&
      this.#sessions.get(registration.session.sessionId) === registration.session
    );
  }

  /** Drops one registration the browser says no longer exists. */
  forget(registration: Registration): void {
    this.#version++;
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
    const session: SessionRecord = {
      ...fields,
      children: new Set(),
      frames: new Map(),
      registrations: new Map(),
      documentCounts: new Map(),
      omitted: new Map(),
    };
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
    session.omitted.delete(frameId);
    for (const [key, registration] of session.registrations) {
      if (registration.frameId !== frameId) continue;
      this.#retire(registration);
      session.registrations.delete(key);
    }
  }

  #dropAllRegistrations(session: SessionRecord): void {
    for (const registration of session.registrations.values()) this.#retire(registration);
    session.registrations.clear();
    session.omitted.clear();
  }

  #retire(registration: Registration): void {
    this.#refs.retire(registration.ref);
    const { session, frameId } = registration;
    const remaining = (session.documentCounts.get(frameId) ?? 1) - 1;
    if (remaining > 0) session.documentCounts.set(frameId, remaining);
    else session.documentCounts.delete(frameId);
    session.tab.registrationCount--;
    this.#registrationCount--;
    this.#definitionBytes -= definitionBytes(registration.tool);
  }

  #emitGone(sessionId: string, frameId: string | undefined): void {
    for (const listener of this.#goneListeners) listener(sessionId, frameId);
  }
}
