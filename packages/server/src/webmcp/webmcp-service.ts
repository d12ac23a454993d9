import type { LaunchedBrowser } from "../browsers/browser-launcher.js";
import type { BrowserLifecycle } from "../browsers/browser-service.js";
import type { BrowserRow } from "../browsers/browser-store.js";
import { ConflictError } from "../http/api-errors.js";
import type { ServerLog } from "../observe/server-log.js";
import { BrowserWebMcp, type SnapshotBuildCounts } from "./browser-webmcp.js";
import { TITLE_MAX_AGE_MS } from "./tab-titles.js";

/**
 * WebMCP for every running browser: a {@link BrowserWebMcp} from the moment a browser
 * starts (it connects at once, so its tool registry is current by the first request) until
 * its process ends, when its refs go stale.
 */
export class WebMcpService implements BrowserLifecycle {
  readonly #log: Pick<ServerLog, "info" | "warn" | "error">;
  readonly #browsers = new Map<string, BrowserWebMcp>();
  // Browsers followed before they became sessions (warm ones, cold ones before their
  // start_url loads), until started() gives them their id.
  readonly #prepared = new WeakMap<LaunchedBrowser, BrowserWebMcp>();
  readonly #counts: SnapshotBuildCounts = { built: 0, shared: 0, remembered: 0 };
  readonly #titleMaxAgeMs: number;

  /** `titleMaxAgeMs`: how long one read of a browser's tab titles serves its listings (default and most {@link TITLE_MAX_AGE_MS}). */
  constructor(log: Pick<ServerLog, "info" | "warn" | "error">, titleMaxAgeMs: number = TITLE_MAX_AGE_MS) {
    this.#log = log;
    this.#titleMaxAgeMs = titleMaxAgeMs;
  }

  /**
   * Follows a browser's tools before it is handed to its user, and resolves once its tab
   * is followed with WebMCP enabled, so that the start_url it loads next is seen whole
   * (see {@link BrowserWebMcp.ready}); rejects if its DevTools cannot be followed.
   */
  async prepare(launched: LaunchedBrowser): Promise<void> {
    const webmcp = new BrowserWebMcp(launched.cdp, this.#log, { counts: this.#counts, titleMaxAgeMs: this.#titleMaxAgeMs });
    this.#prepared.set(launched, webmcp);
    await webmcp.ready();
  }

  /** A browser is up: follows its tools (those {@link prepare} already follows, from then on under its id). */
  started(browserId: string, launched: LaunchedBrowser): void {
    const prepared = this.#prepared.get(launched);
    this.#prepared.delete(launched);
    const webmcp = prepared ?? new BrowserWebMcp(launched.cdp, this.#log, { counts: this.#counts, titleMaxAgeMs: this.#titleMaxAgeMs });
    this.#browsers.set(browserId, webmcp);
    webmcp
      .connect()
      .catch((error: unknown) =>
        this.#log.warn({ browser: browserId, err: error }, "could not connect to a new browser's DevTools for WebMCP; the next WebMCP request tries again"),
      );
  }

  /** A browser's process ended (stopped or crashed): its tools and refs are gone. */
  ended(browserId: string): void {
    const webmcp = this.#browsers.get(browserId);
    this.#browsers.delete(browserId);
    webmcp?.end().catch((error: unknown) => this.#log.error({ browser: browserId, err: error }, "could not close the WebMCP connection of an ended browser"));
  }

  /** Snapshot bodies built so far, and listings that shared another's build, over every browser. */
  snapshotBuilds(): SnapshotBuildCounts {
    return { ...this.#counts };
  }

  /** The WebMCP of a browser record: 409 `conflict` if its process is not running (crashed, or being stopped). */
  of(row: BrowserRow): BrowserWebMcp {
    const webmcp = row.status === "running" ? this.#browsers.get(row.id) : undefined;
    if (!webmcp) throw new ConflictError(`Browser ${row.id} is not running (status ${row.status === "running" ? "stopping" : row.status}).`);
    return webmcp;
  }
}
