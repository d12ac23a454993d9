import type { WebMcpInvocationResult } from "@browser-service/types";
import type { CdpRouter } from "../cdp/cdp-router.js";
import { InternalError, ToolNotFoundError, ToolRefStaleError } from "../http/api-errors.js";
import { BodyTag } from "../http/entity-tags.js";
import { BrowserAttachment } from "./browser-attachment.js";
import { SourceNumbers } from "./source-numbers.js";
import { runInvocation } from "./tool-invocation.js";
import { ToolRefTable } from "./tool-refs.js";
import { capText, PAGE_DATA_LIMITS } from "./page-data.js";
import { SharedBuild } from "./shared-build.js";
import type { Registration, SnapshotLog, TabRecord, ToolSnapshot } from "./tool-snapshot.js";

/** How much of a snapshot's JSON is built before other work gets a turn. */
const YIELD_EVERY_BYTES = 512 * 1024;

/** A snapshot as `GET .../webmcp/tools` sends it. */
export interface ToolListBody {
  /**
   * The spec's `WebMcpToolList`, as UTF-8 JSON. Bytes, encoded once: the listings that
   * share a build all send this one buffer, where a string would be encoded again for
   * each response, all in the turn the build ends.
   */
  json: Buffer;
  /**
   * The snapshot's version, the `ETag`: a hash of `json` itself. Tab titles are read
   * from the browser on every request (no event reports a title change), and URLs,
   * window ids and omission counts each have their own source, so a counter bumped by
   * snapshot events could miss a change; the body's own hash cannot.
   */
  etag: string;
}

/** How many snapshot bodies were built, and how many `GET`s were answered with another's build. */
export interface SnapshotBuildCounts {
  /** Bodies built. */
  built: number;
  /** Listings answered with a build another listing had started. */
  shared: number;
}

/** What a snapshot body is built from; two builds from equal inputs give the same body. */
interface BuildInput {
  snapshot: ToolSnapshot;
  version: number;
  titles: Map<string, string>;
}

function sameTitles(a: Map<string, string>, b: Map<string, string>): boolean {
  if (a.size !== b.size) return false;
  for (const [targetId, title] of a) if (b.get(targetId) !== title) return false;
  return true;
}

// A later caller may share a build only when its body is what the caller would build
// itself: the same snapshot object (not one from before a reconnection), still at the
// version the build started from, so no event came between the build's start and this
// caller's arrival (one that comes during the build bumps the version, and whoever
// arrives after it builds anew); and the titles this caller read itself, after it
// arrived, equal to the build's (no event reports a title change, so each caller reads them).
const sameInput = (a: BuildInput, b: BuildInput): boolean => a.snapshot === b.snapshot && a.version === b.version && sameTitles(a.titles, b.titles);

/**
 * WebMCP of one running browser: discovery and invocation over one DevTools connection
 * ({@link BrowserAttachment}). The `tool_ref` table and the tab and frame numbers belong
 * to the browser and outlive a connection; if the connection drops while the browser
 * runs, every ref goes stale and the next request connects again.
 */
export class BrowserWebMcp {
  readonly #router: CdpRouter;
  readonly #log: SnapshotLog;
  readonly #refs = new ToolRefTable<Registration>();
  readonly #numbers = new SourceNumbers();
  readonly #builds = new SharedBuild<BuildInput, ToolListBody>(sameInput);
  readonly #counts: SnapshotBuildCounts;
  #attachment: Promise<BrowserAttachment> | undefined;
  #ended = false;

  /** `counts`, when given, is where builds and shared listings are counted (the service's totals). */
  constructor(router: CdpRouter, log: SnapshotLog, counts: SnapshotBuildCounts = { built: 0, shared: 0 }) {
    this.#router = router;
    this.#log = log;
    this.#counts = counts;
  }

