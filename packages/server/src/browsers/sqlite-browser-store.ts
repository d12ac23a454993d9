import { NameConflictError, NotFoundError, ProfileInUseError, ProjectNotFoundError } from "../http/api-errors.js";
import { assertRoomForBrowser, effectiveProjectCap } from "../limits/concurrency.js";
import type { UsageStore } from "../limits/usage-store.js";
import { isStorableText, isUniqueViolation, type SqliteDatabase } from "../storage/database.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import type { LaunchedBrowser } from "./browser-launcher.js";
import {
  type BrowserExtension,
  type BrowserReservation,
  type BrowserRow,
  type BrowserStore,
  budgetColumns,
  type CrashReason,
  type LaunchedRecord,
  reservedRow,
} from "./browser-store.js";

const COLUMNS =
  "id, project_id, name, status, crash_reason, cdp_token_sha256, pid, user_data_dir, sandboxed, budget_memory_mib, budget_max_processes, budget_cpus, created_at, timeout_seconds, profile_id, profile_name, profile_save, internal";
// Rows still 'starting' have no DevTools URL yet; reads show only launched browsers.
const VISIBLE = "status IN ('running', 'crashed')";
// What the API's reads show: launched, and not the service's own (a login flow's browser).
const SHOWN = `${VISIBLE} AND internal = 0`;

/** {@link BrowserStore} in SQLite. */
export class SqliteBrowserStore implements Synchronous<BrowserStore> {
  readonly #db: SqliteDatabase;
  readonly #usage: Synchronous<UsageStore>;

  constructor(db: SqliteDatabase, usage: Synchronous<UsageStore>) {
    this.#db = db;
    this.#usage = usage;
  }

