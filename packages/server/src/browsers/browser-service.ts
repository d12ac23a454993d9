import { browserTokenHash, newBrowserToken } from "../cdp/browser-token.js";
import type { CdpRouter } from "../cdp/cdp-router.js";
import { BrowserUnavailableError, InternalError } from "../http/api-errors.js";
import type { ProjectRow } from "../projects/project-store.js";
import { BrowserLaunchError, type BrowserLauncher, type LaunchedBrowser } from "./browser-launcher.js";
import { endOrphanedBrowser } from "./orphaned-browser.js";
import type { BrowserRow, BrowserStore } from "./browser-store.js";
import type { TakenBrowser, WarmPool } from "./warm-pool.js";

/** Where the service reports what happens to browsers outside a request. */
export interface BrowserEventLog {
  warn(details: object, message: string): void;
  error(details: object, message: string): void;
}

/** Told when a browser process starts and when it ends (stopped or crashed). */
export interface BrowserLifecycle {
  started(browserId: string, launched: LaunchedBrowser): void;
  ended(browserId: string): void;
}

/** What `POST /browsers` asks for. */
export interface CreateBrowserInput {
  name?: string;
  start_url?: string;
}

/**
 * The running browsers: their records (through {@link BrowserStore}) and their processes
 * (through a {@link BrowserLauncher}). A browser whose process exits on its own becomes
 * `crashed`; one the server stops (DELETE or shutdown) loses its record.
 */
export class BrowserService {
  readonly #store: BrowserStore;
  readonly #launcher: BrowserLauncher;
  readonly #planLimit: number;
  readonly #log: BrowserEventLog;
  readonly #lifecycle: BrowserLifecycle;
  readonly #pool: WarmPool | undefined;
  readonly #running = new Map<string, LaunchedBrowser>();
  // The DevTools access token of each running browser. Only its hash is stored; it is
  // kept here, and only while the browser runs, so that reads can show `cdp_ws_url`.
  readonly #tokens = new Map<string, string>();
  // Browsers the server is stopping: their exit is not a crash.
  readonly #stopping = new Set<string>();
  #shuttingDown = false;

  /**
   * `pool`, when given, supplies browsers launched ahead of time; it is closed by
   * {@link closeAll}. Its browsers are not sessions: no slot, no record, until taken.
   */
  constructor(store: BrowserStore, launcher: BrowserLauncher, planLimit: number, log: BrowserEventLog, lifecycle: BrowserLifecycle, pool?: WarmPool) {
    this.#store = store;
    this.#launcher = launcher;
    this.#planLimit = planLimit;
    this.#log = log;
    this.#lifecycle = lifecycle;
    this.#pool = pool;
  }

  /** Marks what a previous, killed server left running as crashed and ends those processes. */
  recoverAbandoned(): void {
    for (const row of this.#store.recoverAbandoned()) {
      endOrphanedBrowser(row.pid, row.user_data_dir);
      this.#log.warn({ browser: row.id }, "browser left running by a previous server process was ended and marked crashed");
    }
  }

