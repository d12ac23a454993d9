import { BrowserUnavailableError, NameConflictError, NotFoundError, ProfileInUseError, ProjectNotFoundError } from "../http/api-errors.js";
import { assertRoomForBrowser, effectiveProjectCap } from "../limits/concurrency.js";
import type { UsageStore } from "../limits/usage-store.js";
import { isStorableText } from "../storage/database.js";
import { isPgUniqueViolation, type PgDatabase } from "../storage/pg-database.js";
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
  "id, project_id, name, status, crash_reason, cdp_token_sha256, pid, user_data_dir, sandboxed, budget_memory_mib, budget_max_processes, budget_cpus, created_at, node_id, timeout_seconds, profile_id, profile_name, profile_save, internal";
// Rows still 'starting' have no DevTools URL yet; reads show only launched browsers.
const VISIBLE = "status IN ('running', 'crashed')";
// What the API's reads show: launched, and not the service's own (a login flow's browser).
const SHOWN = `${VISIBLE} AND internal = 0`;

/**
 * {@link BrowserStore} in PostgreSQL, for the server (node) `nodeId`: the browsers it
 * reserves are recorded as its own, and {@link recoverAbandoned} touches only those.
 * A reserve locks the organization's row before it counts usage, so creates on every
 * server sharing the database take their slots one at a time (as archiving a project
 * does): the caps hold across servers.
 */
export class PgBrowserStore implements BrowserStore {
  readonly #db: PgDatabase;
  readonly #usage: UsageStore;
  readonly #nodeId: string;

  constructor(db: PgDatabase, usage: UsageStore, nodeId: string) {
    this.#db = db;
    this.#usage = usage;
    this.#nodeId = nodeId;
  }

