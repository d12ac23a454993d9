import type { BrowserTelemetryConfig } from "@browser-service/types";
import { limits } from "@browser-service/types";
import { browserTokenHash, newBrowserToken } from "../cdp/browser-token.js";
import type { CdpRouter } from "../cdp/cdp-router.js";
import { ApiError, BrowserUnavailableError, HostMemoryLowError, InternalError, NodeDrainingError, ProfileLoadFailedError } from "../http/api-errors.js";
import type { ServerLog } from "../observe/server-log.js";
import type { ProfileState } from "../profiles/profile-archive.js";
import type { ProjectRow } from "../projects/project-store.js";
import { systemEvent } from "../telemetry/client-telemetry.js";
import type { TelemetryService } from "../telemetry/telemetry-service.js";
import {
  BrowserLaunchError,
  type BrowserLauncher,
  type LaunchedBrowser,
  type LaunchOptions,
  ProfileLoadError,
  ProfilesUnsupportedError,
} from "./browser-launcher.js";
import type { BrowserReservation, BrowserRow, BrowserStore } from "./browser-store.js";
import { type ExtensionToLoad, loadExtensions } from "./extension-loading.js";
import { availableMemoryBytes } from "./host-memory.js";
import { IdleTimeouts, type IdleTimeoutsOptions } from "./idle-timeouts.js";
import { endOrphanedBrowser } from "./orphaned-browser.js";
import { ReadyBrowser } from "./ready-browser.js";
import type { WarmPool } from "./warm-pool.js";

/** The inactivity timeout of a create that gives none, in seconds: the spec's default. */
const DEFAULT_TIMEOUT_SECONDS = limits.schemas.CreateBrowserRequest.timeout_seconds.default;

/** How long a create refused for the host's memory is told to wait: about as long as a browser takes to end. */
const MEMORY_RETRY_AFTER_SECONDS = 5;
/** What a create refused by a draining server is told to wait: about one lease renewal, by when another node (or this one restarted) takes it. */
const DRAINING_RETRY_AFTER_SECONDS = 5;

/** How often the reservations of browsers not kept are deleted again while the database refuses it. */
export const FREE_RETRY_MS = 1_000;

/** Told when a browser process starts and when it ends (stopped or crashed). */
export interface BrowserLifecycle {
  /**
   * A launched browser is about to be handed over (its tab still on `about:blank`):
   * resolves once whatever must see its start_url load from the beginning is ready.
   */
  prepare(launched: LaunchedBrowser): Promise<void>;
  started(browserId: string, launched: LaunchedBrowser): void;
  ended(browserId: string): void;
}

/** What `POST /browsers` asks for, its extensions resolved. */
export interface CreateBrowserInput {
  name?: string;
  start_url?: string;
  /** Seconds of inactivity after which the browser is ended; the spec's default (60) when omitted. */
  timeoutSeconds?: number;
  /** The extensions to load before the browser is handed over, in order. */
  extensions?: readonly ExtensionToLoad[];
  /** Placed here by another node: the lease this node was chosen under (see {@link BrowserReservation.placedUnder}). */
  placedUnder?: string;
  /** The profile to start from: its saved state (`undefined`: never saved), and whether the browser saves into it. */
  profile?: { id: string; name: string | null; save: boolean; state: ProfileState | undefined };
  /** The service's own browser (a login flow's, a health check's): hidden from the API's reads, WebMCP and DevTools clients. */
  internal?: boolean;
  /** What it captures of its telemetry, resolved (`telemetry/telemetry-settings.ts`); absent: nothing. */
  telemetry?: BrowserTelemetryConfig | null;
}

/**
 * How a create starts its browser, decided once from what it asks. `pool`: a warm browser
 * handed over as it is (a cold launch when none is ready). `pool-then-load`: a warm
 * browser, or a cold one, that loads extensions before it is handed over. `cold`: a
 * launch for it alone, the only way to start from a profile, whose state is unpacked
 * before Chromium starts.
 */
type LaunchPlan =
  | { start: "pool" }
  | { start: "pool-then-load"; extensions: readonly ExtensionToLoad[] }
  | { start: "cold"; extensions: readonly ExtensionToLoad[]; profile: NonNullable<CreateBrowserInput["profile"]> };

function launchPlan(input: CreateBrowserInput): LaunchPlan {
  const extensions = input.extensions ?? [];
  if (input.profile !== undefined) return { start: "cold", extensions, profile: input.profile };
  return extensions.length > 0 ? { start: "pool-then-load", extensions } : { start: "pool" };
}

