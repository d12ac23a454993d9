import type { FastifyBaseLogger } from "fastify";
import { CdpConnection } from "../cdp/cdp-connection.js";
import type { CdpRouter } from "../cdp/cdp-router.js";
import { ProjectBudgets } from "../cdp/message-budget.js";
import { Admissions } from "../http/admissions.js";
import type { BrowserWebMcp } from "../webmcp/browser-webmcp.js";
import { BrowserLiveView } from "./browser-live-view.js";
import type { LiveViewLimits } from "./live-view-limits.js";

// How long a live view waits for the browser's DevTools to give it a connection.
const OPEN_TIMEOUT_MS = 10_000;

/** What {@link LiveViewHub} needs from the server. */
export interface LiveViewHubOptions {
  limits: LiveViewLimits;
  log: FastifyBaseLogger;
  /** The browser's WebMCP, for the tools its viewers see and invoke; fails for one that is gone. */
  webmcpOf: (browserId: string) => Promise<BrowserWebMcp>;
  /** The browser's view ended (the browser did): its viewers are told. */
  ended: (browserId: string) => void;
}

/**
 * The live views of the running browsers: one per watched browser, shared by its viewers,
 * opened for its first and closed when nobody watches it nor is about to (the viewers
 * still opening their connections count, from their admission on), with the places of
 * each browser's viewers and what all of them may send together.
 */
export class LiveViewHub {
  readonly #options: LiveViewHubOptions;
  readonly #views = new Map<string, Promise<BrowserLiveView>>();
  readonly #settled = new Map<string, BrowserLiveView>();
  // Viewers accepted per browser, counted from the check on, so a burst cannot pass the cap together.
  readonly #admitted: Admissions;
  // What all the viewers of a browser may send, kept past its last viewer until it has
  // recovered, so that reconnecting does not reset it.
  readonly #budgets: ProjectBudgets;

  constructor(options: LiveViewHubOptions) {
    this.#options = options;
    this.#admitted = new Admissions(options.limits.maxViewers);
    this.#budgets = new ProjectBudgets({ messageRate: 0, byteRate: options.limits.byteRate });
  }

  /**
   * Takes a viewer's place at `browserId`, or `undefined` when its places are all taken.
   * The returned `leave` frees it (once), and closes the browser's view when it was the last.
   */
  admit(browserId: string): (() => void) | undefined {
    const release = this.#admitted.admit(browserId);
    if (release === undefined) return undefined;
    return () => {
      release();
      if (!this.#admitted.has(browserId)) this.#settled.get(browserId)?.close();
    };
  }

  /** The live view of a running browser: the one its viewers share, or a new one for its first. */
  viewOf(browserId: string, router: CdpRouter): Promise<BrowserLiveView> {
    const known = this.#views.get(browserId);
    if (known) return known.then((view) => (view.closed ? this.viewOf(browserId, router) : view));
    const opening: Promise<BrowserLiveView> = (async () => {
      const connection = await openConnection(router);
      const budget = this.#budgets.acquire(browserId);
      const view = new BrowserLiveView(connection, this.#options.limits, () => this.#options.webmcpOf(browserId), budget, this.#options.log);
      view.onClose(() => {
        this.#budgets.release(browserId);
        if (this.#views.get(browserId) === opening) this.#views.delete(browserId);
        if (this.#settled.get(browserId) === view) this.#settled.delete(browserId);
      });
      view.onEnd(() => this.#options.ended(browserId));
      try {
        await view.start();
      } catch (error) {
        view.close();
        throw error;
      }
      this.#settled.set(browserId, view);
      // Every viewer it was opened for gave up while it opened.
      if (!this.#admitted.has(browserId)) view.close();
      return view;
    })();
    this.#views.set(browserId, opening);
    opening.catch(() => {
      if (this.#views.get(browserId) === opening) this.#views.delete(browserId);
    });
    return opening;
  }

  /** Viewers connected and tabs captured now, over every browser, and the places taken. */
  stats(): { viewers: number; screencasts: number; places: number } {
    let viewers = 0;
    let screencasts = 0;
    for (const view of this.#settled.values()) {
      if (view.closed) continue;
      viewers += view.viewerCount;
      screencasts += view.screencastCount;
    }
    return { viewers, screencasts, places: this.#admitted.total() };
  }
}

/**
 * A DevTools connection of the browser for a live view, or an error after
 * {@link OPEN_TIMEOUT_MS}: a page can keep Chromium's DevTools too busy to answer, and
 * viewers must not wait for it without end. One that opens late is closed.
 */
async function openConnection(router: CdpRouter): Promise<CdpConnection> {
  const opening = CdpConnection.open(router);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("The browser's DevTools did not answer in time.")), OPEN_TIMEOUT_MS);
  });
  try {
    return await Promise.race([opening, late]);
  } catch (error) {
    opening.then(
      (connection) => connection.close(),
      () => undefined,
    );
    throw error;
  } finally {
    clearTimeout(timer);
  }
}
