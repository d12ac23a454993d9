import type { WebMcpInvocationResult } from "@browser-service/types";
import type { CdpRouter } from "../cdp/cdp-router.js";
import { InternalError, ToolNotFoundError, ToolRefStaleError } from "../http/api-errors.js";
import { ifNoneMatchHits } from "../http/entity-tags.js";
import { BrowserAttachment } from "./browser-attachment.js";
import { SharedBuild } from "./shared-build.js";
import { SourceNumbers } from "./source-numbers.js";
import { type TabTitle, TITLE_MAX_AGE_MS } from "./tab-titles.js";
import { runInvocation } from "./tool-invocation.js";
import { buildToolList, type ToolListBody } from "./tool-list-body.js";
import { ToolRefTable } from "./tool-refs.js";
import type { Registration, RegistryLog, ToolRegistry } from "./tool-registry.js";

/** A listing whose `If-None-Match` named the current snapshot: its tag, no body. */
export interface ToolListNotModified {
  json: undefined;
  etag: string;
}

/** How `GET .../webmcp/tools` listings were answered, over every browser. */
export interface SnapshotBuildCounts {
  /** Bodies built. */
  built: number;
  /** Listings answered with a build another listing had started. */
  shared: number;
  /** `304`s answered from the tag of the last build, without building. */
  remembered: number;
}

/** What a snapshot body is built from; two builds from equal inputs give the same body. */
interface BuildInput {
  registry: ToolRegistry;
  version: number;
  titles: Map<string, TabTitle>;
  titlesVersion: number;
}

function sameTitles(a: Map<string, TabTitle>, b: Map<string, TabTitle>): boolean {
  if (a.size !== b.size) return false;
  for (const [targetId, { title, url }] of a) {
    const other = b.get(targetId);
    if (other?.title !== title || other.url !== url) return false;
  }
  return true;
}

// Reads of the titles a listing makes at most when the registry changes while one is
// under way (a page that navigates faster than the browser answers would otherwise hold
// a listing forever); a title still from another document is then left out (see tool-list-body.ts).
const TITLE_READS = 3;

// Two inputs give the same body when they are of the same registry object (not one from
// before a reconnection) at the same version (every event that may change a listing
// bumps it) with equal titles (no event reports a title change, so they are read from
// the browser, at most TITLE_MAX_AGE_MS before a listing). A later caller may then share
// a running build, or take the last build's tag.
const sameInput = (a: BuildInput, b: BuildInput): boolean =>
  a.registry === b.registry && a.version === b.version && a.titlesVersion === b.titlesVersion && sameTitles(a.titles, b.titles);

/**
 * WebMCP of one running browser: discovery and invocation over one DevTools connection
 * ({@link BrowserAttachment}). The `tool_ref` table and the tab and frame numbers belong
 * to the browser and outlive a connection; if the connection drops while the browser
 * runs, every ref goes stale and the next request connects again.
 */
export class BrowserWebMcp {
  readonly #router: CdpRouter;
  readonly #log: RegistryLog;
  readonly #refs = new ToolRefTable<Registration>();
  readonly #numbers = new SourceNumbers();
  readonly #builds = new SharedBuild<BuildInput, ToolListBody>(sameInput);
  readonly #counts: SnapshotBuildCounts;
  // The input and tag of the last body built: a poller that holds that tag is answered
  // 304 without a build while the input stays the same.
  #lastBuilt: { input: BuildInput; etag: string } | undefined;
  readonly #titleMaxAgeMs: number;
  #attachment: Promise<BrowserAttachment> | undefined;
  #ended = false;

  /**
   * `options.counts`, when given, is where listings are counted by how they were answered
   * (the service's totals); `options.titleMaxAgeMs` is how long one read of the tab titles
   * serves listings (default and most {@link TITLE_MAX_AGE_MS}).
   */
  constructor(router: CdpRouter, log: RegistryLog, options: { counts?: SnapshotBuildCounts; titleMaxAgeMs?: number } = {}) {
    this.#router = router;
    this.#log = log;
    this.#counts = options.counts ?? { built: 0, shared: 0, remembered: 0 };
    this.#titleMaxAgeMs = options.titleMaxAgeMs ?? TITLE_MAX_AGE_MS;
  }

  /** Connects (once; again after the connection dropped) and resolves when the browser's tabs are followed. */
  connect(): Promise<BrowserAttachment> {
    if (this.#ended) return Promise.reject(new InternalError("The browser has stopped."));
    if (this.#attachment) return this.#attachment;
    const attaching = BrowserAttachment.open(this.#router, {
      refs: this.#refs,
      numbers: this.#numbers,
      log: this.#log,
      titleMaxAgeMs: this.#titleMaxAgeMs,
    });
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
   * `GET .../webmcp/tools` (the spec's `WebMcpToolList`) with its `ETag`; or, when
   * `ifNoneMatch` (the request's `If-None-Match`) names the current tag, that tag alone.
   * The tag of the last body built is remembered with what it was built from, so while
   * that stays the same a `304` costs no building (nor, while the titles are fresh, a
   * round trip to the browser), and a `200` costs copying the tools into the body but no
   * hashing. Concurrent listings share one build when it is sure to give each of them the
   * body it would build itself (see `sameInput`): a large snapshot is built once however
   * many clients ask for it at once.
   */
  listTools(): Promise<ToolListBody>;
  listTools(ifNoneMatch: string | undefined): Promise<ToolListBody | ToolListNotModified>;
  async listTools(ifNoneMatch?: string): Promise<ToolListBody | ToolListNotModified> {
    const attachment = await this.#attached();
    const registry = attachment.registry;
    let read = await attachment.tabTitles();
    for (let reads = 1; read.version !== registry.version && reads < TITLE_READS; reads++) read = await attachment.tabTitles();
    const { titles, version: titlesVersion } = read;
    await registry.windowsKnown();
    // From here to the build's start, one turn: the input is the registry as it is now.
    const input: BuildInput = { registry, version: registry.version, titles, titlesVersion };
    const last = this.#lastBuilt;
    const knownTag = last !== undefined && sameInput(last.input, input) ? last.etag : undefined;
    if (knownTag !== undefined && ifNoneMatchHits(ifNoneMatch, knownTag)) {
      this.#counts.remembered++;
      return { json: undefined, etag: knownTag };
    }
    const { output, shared } = this.#builds.run(input, async (each) => {
      const body = await buildToolList({
        registry: each.registry,
        titles: each.titles,
        titlesVersion: each.titlesVersion,
        numbers: this.#numbers,
        etag: knownTag,
      });
      this.#lastBuilt = { input: each, etag: body.etag };
      return body;
    });
    if (shared) this.#counts.shared++;
    else this.#counts.built++;
    const body = await output;
    return ifNoneMatchHits(ifNoneMatch, body.etag) ? { json: undefined, etag: body.etag } : body;
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