  reserve(request: BrowserReservation): Promise<BrowserRow> {
    return this.#db.transaction(async () => {
      await this.#db.run("SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE", [request.orgId]);
      if (
        request.placedUnder !== undefined &&
        !(await this.#db.get("SELECT 1 AS held FROM nodes WHERE node_id = $1 AND lease_id = $2 AND lease_expires_at > now() FOR SHARE", [
          this.#nodeId,
          request.placedUnder,
        ]))
      ) {
        throw new BrowserUnavailableError(new Error("This node was sent the create under a lease that is over: its sender started the browser elsewhere."));
      }
      if (
        request.name !== undefined &&
        (await this.#db.get("SELECT 1 AS taken FROM browsers WHERE project_id = $1 AND name = $2", [request.projectId, request.name]))
      ) {
        throw new NameConflictError(`A browser named "${request.name}" already exists in this project; choose another name or delete that browser.`);
      }
      const caps = await this.#db.get<{ project_cap: number | null; org_default: number | null }>(
        "SELECT p.max_concurrent_sessions AS project_cap, o.default_project_max_concurrent_sessions AS org_default FROM projects p JOIN organizations o ON o.id = p.org_id WHERE p.id = $1 AND p.status = 'active' AND p.deleted_at IS NULL",
        [request.projectId],
      );
      if (!caps) throw new ProjectNotFoundError(`The project ${request.projectId} is no longer active; no browser was started.`);
      assertRoomForBrowser({
        planLimit: request.planLimit,
        projectCap: effectiveProjectCap(caps.project_cap, caps.org_default),
        orgUsed: await this.#usage.organization(request.orgId),
        projectUsed: await this.#usage.project(request.projectId),
      });
      const row: BrowserRow = { ...reservedRow(request), node_id: this.#nodeId };
      if (request.profile?.save === true) {
        const saver = await this.#db.get<{ id: string }>("SELECT id FROM browsers WHERE profile_id = $1 AND profile_save = 1 AND status <> 'crashed'", [
          request.profile.id,
        ]);
        if (saver !== undefined) throw new ProfileInUseError(request.profile.name ?? request.profile.id, saver.id, "save");
      }
      try {
        await this.#db.run(
          "INSERT INTO browsers (id, project_id, name, status, cdp_token_sha256, pid, user_data_dir, sandboxed, budget_memory_mib, budget_max_processes, budget_cpus, node_id, created_at, timeout_seconds, profile_id, profile_name, profile_save, internal) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)",
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
            this.#nodeId,
            row.created_at,
            row.timeout_seconds,
            row.profile_id,
            row.profile_name,
            row.profile_save,
            row.internal,
          ],
        );
      } catch (error) {
        if (isPgUniqueViolation(error)) throw new NameConflictError(`A browser named "${request.name}" already exists in this project.`);
        throw error;
      }
      let position = 0;
      for (const extension of request.extensions ?? []) {
        await this.#db.run("INSERT INTO browser_extensions (browser_id, position, extension_id, name) VALUES ($1, $2, $3, $4)", [
          row.id,
          position++,
          extension.id,
          extension.name,
        ]);
      }
      return row;
    });
  }

  async markRunning(id: string, launched: LaunchedRecord, tokenSha256: string): Promise<BrowserRow | undefined> {
    return this.#db.transaction(async () => {
      const updated = await this.#db.get<BrowserRow>(
        `UPDATE browsers SET status = 'running', cdp_token_sha256 = $1, pid = $2, user_data_dir = $3, sandboxed = $4, budget_memory_mib = $5, budget_max_processes = $6, budget_cpus = $7 WHERE id = $8 AND status = 'starting' RETURNING ${COLUMNS}`,
        [tokenSha256, launched.pid ?? null, launched.userDataDir ?? null, launched.sandboxed === true ? 1 : 0, ...budgetColumns(launched), id],
      );
      await this.#db.run(
        "UPDATE extensions SET last_used_at = (SELECT created_at FROM browsers WHERE id = $1) WHERE id IN (SELECT extension_id FROM browser_extensions WHERE browser_id = $1)",
        [id],
      );
      await this.#db.run(
        "UPDATE profiles SET last_used_at = (SELECT created_at FROM browsers WHERE id = $1) WHERE id = (SELECT profile_id FROM browsers WHERE id = $1)",
        [id],
      );
      return updated;
    });
  }

  async recordProcess(id: string, launched: Pick<LaunchedRecord, "pid" | "userDataDir">): Promise<void> {
    await this.#db.run("UPDATE browsers SET pid = $1, user_data_dir = $2 WHERE id = $3 AND status = 'starting'", [
      launched.pid ?? null,
      launched.userDataDir ?? null,
      id,
    ]);
  }

  async markCrashed(id: string, reason: CrashReason): Promise<void> {
    await this.#db.run("UPDATE browsers SET status = 'crashed', crash_reason = $1, pid = NULL, cdp_token_sha256 = NULL WHERE id = $2 AND status <> 'crashed'", [
      reason,
      id,
    ]);
  }

  async remove(id: string): Promise<void> {
    await this.#db.run("DELETE FROM browsers WHERE id = $1", [id]);
  }

  async getByIdOrName(projectId: string, idOrName: string): Promise<BrowserRow> {
    if (!isStorableText(idOrName)) throw new NotFoundError("No browser has an id or name containing a NUL character.");
    const row =
      (await this.#db.get<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE project_id = $1 AND id = $2 AND ${SHOWN}`, [projectId, idOrName])) ??
      (await this.#db.get<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE project_id = $1 AND name = $2 AND ${SHOWN}`, [projectId, idOrName]));
    if (!row) throw new NotFoundError(`No browser has the id or name "${idOrName}" in this project.`);
    return row;
  }

  async findLaunched(id: string): Promise<(BrowserRow & { org_id: string }) | undefined> {
    if (!isStorableText(id)) return undefined;
    return this.#db.get<BrowserRow & { org_id: string }>(
      `SELECT ${COLUMNS.split(", ")
        .map((column) => `b.${column}`)
        .join(", ")}, p.org_id AS org_id FROM browsers b JOIN projects p ON p.id = b.project_id WHERE b.id = $1 AND b.${VISIBLE}`,
      [id],
    );
  }

  async list(projectId: string, offset: number, limit: number): Promise<{ items: BrowserRow[]; hasMore: boolean }> {
    const rows = await this.#db.all<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE project_id = $1 AND ${SHOWN} ORDER BY seq LIMIT $2 OFFSET $3`, [
      projectId,
      limit + 1,
      offset,
    ]);
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  recoverAbandoned(): Promise<BrowserRow[]> {
    return this.#db.transaction(async () => {
      // A crashed row that still names a process was reaped while this node was away
      // (another node marked it, knowing nothing of its host): what it left is ended here.
      const rows = await this.#db.all<BrowserRow>(
        `SELECT ${COLUMNS} FROM browsers WHERE node_id = $1 AND (status IN ('starting', 'running') OR (status = 'crashed' AND pid IS NOT NULL))`,
        [this.#nodeId],
      );
      await this.#db.run("DELETE FROM browsers WHERE node_id = $1 AND status = 'starting'", [this.#nodeId]);
      await this.#db.run("UPDATE browsers SET pid = NULL WHERE node_id = $1 AND status = 'crashed' AND pid IS NOT NULL", [this.#nodeId]);
      await this.#db.run(
        "UPDATE browsers SET status = 'crashed', crash_reason = 'server_lost', pid = NULL, cdp_token_sha256 = NULL WHERE node_id = $1 AND status = 'running'",
        [this.#nodeId],
      );
      return rows;
    });
  }

  async extensionsOf(browserIds: readonly string[]): Promise<Map<string, BrowserExtension[]>> {
    const byBrowser = new Map<string, BrowserExtension[]>();
    if (browserIds.length === 0) return byBrowser;
    const rows = await this.#db.all<{ browser_id: string; id: string; name: string | null }>(
      "SELECT browser_id, extension_id AS id, name FROM browser_extensions WHERE browser_id = ANY($1::text[]) ORDER BY browser_id, position",
      [browserIds],
    );
    for (const { browser_id: browserId, id, name } of rows) {
      let list = byBrowser.get(browserId);
      if (list === undefined) byBrowser.set(browserId, (list = []));
      list.push({ id, name });
    }
    return byBrowser;
  }
}