/** How long a browser that saves into its profile may take to give its cookies at its end. */
const COOKIES_TIMEOUT_MS = 5_000;

/** Where a browser's state goes when it ends, for a browser that saves into its profile. */
export interface ProfileSaver {
  /** The most a profile's saved state may hold, in bytes. */
  maxBytes: number;
  /** Stores `state` as profile `profile`'s, replacing what it had, all or nothing. */
  save(profile: { id: string; projectId: string }, state: ProfileState): Promise<void>;
  /** Records on the profile why browser `browserId`'s state was not saved into it. */
  failed(profile: { id: string; projectId: string }, browserId: string, error: unknown): Promise<void>;
}

/** How one create ended, for the server's metrics: no tenant's data, only its outcome and time. */
export interface CreateObservation {
  /** `created`; `refused` for a 4xx answer (a limit, a name taken, a bad extension); `failed` for a 5xx. */
  outcome: "created" | "refused" | "failed";
  /** Whether a warm browser was taken, or one launched for it; `undefined` when none started. */
  start: "warm" | "cold" | undefined;
  /** From the request's arrival at the service to its answer. */
  seconds: number;
}

/** The `Storage.setCookies` form of cookies `Storage.getCookies` gave: a session cookie has no expiry. */
function cookieParams(cookies: readonly unknown[]): unknown[] {
  return cookies.map((cookie) => {
    const { size: _size, session, expires, ...rest } = cookie as Record<string, unknown> & { session?: boolean; expires?: number };
    return session === true || typeof expires !== "number" || expires < 0 ? rest : { ...rest, expires };
  });
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
  readonly #log: Pick<ServerLog, "info" | "warn" | "error">;
  readonly #lifecycle: BrowserLifecycle;
  readonly #pool: WarmPool | undefined;
  readonly #committed: () => Promise<void> | undefined;
  readonly #running = new Map<string, LaunchedBrowser>();
  // The DevTools access token of each running browser. Only its hash is stored; it is
  // kept here, and only while the browser runs, so that reads can show `cdp_ws_url`.
  readonly #tokens = new Map<string, string>();
  // Browsers the server is stopping: their exit is not a crash.
  readonly #stopping = new Set<string>();
  #shuttingDown = false;
  #draining = false;
  // Reservations of browsers not kept that the database did not let go of yet (see #free).
  readonly #unfreed = new Set<string>();
  #freeTimer: NodeJS.Timeout | undefined;
  // Creates under way: closeAll() waits for them, so none records or keeps a browser after it.
  readonly #creating = new Set<Promise<unknown>>();
  readonly #idle: IdleTimeouts;
  readonly #memoryFloorBytes: number;
  readonly #availableMemory: () => number;
  readonly #profiles: ProfileSaver | undefined;
  // Running browsers that save into their profile when they end.
  readonly #savers = new Map<string, { id: string; projectId: string }>();
  readonly #observeCreate: ((observation: CreateObservation) => void) | undefined;
  readonly #telemetry: TelemetryService | undefined;

  /**
   * `pool`, when given, supplies browsers launched ahead of time; it is closed by
   * {@link closeAll}. Its browsers are not sessions: no slot, no record, until taken.
   * `committed`, when given, tells when the commits made so far are on disk (`undefined`
   * if they already are): a new browser is sent to its start_url only then, so that its
   * page load does not take the CPU from the sync its create's response waits for.
   */
  constructor(
    store: BrowserStore,
    launcher: BrowserLauncher,
    planLimit: number,
    log: Pick<ServerLog, "info" | "warn" | "error">,
    lifecycle: BrowserLifecycle,
    options: {
      pool?: WarmPool | undefined;
      committed?: () => Promise<void> | undefined;
      /** The clock and sweep of the inactivity timeouts (a test's fake clock). */
      idle?: Omit<IdleTimeoutsOptions, "end">;
      /** MiB of memory the host keeps available: below it a create is refused before anything starts; `0` (default): no floor. */
      minFreeMemoryMib?: number;
      /** Bytes of memory available now; default {@link availableMemoryBytes}. */
      availableMemory?: () => number;
      /** Where browsers that save into their profile put its state when they end; without it, none saves. */
      profiles?: ProfileSaver;
      /** Told of each create's end (the server's metrics). */
      observeCreate?: (observation: CreateObservation) => void;
      /** The browsers' telemetry: started before a browser is handed over, ended with it. */
      telemetry?: TelemetryService;
    } = {},
  ) {
    this.#store = store;
    this.#launcher = launcher;
    this.#planLimit = planLimit;
    this.#log = log;
    this.#lifecycle = lifecycle;
    this.#pool = options.pool;
    this.#committed = options.committed ?? (() => undefined);
    this.#memoryFloorBytes = (options.minFreeMemoryMib ?? 0) * 1024 * 1024;
    this.#availableMemory = options.availableMemory ?? availableMemoryBytes;
    this.#profiles = options.profiles;
    this.#observeCreate = options.observeCreate;
    this.#telemetry = options.telemetry;
    this.#idle = new IdleTimeouts({
      ...options.idle,
      end: (id, idleMs) => {
        systemEvent(this.#telemetry?.of(id), "system_timeout", { idle_ms: Math.round(idleMs) });
        return this.#stop(id).then(
          () => this.#log.info({ browser: id, idleMs: Math.round(idleMs) }, "browser ended after its timeout without activity"),
          (error: unknown) => {
            // Its slot and name stay taken until the stop goes through (the database down a
            // moment, say): the next sweep tries again, as nobody else would.
            this.#log.error({ browser: id, err: error }, "could not end a browser past its timeout; trying again");
            if (!this.#shuttingDown) this.#idle.watch(id, 0);
          },
        );
      },
    });
  }

  /** Marks what a previous, killed server left running as crashed and ends those processes. */
  async recoverAbandoned(): Promise<void> {
    for (const row of await this.#store.recoverAbandoned()) {
      endOrphanedBrowser(row.pid, row.user_data_dir);
      this.#log.warn({ browser: row.id }, "browser left running by a previous server process was ended and marked crashed");
    }
  }

  /**
   * Starts a browser in `project`: reserves its slot atomically (409 `name_conflict`,
   * 429 `concurrency_limit_exceeded`), takes a warm browser or launches one, loads the
   * extensions it names (422 `extension_load_failed`), and records it as running. Any
   * failure ends the browser and frees the slot; a {@link BrowserLaunchError} is 503
   * `browser_unavailable`, a fault of the server 500 `internal_error`.
   */
  async create(project: ProjectRow, input: CreateBrowserInput): Promise<BrowserRow> {
    const began = performance.now();
    const how: { start?: "warm" | "cold" } = {};
    const observe = (outcome: CreateObservation["outcome"]) =>
      this.#observeCreate?.({ outcome, start: how.start, seconds: (performance.now() - began) / 1000 });
    try {
      if (this.#draining) throw new NodeDrainingError(DRAINING_RETRY_AFTER_SECONDS);
      this.#checkMemory();
      const creating = this.#create(project, input, how);
      this.#creating.add(creating);
      try {
        const row = await creating;
        observe("created");
        return row;
      } finally {
        this.#creating.delete(creating);
      }
    } catch (error) {
      observe(error instanceof ApiError && error.status < 500 ? "refused" : "failed");
      throw error;
    }
  }

  /**
   * Starts the drain of a server that is shutting down: later creates are refused (503
   * `node_draining`), the warm browsers are ended (another node's pool serves the
   * creates now), and the running browsers go on until they end or {@link closeAll}.
   */
  async drain(): Promise<void> {
    this.#draining = true;
    await this.#pool?.close();
  }

  /** Whether {@link drain} was called. */
  get draining(): boolean {
    return this.#draining;
  }

  /** The browsers this server runs now, and those it is starting. */
  counts(): { running: number; starting: number } {
    return { running: this.#running.size, starting: this.#creating.size };
  }

  async #create(project: ProjectRow, input: CreateBrowserInput, how: { start?: "warm" | "cold" }): Promise<BrowserRow> {
    const plan = launchPlan(input);
    const extensions = plan.start === "pool" ? [] : plan.extensions;
    const profile = plan.start === "cold" ? plan.profile : undefined;
    const reservation = {
      orgId: project.org_id,
      projectId: project.id,
      name: input.name,
      timeoutSeconds: input.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
      planLimit: this.#planLimit,
      extensions,
      ...(input.placedUnder === undefined ? {} : { placedUnder: input.placedUnder }),
      ...(profile === undefined ? {} : { profile: { id: profile.id, name: profile.name, save: profile.save } }),
      ...(input.internal === true ? { internal: true } : {}),
      ...(input.telemetry == null ? {} : { telemetry: input.telemetry }),
    };
    if (plan.start === "pool") {
      // None ready (a burst larger than the pool, or no pool) means a cold launch below.
      const warm = await this.#createFromPool(reservation, input.start_url);
      if (warm !== undefined) {
        how.start = "warm";
        return warm;
      }
    }
    if (profile?.save === true && this.#profiles === undefined) {
      throw new BrowserUnavailableError(new BrowserLaunchError("This server keeps no profiles' state, so no browser can save into one."));
    }
    const row = await this.#store.reserve(reservation);
    let started: { launched: LaunchedBrowser; browser: ReadyBrowser; recorded?: () => void };
    try {
      // A warm browser that loads extensions first is taken as a cold one would start: its
      // record stays `starting` until they are loaded.
      started =
        (plan.start === "pool-then-load" ? this.#takeWarm() : undefined) ??
        (await this.#launchCold(
          profile === undefined
            ? {}
            : { ...(profile.state === undefined ? {} : { profileState: profile.state.storage }), ...(profile.save ? { saveProfile: true } : {}) },
        ));
    } catch (error) {
      await this.#free(row.id, "its browser did not start");
      throw error;
    }
    const { launched, browser } = started;
    how.start = started.recorded === undefined ? "cold" : "warm";
    try {
      // A launched browser the pool does not record: its row names it from now on, so
      // that a crash while its extensions load leaves no process or profile behind.
      if (plan.start !== "pool" && started.recorded === undefined) await this.#store.recordProcess(row.id, launched);
      await loadExtensions(launched, extensions);
      const cookies = profile?.state?.cookies ?? [];
      if (cookies.length > 0) {
        await launched.cdp.call("Storage.setCookies", { cookies: cookieParams(cookies) }).catch((error: unknown) => {
          throw new ProfileLoadFailedError("The profile's cookies could not be set in the new browser; it was not started.", error);
        });
      }
    } catch (error) {
      await this.#abandon(row.id, started, "its extensions or profile failed to load");
      if (error instanceof ApiError) throw error;
      throw new InternalError("The browser's extensions could not be prepared.", error);
    }
    if (this.#shuttingDown) {
      await this.#abandon(row.id, started, "the server is shutting down");
      throw new InternalError("The server is shutting down; the browser was not kept.");
    }
    const token = newBrowserToken();
    let running: BrowserRow | undefined;
    try {
      running = await this.#store.markRunning(row.id, launched, browserTokenHash(token));
    } catch (error) {
      await this.#abandon(row.id, started, "could not record a started browser as running");
      throw error;
    }
    if (running === undefined) {
      // Its reservation was dropped while it started (this node's lease lapsed): no row
      // counts it any more, so it must not outlive this request.
      await this.#abandon(row.id, started, "its reservation was dropped while it started");
      throw new BrowserUnavailableError(new BrowserLaunchError("The browser's reservation was dropped while it started: its node lost its lease."));
    }
    // Its session's record now names the process, for the clean-up after a kill.
    started.recorded?.();
    this.#adopt(running, launched, token);
    // Before its start_url: the capture sees its first page from the beginning.
    await this.#startTelemetry(running, launched);
    try {
      browser.handOver(input.start_url, this.#committed());
    } catch (error) {
      // The browser died since it answered: its exit marks it crashed, as after any start.
      this.#log.warn({ browser: row.id, err: error }, "a new browser could not be sent to its start_url");
    }
    return running;
  }

  /** Why a create would be refused for the host's memory now (see {@link #checkMemory}), or `undefined`. */
  memoryLow(): string | undefined {
    if (this.#memoryFloorBytes === 0) return undefined;
    const available = this.#availableMemory();
    const mib = (bytes: number) => Math.floor(bytes / (1024 * 1024));
    return available >= this.#memoryFloorBytes
      ? undefined
      : `the host has ${mib(available)} MiB of memory available, below the ${mib(this.#memoryFloorBytes)} MiB it keeps`;
  }

  /** Refuses a create (503 `host_memory_low`) while the host's available memory is below the floor. */
  #checkMemory(): void {
    if (this.#memoryFloorBytes === 0) return;
    const available = this.#availableMemory();
    if (available >= this.#memoryFloorBytes) return;
    const mib = (bytes: number) => Math.floor(bytes / (1024 * 1024));
    throw new HostMemoryLowError(mib(available), mib(this.#memoryFloorBytes), MEMORY_RETRY_AFTER_SECONDS);
  }

  /**
   * Ends a started browser that will not be kept, and frees its reservation (retried
   * while the database refuses it, see {@link #free}), so that the caller's error is the
   * one reported.
   */
  async #abandon(id: string, started: { browser: ReadyBrowser; recorded?: () => void }, why: string): Promise<void> {
    await started.browser.close().catch((error: unknown) => this.#log.error({ err: error, browser: id }, `could not close a browser not kept: ${why}`));
    started.recorded?.();
    await this.#free(id, why);
  }

  /**
   * Deletes the reservation of a browser that is not kept. When the database does not
   * take the delete (it is down a moment), it is retried every {@link FREE_RETRY_MS} until
   * it does: the row is hidden from every read, so no client could free its slot.
   */
  async #free(id: string, why: string): Promise<void> {
    try {
      await this.#store.remove(id);
    } catch (error) {
      this.#log.error({ err: error, browser: id }, `could not free the reservation of a browser not kept (${why}); retrying`);
      this.#unfreed.add(id);
      this.#retryFrees();
    }
  }

  #retryFrees(): void {
    if (this.#freeTimer !== undefined || this.#unfreed.size === 0) return;
    this.#freeTimer = setTimeout(() => {
      this.#freeTimer = undefined;
      void this.#freeUnfreed().then(() => this.#retryFrees());
    }, FREE_RETRY_MS);
    this.#freeTimer.unref();
  }

  async #freeUnfreed(): Promise<void> {
    let failure: unknown;
    for (const id of [...this.#unfreed]) {
      try {
        await this.#store.remove(id);
        this.#unfreed.delete(id);
      } catch (error) {
        failure = error;
      }
    }
    if (failure !== undefined) this.#log.warn({ err: failure, browsers: this.#unfreed.size }, "could not free the reservations of browsers not kept yet");
  }

  /** A ready warm browser taken out of the pool, not yet handed over; `undefined` when none is ready. */
  #takeWarm(): { launched: LaunchedBrowser; browser: ReadyBrowser; recorded: () => void } | undefined {
    if (this.#pool === undefined || this.#shuttingDown) return undefined;
    const warm = this.#pool.next();
    if (warm === undefined) return undefined;
    const taken = this.#pool.take(warm);
    return { launched: warm.launched, browser: warm, recorded: () => taken.recorded() };
  }

  /**
   * A browser launched now, on about:blank, handed over later as a warm browser is:
   * start_url loads only once the browser's tab is followed, so that every tool of the
   * page is seen.
   */
  async #launchCold(options: LaunchOptions = {}): Promise<{ launched: LaunchedBrowser; browser: ReadyBrowser }> {
    let launched: LaunchedBrowser;
    try {
      launched = await this.#launcher.launch(options);
    } catch (error) {
      if (error instanceof ProfileLoadError) throw new ProfileLoadFailedError(error.message, error);
      if (error instanceof ProfilesUnsupportedError) throw new BrowserUnavailableError(error, error.message);
      // Chromium missing, not runnable, or dying before it answered: a documented 503 the
      // client can tell from a fault of the server itself.
      if (error instanceof BrowserLaunchError) throw new BrowserUnavailableError(error);
      throw new InternalError("The browser failed to start.", error);
    }
    let browser: ReadyBrowser;
    try {
      browser = await ReadyBrowser.prepare(launched);
    } catch (error) {
      await launched.close().catch(() => undefined);
      throw new BrowserUnavailableError(new BrowserLaunchError("The browser started without a usable tab.", error));
    }
    await this.#lifecycle
      .prepare(launched)
      .catch((error: unknown) =>
        this.#log.warn({ err: error }, "could not follow a new browser's WebMCP tools before its start_url; the next WebMCP request connects again"),
      );
    return { launched, browser };
  }

  /**
   * A browser from the warm pool, recorded and handed over (navigating to `startUrl`).
   * It is held out of the pool while its reservation is written, so no other create can
   * take the same one, and a create refused by a limit or a name gives it back: the pool
   * is as it was. `undefined` when no warm browser is ready.
   */
  async #createFromPool(reservation: BrowserReservation, startUrl: string | undefined): Promise<BrowserRow | undefined> {
    const pool = this.#pool;
    if (pool === undefined) return undefined;
    for (let held = this.#shuttingDown ? undefined : pool.hold(); held !== undefined; held = this.#shuttingDown ? undefined : pool.hold()) {
      const warm = held.warm;
      // The token is made only now: a warm browser has none while it waits.
      const token = newBrowserToken();
      let row: BrowserRow;
      try {
        row = await this.#store.reserve({ ...reservation, running: { launched: warm.launched, tokenSha256: browserTokenHash(token) } });
      } catch (error) {
        held.release();
        throw error;
      }
      if (this.#shuttingDown) {
        // closeAll() began during the write and will not see this browser: it goes with the pool.
        held.release();
        await this.#free(row.id, "the server is shutting down");
        throw new InternalError("The server is shutting down; the browser was not kept.");
      }
      const taken = held.take();
      await this.#startTelemetry(row, warm.launched);
      try {
        warm.handOver(startUrl, this.#committed());
      } catch (error) {
        // Its pipe closed in the meantime: the slot is freed and the next one tried.
        await this.#telemetry?.close(row.id);
        await this.#free(row.id, "its warm browser could not be handed over");
        this.#log.warn({ err: error }, "a warm browser could not be handed over; trying the next");
        warm
          .close()
          .catch((closeError: unknown) => this.#log.error({ err: closeError }, "could not close an unusable warm browser"))
          .finally(() => taken.recorded());
        continue;
      }
      // Its session's record now names the process, for the clean-up after a kill.
      taken.recorded();
      this.#adopt(row, warm.launched, token);
      return row;
    }
    return undefined;
  }

  /** Makes a recorded, running browser the service's: its token, its end (deleted, crashed or timed out), its WebMCP. */
  #adopt(row: BrowserRow, launched: LaunchedBrowser, token: string): void {
    const id = row.id;
    this.#running.set(id, launched);
    if (row.profile_save === 1 && row.profile_id !== null) this.#savers.set(id, { id: row.profile_id, projectId: row.project_id });
    this.#tokens.set(id, token);
    this.#idle.watch(id, row.timeout_seconds);
    launched.cdp.onCloseRequested(() => {
      // A client's `Browser.close` ends the browser as `DELETE /browsers/{id}` does.
      this.#stop(id).catch((error: unknown) => this.#log.error({ browser: id, err: error }, "could not delete a browser closed by a DevTools client"));
    });
    launched.onExit((exit) => {
      this.#running.delete(id);
      this.#savers.delete(id);
      this.#tokens.delete(id);
      this.#idle.forget(id);
      this.#lifecycle.ended(id);
      if (!this.#stopping.has(id)) {
        const recorder = this.#telemetry?.of(id);
        if (exit.overBudget === "out_of_memory") systemEvent(recorder, "system_oom_kill", { reason: exit.overBudget });
        else systemEvent(recorder, "service_crashed", { reason: exit.overBudget ?? "process_exited" });
      }
      this.#closeTelemetry(id);
      if (this.#stopping.has(id)) return;
      this.#store.markCrashed(id, exit.overBudget ?? "process_exited").then(
        () => this.#log.warn({ browser: id, exit }, "browser process exited unexpectedly; marked crashed"),
        (error: unknown) => this.#log.error({ browser: id, err: error }, "could not mark an exited browser as crashed"),
      );
      // Ends whatever the crash left of the process group and removes the profile.
      launched.close().catch((error: unknown) => this.#log.error({ browser: id, err: error }, "could not clean up after a crashed browser"));
    });
    this.#lifecycle.started(id, launched);
  }

  /** Starts a browser's telemetry, when its create asked for any. */
  async #startTelemetry(row: BrowserRow, launched: LaunchedBrowser): Promise<void> {
    if (this.#telemetry === undefined || row.telemetry === null) return;
    await this.#telemetry.start(row.id, row.project_id, JSON.parse(row.telemetry) as BrowserTelemetryConfig, launched.cdp, {
      secretInputs: row.internal === 1,
    });
  }

  #closeTelemetry(id: string): void {
    this.#telemetry?.close(id).catch((error: unknown) => this.#log.error({ browser: id, err: error }, "could not end a browser's telemetry"));
  }

  /** A request on a browser this node runs: its inactivity timeout starts again. */
  touch(browserId: string): void {
    this.#idle.touch(browserId);
  }

  /**
   * A connection (a DevTools client, a live view viewer) or a long request (an invocation)
   * on a browser this node runs: it stays active until the returned release is called.
   */
  hold(browserId: string): () => void {
    return this.#idle.hold(browserId);
  }

  /** The DevTools access token of a running browser; `undefined` once it stopped or crashed. */
  token(browserId: string): string | undefined {
    return this.#tokens.get(browserId);
  }

  /** The DevTools pipe of a running browser. */
  cdp(browserId: string): CdpRouter | undefined {
    return this.#running.get(browserId)?.cdp;
  }

  /**
   * Stops the browser if it runs, then deletes its record (freeing its slot and name).
   * With `discardChanges`, a browser that saves into its profile ends without saving
   * (a login flow that failed leaves the profile as it was).
   */
  async delete(row: BrowserRow, options: { discardChanges?: boolean } = {}): Promise<void> {
    if (options.discardChanges === true) this.#savers.delete(row.id);
    await this.#stop(row.id);
  }

  async #stop(id: string): Promise<void> {
    this.#stopping.add(id);
    this.#tokens.delete(id);
    this.#idle.forget(id);
    try {
      await this.#end(id);
      await this.#store.remove(id);
    } finally {
      this.#stopping.delete(id);
    }
  }

  /**
   * Closes a running browser the server stops; one that saves into its profile is asked
   * to close and its state is stored. A save that fails (past the cap, the database
   * down) is logged, and the profile keeps its previous state; the browser ends anyway.
   */
  async #end(id: string): Promise<void> {
    const launched = this.#running.get(id);
    if (launched === undefined) return;
    const saver = this.#savers.get(id);
    const profiles = this.#profiles;
    if (saver === undefined || profiles === undefined || launched.closeAndSave === undefined) return launched.close();
    try {
      let timer: NodeJS.Timeout | undefined;
      const { cookies } = (await Promise.race([
        launched.cdp.call("Storage.getCookies", {}),
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`The browser did not give its cookies within ${COOKIES_TIMEOUT_MS} ms.`)), COOKIES_TIMEOUT_MS);
        }),
      ]).finally(() => clearTimeout(timer))) as { cookies: unknown[] };
      const storage = await launched.closeAndSave(profiles.maxBytes);
      await profiles.save(saver, { cookies, storage });
      this.#log.info({ browser: id, profile: saver.id, bytes: storage.length }, "saved the browser's state into its profile");
    } catch (error) {
      this.#log.error({ browser: id, profile: saver.id, err: error }, "the browser's state was not saved; its profile keeps its previous state");
      await profiles
        .failed(saver, id, error)
        .catch((recordError: unknown) =>
          this.#log.error({ browser: id, profile: saver.id, err: recordError }, "could not record on the profile why it was not saved"),
        );
    } finally {
      await launched.close();
    }
  }

  /**
   * Ends every running browser as if it had crashed (its record is marked `crashed` by
   * its exit, if the database still answers): for a node that lost its lease, whose
   * browsers the other nodes already count as crashed. Creates go on being served.
   */
  async endAll(): Promise<void> {
    const results = await Promise.allSettled([...this.#running.values()].map((launched) => launched.close()));
    for (const result of results) {
      if (result.status === "rejected") this.#log.error({ err: result.reason }, "could not end a browser of a node that lost its lease");
    }
  }

  /** Closes every browser (the warm ones too) and deletes their records; later launches are refused. */
  async closeAll(): Promise<void> {
    this.#shuttingDown = true;
    this.#idle.close();
    // Each stops at its next step (a launch ends within its time limit): it closes its
    // browser and deletes its row while the database is still open.
    await Promise.allSettled([...this.#creating]);
    // A last try for the reservations the database refused; what is left is the next start's (see recoverAbandoned).
    clearTimeout(this.#freeTimer);
    this.#freeTimer = undefined;
    await this.#freeUnfreed();
    const rows = [...this.#running.keys()];
    const results = await Promise.allSettled([
      ...rows.map(async (id) => {
        this.#stopping.add(id);
        await this.#end(id);
        await this.#store.remove(id);
      }),
      ...(this.#pool === undefined ? [] : [this.#pool.close()]),
    ]);
    const failures = results.filter((result): result is PromiseRejectedResult => result.status === "rejected");
    if (failures.length > 0)
      throw new AggregateError(
        failures.map((failure) => failure.reason),
        `${failures.length} browser(s) failed to close.`,
      );
  }
}
