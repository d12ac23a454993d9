import type { BrowserTelemetryConfig } from "@browser-service/types";
import type { BrowserUrlSet } from "../cdp/public-url.js";
import type { ExtensionUse } from "../extensions/extension-store.js";
import type { ResourceBudget } from "../sandbox/browser-cgroups.js";
import { newId } from "../storage/ids.js";
import type { LaunchedBrowser } from "./browser-launcher.js";

/** An extension a browser was started with, as the API shows it (the spec's `BrowserExtension`). */
export interface BrowserExtension {
  id: string;
  name: string | null;
}

/** A browser as the API shows it (the spec's `Browser`). */
export interface Browser {
  id: string;
  name: string | null;
  status: "running" | "crashed";
  crash_reason: CrashReason | null;
  created_at: string;
  timeout_seconds: number;
  cdp_ws_url: string;
  live_view_url: string;
  live_view_read_only_url: string;
  sandboxed: boolean;
  resource_budget: BrowserResourceBudget | null;
  extensions: BrowserExtension[];
  profile: BrowserProfile | null;
  telemetry: BrowserTelemetryConfig | null;
}

/** The profile a browser started with, as the API shows it (the spec's `BrowserProfile`). */
export interface BrowserProfile {
  id: string;
  name: string | null;
  save_changes: boolean;
}

/** Why a browser crashed (the spec's `BrowserCrashReason`). */
export type CrashReason = "out_of_memory" | "process_limit" | "process_exited" | "server_lost";

/** What a browser may use of the host, as the API shows it (the spec's `ResourceBudget`). */
export interface BrowserResourceBudget {
  memory_mib: number;
  max_processes: number;
  cpus: number;
}

/** What the store keeps of a launched browser. */
export type LaunchedRecord = Pick<LaunchedBrowser, "pid" | "userDataDir" | "sandboxed" | "budget">;

/** The budget columns of a launched browser: all `null` without a budget. */
export function budgetColumns(launched: LaunchedRecord | undefined): [number | null, number | null, number | null] {
  const budget: ResourceBudget | undefined = launched?.budget;
  if (budget === undefined) return [null, null, null];
  return [Math.floor(budget.memoryBytes / (1024 * 1024)), budget.maxProcesses, budget.cpus];
}

/** A browser row, including the bookkeeping the API does not show. */
export interface BrowserRow {
  id: string;
  project_id: string;
  name: string | null;
  status: "starting" | "running" | "crashed";
  /** Why it crashed; `null` unless `crashed`. */
  crash_reason: CrashReason | null;
  /** SHA-256 of the browser's DevTools access token; `null` until it runs and after it crashed. */
  cdp_token_sha256: string | null;
  pid: number | null;
  user_data_dir: string | null;
  /** 1 when the browser runs (or ran) in its sandbox, else 0. */
  sandboxed: number;
  /** Its resource budget: all three `null` when it runs without one. */
  budget_memory_mib: number | null;
  budget_max_processes: number | null;
  budget_cpus: number | null;
  created_at: string;
  /** Seconds of inactivity after which the service ends the browser. */
  timeout_seconds: number;
  /** The profile it started with (`null`: none), its name then, and 1 when it saves into it. */
  profile_id: string | null;
  profile_name: string | null;
  profile_save: number;
  /** 1 for the service's own browser (a login flow's, a health check's): no API read, WebMCP call or DevTools client reaches it. */
  internal: number;
  /** What it captures of its telemetry (the spec's `BrowserTelemetryConfig` as JSON); `null`: nothing. */
  telemetry: string | null;
  /** The node whose process runs it, where several servers share a database; absent: this server's. */
  node_id?: string;
}

/** What {@link BrowserStore.reserve} needs. */
export interface BrowserReservation {
  orgId: string;
  projectId: string;
  name: string | undefined;
  /** Seconds of inactivity after which the service ends the browser. */
  timeoutSeconds: number;
  /** The organization limit from its plan. */
  planLimit: number;
  /**
   * A browser already running (taken from the warm pool): the row is inserted `running`
   * with its process and token hash, in the same transaction as the checks, so one
   * commit (one round of fsyncs) records it instead of two.
   */
  running?: { launched: LaunchedRecord; tokenSha256: string };
  /** The extensions it starts with, in order; recorded with the row. */
  extensions?: readonly ExtensionUse[];
  /**
   * The profile it starts with; with `save`, it saves into it when it ends, and the
   * reservation is refused (409 `profile_in_use`) while another browser not crashed does.
   */
  profile?: { id: string; name: string | null; save: boolean };
  /**
   * For a create another node placed on this one: the lease this node was chosen under.
   * The reservation is refused (503 `browser_unavailable`) unless that lease is still
   * current, since the sender starts the browser elsewhere once it lapses. Nodes share
   * PostgreSQL only: SQLite has no other node to place a create.
   */
  placedUnder?: string;
  /** The service's own browser (see {@link BrowserRow.internal}). */
  internal?: boolean;
  /** What it captures of its telemetry, resolved (`telemetry/telemetry-settings.ts`); absent or `null`: nothing. */
  telemetry?: BrowserTelemetryConfig | null;
}

/**
 * The row a reservation inserts: `starting`, or `running` with its process and token hash
 * when it takes a browser already running (from the warm pool).
 */