  /**
   * Starts a browser in `project`: reserves its slot atomically (409 `name_conflict`,
   * 429 `concurrency_limit_exceeded`), launches it, and records it as running. A launch
   * failure frees the slot; a {@link BrowserLaunchError} is 503 `browser_unavailable`,
   * anything else 500 `internal_error`.
   */
  async create(project: ProjectRow, input: CreateBrowserInput): Promise<BrowserRow> {
    const row = this.#store.reserve({ orgId: project.org_id, projectId: project.id, name: input.name, planLimit: this.#planLimit });
    let launched: LaunchedBrowser;
    // A warm browser is handed over without awaiting anything; none ready (a burst larger
    // than the pool, or no pool) means a cold launch, as does one that died meanwhile.
    const taken = this.#takeWarm(input.start_url);
    try {
      launched = taken?.warm.launched ?? (await this.#launcher.launch(input.start_url === undefined ? {} : { startUrl: input.start_url }));
    } catch (error) {
      this.#store.remove(row.id);
      // Chromium missing, not runnable, or dying before it answered: a documented 503 the
      // client can tell from a fault of the server itself.
      if (error instanceof BrowserLaunchError) throw new BrowserUnavailableError(error);
      throw new InternalError("The browser failed to start.", error);
    }
    if (this.#shuttingDown) {
      await launched.close();
      taken?.recorded();
      this.#store.remove(row.id);
      throw new InternalError("The server is shutting down; the browser was not kept.");
    }
    const token = newBrowserToken();
    this.#running.set(row.id, launched);
    this.#tokens.set(row.id, token);
    launched.cdp.onCloseRequested(() => {
      // A client's `Browser.close` ends the browser as `DELETE /browsers/{id}` does.
      this.delete(row).catch((error: unknown) => this.#log.error({ browser: row.id, err: error }, "could not delete a browser closed by a DevTools client"));
    });
    launched.onExit((exit) => {
      this.#running.delete(row.id);
      this.#tokens.delete(row.id);
      this.#lifecycle.ended(row.id);
      if (this.#stopping.has(row.id)) return;
      try {
        this.#store.markCrashed(row.id);
        this.#log.warn({ browser: row.id, exit }, "browser process exited unexpectedly; marked crashed");
      } catch (error) {
        this.#log.error({ browser: row.id, err: error }, "could not mark an exited browser as crashed");
      }
      // Ends whatever the crash left of the process group and removes the profile.
      launched.close().catch((error: unknown) => this.#log.error({ browser: row.id, err: error }, "could not clean up after a crashed browser"));
    });
    const running = this.#store.markRunning(row.id, launched, browserTokenHash(token));
    // Its session's record now names the process, for the clean-up after a kill.
    taken?.recorded();
    this.#lifecycle.started(row.id, launched);
    return running;
  }

  /** A warm browser handed over to its user (navigating to `startUrl`), or `undefined` if none is ready and usable. */
  #takeWarm(startUrl: string | undefined): TakenBrowser | undefined {
    for (let taken = this.#pool?.take(); taken !== undefined; taken = this.#pool?.take()) {
      try {
        taken.warm.handOver(startUrl);
        return taken;
      } catch (error) {
        this.#log.warn({ err: error }, "a warm browser could not be handed over; trying the next");
        taken.warm.close().catch((closeError: unknown) => this.#log.error({ err: closeError }, "could not close an unusable warm browser")).finally(() => taken?.recorded());
      }
    }
    return undefined;
  }

  /** The DevTools access token of a running browser; `undefined` once it stopped or crashed. */
  token(browserId: string): string | undefined {
    return this.#tokens.get(browserId);
  }

  /** The DevTools pipe of a running browser. */
  cdp(browserId: string): CdpRouter | undefined {
    return this.#running.get(browserId)?.cdp;
  }

  /** Stops the browser if it runs, then deletes its record (freeing its slot and name). */
  async delete(row: BrowserRow): Promise<void> {
    this.#stopping.add(row.id);
    this.#tokens.delete(row.id);
    try {
      await this.#running.get(row.id)?.close();
      this.#store.remove(row.id);
    } finally {
      this.#stopping.delete(row.id);
    }
  }

  /** Closes every browser (the warm ones too) and deletes their records; later launches are refused. */
  async closeAll(): Promise<void> {
    this.#shuttingDown = true;
    const rows = [...this.#running.keys()];
    const results = await Promise.allSettled([
      ...rows.map(async (id) => {
        this.#stopping.add(id);
        await this.#running.get(id)?.close();
        this.#store.remove(id);
      }),
      ...(this.#pool === undefined ? [] : [this.#pool.close()]),
    ]);
    const failures = results.filter((result): result is PromiseRejectedResult => result.status === "rejected");
    if (failures.length > 0) throw new AggregateError(failures.map((failure) => failure.reason), `${failures.length} browser(s) failed to close.`);
  }
}