  reserve(request: BrowserReservation): BrowserRow {
    return this.#db.transaction(() => {
      if (request.name !== undefined && this.#db.get("SELECT 1 AS taken FROM browsers WHERE project_id = ? AND name = ?", [request.projectId, request.name])) {
        throw new NameConflictError(`A browser named "${request.name}" already exists in this project; choose another name or delete that browser.`);
      }
      // Only an active project gains a browser, checked in the same transaction as the
      // insert that archiving and deleting count against: a browser of an archived or
      // deleted project could be neither listed nor stopped through the API.
      const caps = this.#db.get<{ project_cap: number | null; org_default: number | null }>(
        "SELECT p.max_concurrent_sessions AS project_cap, o.default_project_max_concurrent_sessions AS org_default FROM projects p JOIN organizations o ON o.id = p.org_id WHERE p.id = ? AND p.status = 'active' AND p.deleted_at IS NULL",
        [request.projectId],
      );
      if (!caps) throw new ProjectNotFoundError(`The project ${request.projectId} is no longer active; no browser was started.`);
      assertRoomForBrowser({
        planLimit: request.planLimit,
        projectCap: effectiveProjectCap(caps.project_cap, caps.org_default),
        orgUsed: this.#usage.organization(request.orgId),
        projectUsed: this.#usage.project(request.projectId),
      });
      const row = reservedRow(request);
      if (request.profile?.save === true) {
        const saver = this.#db.get<{ id: string }>("SELECT id FROM browsers WHERE profile_id = ? AND profile_save = 1 AND status <> 'crashed'", [
          request.profile.id,
        ]);
        if (saver !== undefined) throw new ProfileInUseError(request.profile.name ?? request.profile.id, saver.id, "save");
      }
      try {
        this.#db.run(
          "INSERT INTO browsers (id, project_id, name, status, cdp_token_sha256, pid, user_data_dir, sandboxed, budget_memory_mib, budget_max_processes, budget_cpus, created_at, timeout_seconds, profile_id, profile_name, profile_save, internal) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          [
            row.id,
            row.project_id,
            row.name,
            row.status,
            row.cdp_token_sha256,
            row.pid,
            row.user_data_dir,
            row.sandboxed,
            row.budget_memory_mib,
            row.budget_max_processes,
            row.budget_cpus,
            row.created_at,
            row.timeout_seconds,
            row.profile_id,
            row.profile_name,
            row.profile_save,
            row.internal,
          ],
        );
      } catch (error) {
        if (isUniqueViolation(error)) throw new NameConflictError(`A browser named "${request.name}" already exists in this project.`);
        throw error;
      }
      const extensions = (request.extensions ?? []).map(({ id, name }) => ({ id, name }));
      extensions.forEach((extension, position) =>
        this.#db.run("INSERT INTO browser_extensions (browser_id, position, extension_id, name) VALUES (?, ?, ?, ?)", [
          row.id,
          position,
          extension.id,
          extension.name,
        ]),
      );
      return row;
    });
  }

  markRunning(id: string, launched: LaunchedRecord, tokenSha256: string): BrowserRow | undefined {
    this.#db.transaction(() => {
      this.#db.run(
        "UPDATE browsers SET status = 'running', cdp_token_sha256 = ?, pid = ?, user_data_dir = ?, sandboxed = ?, budget_memory_mib = ?, budget_max_processes = ?, budget_cpus = ? WHERE id = ? AND status = 'starting'",
        [tokenSha256, launched.pid ?? null, launched.userDataDir ?? null, launched.sandboxed === true ? 1 : 0, ...budgetColumns(launched), id],
      );
      this.#db.run(
        "UPDATE extensions SET last_used_at = (SELECT created_at FROM browsers WHERE id = :browser) WHERE id IN (SELECT extension_id FROM browser_extensions WHERE browser_id = :browser)",
        { ":browser": id },
      );
      this.#db.run(
        "UPDATE profiles SET last_used_at = (SELECT created_at FROM browsers WHERE id = :browser) WHERE id = (SELECT profile_id FROM browsers WHERE id = :browser)",
        { ":browser": id },
      );
    });
    const row = this.#db.get<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE id = ?`, [id]);
    return row?.status === "running" ? row : undefined;
  }

  recordProcess(id: string, launched: Pick<LaunchedBrowser, "pid" | "userDataDir">): void {
    this.#db.transaction(() =>
      this.#db.run("UPDATE browsers SET pid = ?, user_data_dir = ? WHERE id = ? AND status = 'starting'", [
        launched.pid ?? null,
        launched.userDataDir ?? null,
        id,
      ]),
    );
  }

  markCrashed(id: string, reason: CrashReason): void {
    this.#db.transaction(() =>
      this.#db.run("UPDATE browsers SET status = 'crashed', crash_reason = ?, pid = NULL, cdp_token_sha256 = NULL WHERE id = ? AND status <> 'crashed'", [
        reason,
        id,
      ]),
    );
  }

  remove(id: string): void {
    this.#db.transaction(() => this.#db.run("DELETE FROM browsers WHERE id = ?", [id]));
  }

  getByIdOrName(projectId: string, idOrName: string): BrowserRow {
    // No id or name holds a NUL, which SQLite's binding would cut the text at.
    if (!isStorableText(idOrName)) throw new NotFoundError("No browser has an id or name containing a NUL character.");
    const row =
      this.#db.get<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE project_id = ? AND id = ? AND ${SHOWN}`, [projectId, idOrName]) ??
      this.#db.get<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE project_id = ? AND name = ? AND ${SHOWN}`, [projectId, idOrName]);
    if (!row) throw new NotFoundError(`No browser has the id or name "${idOrName}" in this project.`);
    return row;
  }

  findLaunched(id: string): (BrowserRow & { org_id: string }) | undefined {
    if (!isStorableText(id)) return undefined;
    const row = this.#db.get<BrowserRow & { org_id: string }>(
      `SELECT ${COLUMNS.split(", ")
        .map((column) => `b.${column}`)
        .join(", ")}, p.org_id AS org_id FROM browsers b JOIN projects p ON p.id = b.project_id WHERE b.id = ? AND b.${VISIBLE}`,
      [id],
    );
    return row;
  }

  list(projectId: string, offset: number, limit: number): { items: BrowserRow[]; hasMore: boolean } {
    const rows = this.#db.all<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE project_id = ? AND ${SHOWN} ORDER BY seq LIMIT ? OFFSET ?`, [
      projectId,
      limit + 1,
      offset,
    ]);
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  recoverAbandoned(): BrowserRow[] {
    return this.#db.transaction(() => {
      const rows = this.#db.all<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE status IN ('starting', 'running')`);
      this.#db.run("DELETE FROM browsers WHERE status = 'starting'");
      this.#db.run("UPDATE browsers SET status = 'crashed', crash_reason = 'server_lost', pid = NULL, cdp_token_sha256 = NULL WHERE status = 'running'");
      return rows;
    });
  }

  extensionsOf(browserIds: readonly string[]): Map<string, BrowserExtension[]> {
    const byBrowser = new Map<string, BrowserExtension[]>();
    if (browserIds.length === 0) return byBrowser;
    const rows = this.#db.all<{ browser_id: string; id: string; name: string | null }>(
      `SELECT browser_id, extension_id AS id, name FROM browser_extensions WHERE browser_id IN (${browserIds.map(() => "?").join(", ")}) ORDER BY browser_id, position`,
      [...browserIds],
    );
    for (const { browser_id: browserId, id, name } of rows) {
      let list = byBrowser.get(browserId);
      if (list === undefined) byBrowser.set(browserId, (list = []));
      list.push({ id, name });
    }
    return byBrowser;
  }
}