export function reservedRow(request: BrowserReservation): BrowserRow {
  const running = request.running;
  const [budgetMemoryMib, budgetMaxProcesses, budgetCpus] = budgetColumns(running?.launched);
  return {
    id: newId("browser"),
    project_id: request.projectId,
    name: request.name ?? null,
    status: running === undefined ? "starting" : "running",
    crash_reason: null,
    cdp_token_sha256: running?.tokenSha256 ?? null,
    pid: running?.launched.pid ?? null,
    user_data_dir: running?.launched.userDataDir ?? null,
    sandboxed: running?.launched.sandboxed === true ? 1 : 0,
    budget_memory_mib: budgetMemoryMib,
    budget_max_processes: budgetMaxProcesses,
    budget_cpus: budgetCpus,
    created_at: new Date().toISOString(),
    timeout_seconds: request.timeoutSeconds,
    profile_id: request.profile?.id ?? null,
    profile_name: request.profile?.name ?? null,
    profile_save: request.profile?.save === true ? 1 : 0,
    internal: request.internal === true ? 1 : 0,
    telemetry: request.telemetry == null ? null : JSON.stringify(request.telemetry),
  };
}

/** The API's view of a launched browser row, with the URLs of the request's host. */
export function toBrowser(row: BrowserRow, urls: BrowserUrlSet, extensions: readonly BrowserExtension[]): Browser {
  return {
    id: row.id,
    name: row.name,
    status: row.status === "crashed" ? "crashed" : "running",
    crash_reason: row.status === "crashed" ? (row.crash_reason ?? "process_exited") : null,
    created_at: row.created_at,
    timeout_seconds: row.timeout_seconds,
    cdp_ws_url: urls.cdp_ws_url,
    live_view_url: urls.live_view_url,
    live_view_read_only_url: urls.live_view_read_only_url,
    sandboxed: row.sandboxed === 1,
    resource_budget:
      row.budget_memory_mib === null || row.budget_max_processes === null || row.budget_cpus === null
        ? null
        : { memory_mib: row.budget_memory_mib, max_processes: row.budget_max_processes, cpus: row.budget_cpus },
    extensions: extensions.map(({ id, name }) => ({ id, name })),
    profile: row.profile_id === null ? null : { id: row.profile_id, name: row.profile_name, save_changes: row.profile_save === 1 },
    telemetry: row.telemetry === null ? null : (JSON.parse(row.telemetry) as BrowserTelemetryConfig),
  };
}

/** Browser records and their concurrency slots. */
export interface BrowserStore {
  /**
   * Takes a concurrency slot for a new browser: in ONE transaction it checks the name,
   * that the project is active, the project's effective cap and the organization limit,
   * and inserts a `starting` (or, given `running`, a `running`) row that counts as usage.
   * Concurrent creates therefore never exceed a cap. The caps are read inside the
   * transaction too, so a cap changed a moment ago applies.
   */
  reserve(request: BrowserReservation): Promise<BrowserRow>;
  /**
   * Records that a reserved browser is up, with the hash of its access token; the
   * extensions and the profile it started with are marked used (`last_used_at`) at its
   * `created_at`.
   * `undefined` when the reservation is no longer `starting`: on a database shared by
   * nodes, this node's lease lapsed meanwhile and its reservations were dropped.
   */
  markRunning(id: string, launched: LaunchedRecord, tokenSha256: string): Promise<BrowserRow | undefined>;
  /**
   * Records the process and profile of a browser still `starting` (launched, its
   * extensions not loaded yet), so that the next start cleans them up after a crash.
   */
  recordProcess(id: string, launched: Pick<LaunchedBrowser, "pid" | "userDataDir">): Promise<void>;
  /** Records that a browser's process ended without being stopped, and why; its slot is free again. */
  markCrashed(id: string, reason: CrashReason): Promise<void>;
  /** Deletes a browser's record, freeing its slot and its name. */
  remove(id: string): Promise<void>;
  /** The launched browser of the project with this id or, failing that, this name, never an internal one; 404 `not_found` otherwise. */
  getByIdOrName(projectId: string, idOrName: string): Promise<BrowserRow>;
  /** The launched browser with this id in any project, with its project's organization; ids only, never names. */
  findLaunched(id: string): Promise<(BrowserRow & { org_id: string }) | undefined>;
  /**
   * The extensions each of these browsers was started with, in the order its create
   * named them; a browser with none is absent. Read only where a Browser is shown, so
   * that the browser-bound paths (WebMCP, DevTools) pay nothing for them.
   */
  extensionsOf(browserIds: readonly string[]): Promise<Map<string, BrowserExtension[]>>;
  /** One page of the project's launched browsers (never an internal one), oldest first, and whether more follow. */
  list(projectId: string, offset: number, limit: number): Promise<{ items: BrowserRow[]; hasMore: boolean }>;
  /**
   * After an unclean exit of the previous server: every browser it left `starting` or
   * `running` has no process this server controls, so it is marked `crashed` (freeing
   * its slot). On a database shared by nodes, so are this node's browsers that another
   * node marked `crashed` while this one was away (reaped: their process and profile
   * are on this node's host). Returns those rows so their processes and profiles can be
   * cleaned up, once.
   */
  recoverAbandoned(): Promise<BrowserRow[]>;
}
