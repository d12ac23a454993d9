import type { WebMcpInvocationResult, WebMcpTool } from "@browser-service/types";
import { InternalError, ToolNotFoundError, ToolRefStaleError } from "../http/api-errors.js";
import { BrowserAttachment } from "./browser-attachment.js";
import { SourceNumbers } from "./source-numbers.js";
import { runInvocation } from "./tool-invocation.js";
import { ToolRefTable } from "./tool-refs.js";
import type { Registration, SnapshotLog } from "./tool-snapshot.js";

/**
 * WebMCP of one running browser: discovery and invocation over one DevTools connection
 * ({@link BrowserAttachment}). The `tool_ref` table and the tab and frame numbers belong
 * to the browser and outlive a connection; if the connection drops while the browser
 * runs, every ref goes stale and the next request connects again.
 */
export class BrowserWebMcp {
  readonly #cdpWsUrl: string;
  readonly #log: SnapshotLog;
  readonly #refs = new ToolRefTable<Registration>();
  readonly #numbers = new SourceNumbers();
  #attachment: Promise<BrowserAttachment> | undefined;
  #ended = false;

  constructor(cdpWsUrl: string, log: SnapshotLog) {
    this.#cdpWsUrl = cdpWsUrl;
    this.#log = log;
  }

  /** Connects (once; again after the connection dropped) and resolves when the browser's tabs are followed. */
  connect(): Promise<BrowserAttachment> {
    if (this.#ended) return Promise.reject(new InternalError("The browser has stopped."));
    if (this.#attachment) return this.#attachment;
    const attaching = BrowserAttachment.open(this.#cdpWsUrl, { refs: this.#refs, numbers: this.#numbers, log: this.#log });
    this.#attachment = attaching;
    attaching.then(
      (attachment) =>
        attachment.closed.then(() => {
          if (this.#attachment === attaching) this.#attachment = undefined;
        }),
      () => {
        // The next request tries again; this one reports the failure.
        if (this.#attachment === attaching) this.#attachment = undefined;
      },
    );
    return attaching;
  }

  /** The browser-wide snapshot of tools: every tab and frame. */
  async listTools(): Promise<WebMcpTool[]> {
    const attachment = await this.#attached();
    const snapshot = attachment.snapshot;
    const titles = await attachment.tabTitles();
    const registrations = snapshot.registrations();
    const windows = new Map(await Promise.all([...new Set(registrations.map((registration) => registration.session.tab))].map(async (tab) => [tab, await tab.windowId] as const)));
    const tools: WebMcpTool[] = [];
    for (const registration of registrations) {
      // Dropped while the window ids were read: it is no longer in the snapshot.
      if (!snapshot.isRegistered(registration)) continue;
      const tab = registration.session.tab;
      const windowId = windows.get(tab);
      if (windowId === undefined) continue;
      const tool: WebMcpTool = {
        tool_ref: registration.ref,
        name: registration.tool.name,
        description: registration.tool.description,
        input_schema: registration.tool.inputSchema,
        source: {
          window_id: windowId,
          tab_id: tab.tabNumber,
          page_url: tab.url,
          page_title: titles.get(tab.targetId) ?? "",
          frame: snapshot.isTopLevel(registration) ? null : { frame_id: this.#numbers.frame(registration.frameId), url: snapshot.frameUrl(registration) },
        },
      };
      if (registration.tool.annotations) tool.annotations = registration.tool.annotations;
      tools.push(tool);
    }
    return tools;
  }

  /**
   * Invokes the registration `toolRef` names, once: 404 `tool_not_found` for a ref this
   * browser never issued, 409 `tool_ref_stale` for one whose registration is gone (in
   * both cases nothing was sent), else the result or 504 `outcome_unknown`.
   */
  async invoke(toolRef: string, input: Record<string, unknown>, timeoutSec: number): Promise<WebMcpInvocationResult> {
    const attachment = await this.#attached();
    const found = this.#refs.lookup(toolRef);
    if (found.state === "unknown") throw new ToolNotFoundError();
    if (found.state === "stale") throw new ToolRefStaleError();
    return runInvocation(attachment, { registration: found.target, input, timeoutSec }, this.#log);
  }

  /** The browser stopped or crashed: closes the connection; every ref goes stale. */
  async end(): Promise<void> {
    this.#ended = true;
    const attaching = this.#attachment;
    this.#attachment = undefined;
    if (attaching) {
      // A failed connection was reported to the request that awaited it; there is nothing to close.
      const attachment = await attaching.catch(() => undefined);
      await attachment?.close();
    }
    this.#refs.retireAll();
  }

  async #attached(): Promise<BrowserAttachment> {
    try {
      return await this.connect();
    } catch (error) {
      throw error instanceof InternalError ? error : new InternalError("Could not connect to the browser's DevTools endpoint.", error);
    }
  }
}