  /** Connects (once; again after the connection dropped) and resolves when the browser's tabs are followed. */
  connect(): Promise<BrowserAttachment> {
    if (this.#ended) return Promise.reject(new InternalError("The browser has stopped."));
    if (this.#attachment) return this.#attachment;
    const attaching = BrowserAttachment.open(this.#router, { refs: this.#refs, numbers: this.#numbers, log: this.#log });
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

  /**
   * Connects and resolves once the tabs the browser has now are followed with WebMCP
   * enabled: a page they load next is seen from its first tool on. Chromium's
   * `WebMCP.enable` reports the tools already registered in a tab's own frame only, never
   * those of a same-origin frame inside it, so a tab must be followed before it loads.
   */
  async ready(): Promise<void> {
    const attachment = await this.connect();
    await attachment.followed();
  }

  /**
   * The browser-wide snapshot of tools, every tab and frame, as the JSON body of
   * `GET .../webmcp/tools` (the spec's `WebMcpToolList`). Each tool's own fields were
   * serialized when the page registered it, so a large snapshot costs concatenation,
   * bounded by the response cap; whatever is left out is counted in `omitted`. The
   * `etag` is hashed as the JSON is built, so a large snapshot is hashed in the same
   * slices. Concurrent listings share one build when it is sure to give each of them
   * the body it would build itself (see `sameInput`): a large snapshot is built once
   * however many clients ask for it at once.
   */
  async listTools(): Promise<ToolListBody> {
    const attachment = await this.#attached();
    const snapshot = attachment.snapshot;
    const titles = await attachment.tabTitles();
    // Read after the titles, right before the build starts (in the same turn).
    const { output, shared } = this.#builds.run({ snapshot, version: snapshot.version, titles }, (input) => this.#build(input));
    if (shared) this.#counts.shared++;
    else this.#counts.built++;
    return output;
  }

  async #build({ snapshot, titles }: BuildInput): Promise<ToolListBody> {
    // Read now, in the turn the build starts: what the input's version stands for.
    const registrations = snapshot.registrations();
    const windows = new Map(await Promise.all([...new Set(registrations.map((registration) => registration.session.tab))].map(async (tab) => [tab, await tab.windowId] as const)));
    const tabSources = new Map<TabRecord, string>();
    const frameSources = new Map<string, string>();
    const parts: string[] = [];
    const tag = new BodyTag().update(`{"tools":[`);
    let bytes = 0;
    let sinceYield = 0;
    let overResponse = 0;
    for (const registration of registrations) {
      if (sinceYield > YIELD_EVERY_BYTES) {
        // A large snapshot is built in slices, so that other requests are served between them.
        sinceYield = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Dropped while the window ids were read: it is no longer in the snapshot.
      if (!snapshot.isRegistered(registration)) continue;
      const tab = registration.session.tab;
      const windowId = windows.get(tab);
      if (windowId === undefined) continue;
      let tabSource = tabSources.get(tab);
      if (tabSource === undefined) {
        const title = capText(titles.get(tab.targetId) ?? "", PAGE_DATA_LIMITS.titleChars);
        tabSource = `"window_id":${windowId},"tab_id":${tab.tabNumber},"page_url":${JSON.stringify(tab.url)},"page_title":${JSON.stringify(title)}`;
        tabSources.set(tab, tabSource);
      }
      let frame = "null";
      if (!snapshot.isTopLevel(registration)) {
        const key = `${registration.session.sessionId}\n${registration.frameId}`;
        frame = frameSources.get(key) ?? `{"frame_id":${this.#numbers.frame(registration.frameId)},"url":${JSON.stringify(snapshot.frameUrl(registration))}}`;
        frameSources.set(key, frame);
      }
      const part = `{"tool_ref":${JSON.stringify(registration.ref)},${registration.tool.json},"source":{${tabSource},"frame":${frame}}}`;
      const partBytes = Buffer.byteLength(part);
      if (bytes + partBytes > PAGE_DATA_LIMITS.responseBytes) {
        overResponse++;
        continue;
      }
      bytes += partBytes + 1;
      sinceYield += partBytes;
      tag.update(parts.length === 0 ? part : `,${part}`);
      parts.push(part);
    }
    const omitted = snapshot.omissions();
    if (overResponse > 0) omitted.set("response_limit", overResponse);
    const omittedJson = omitted.size === 0 ? "" : `,"omitted":${JSON.stringify([...omitted].map(([reason, count]) => ({ reason, count })))}`;
    const end = `]${omittedJson}}`;
    return { json: Buffer.from(`{"tools":[${parts.join(",")}${end}`), etag: tag.update(end).tag };
  }

  /**
   * Invokes the registration `toolRef` names, once: 404 `tool_not_found` for a ref this
   * browser never issued, 409 `tool_ref_stale` for one whose registration is gone (in
   * both cases nothing was sent), else the result or 504 `outcome_unknown`.
   */
  async invoke(toolRef: string, input: Record<string, unknown>, timeoutSec: number, signal?: AbortSignal): Promise<WebMcpInvocationResult> {
    const attachment = await this.#attached();
    const found = this.#refs.lookup(toolRef);
    if (found.state === "unknown") throw new ToolNotFoundError();
    if (found.state === "stale") throw new ToolRefStaleError();
    return runInvocation(attachment, { registration: found.target, input, timeoutSec, ...(signal === undefined ? {} : { signal }) }, this.#log);
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
