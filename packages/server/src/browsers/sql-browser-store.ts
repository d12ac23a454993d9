import { BrowserUnavailableError, NameConflictError, NotFoundError, ProfileInUseError, ProjectNotFoundError } from "../http/api-errors.js";
import { assertRoomForBrowser, effectiveProjectCap } from "../limits/concurrency.js";
import type { SqlUsageStore } from "../limits/sql-usage-store.js";
import { isStorableText } from "../storage/database.js";
import { isUniqueViolation } from "../storage/program-runners.js";
import { allRows, getRow, inTransaction, lockRows, type Programs, runSql, type SqlProgram } from "../storage/sql-program.js";
import { type Dialect, rawSql, type Sql, sql, sqlFor, sqlIn } from "../storage/sql-text.js";
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

const COLUMN_NAMES =
  "id, project_id, name, status, crash_reason, cdp_token_sha256, pid, user_data_dir, sandboxed, budget_memory_mib, budget_max_processes, budget_cpus, created_at, timeout_seconds, profile_id, profile_name, profile_save, internal, telemetry";
// PostgreSQL records which node (server) runs each browser; SQLite has one server.
const COLUMNS = sqlFor({ sqlite: rawSql(COLUMN_NAMES), postgres: rawSql(`${COLUMN_NAMES}, node_id`) });
const JOINED_COLUMNS = sqlFor({
  sqlite: rawSql(prefixed(COLUMN_NAMES)),
  postgres: rawSql(prefixed(`${COLUMN_NAMES}, node_id`)),
});
const INSERTED = rawSql(
  "id, project_id, name, status, cdp_token_sha256, pid, user_data_dir, sandboxed, budget_memory_mib, budget_max_processes, budget_cpus, created_at, timeout_seconds, profile_id, profile_name, profile_save, internal, telemetry",
);
// Rows still 'starting' have no DevTools URL yet; reads show only launched browsers.
const VISIBLE = rawSql("status IN ('running', 'crashed')");
// What the API's reads show: launched, and not the service's own (a login flow's browser).
const SHOWN = sql`${VISIBLE} AND internal = 0`;

function prefixed(columns: string): string {
  return columns
    .split(", ")
    .map((column) => `b.${column}`)
    .join(", ");
}

/**
 * Marks the browsers `where` selects as crashed for `reason`, unless they already are:
 * the one place a browser becomes `crashed`. Its DevTools token dies with it; its process
 * id is forgotten too, unless `keepProcess` (another node reaping a lapsed node's
 * browsers keeps it, so that the node, if it starts again on its host, ends what is left
 * of them). Returns how many browsers it marked.
 */
export function* crashBrowsers(where: Sql, reason: CrashReason, options: { keepProcess?: boolean } = {}): SqlProgram<number> {
  const pid = options.keepProcess === true ? rawSql("") : rawSql(", pid = NULL");
  return yield* runSql(
    sql`UPDATE browsers SET status = 'crashed', crash_reason = ${reason}${pid}, cdp_token_sha256 = NULL WHERE (${where}) AND status <> 'crashed'`,
  );
}

/**
 * What a server that is gone left behind, within the caller's transaction: browsers it
 * was still starting are removed (they never had a DevTools URL), and those it ran crash
 * with `server_lost`. Returns how many crashed.
 */
export function* abandonBrowsers(owner: Sql, options: { keepProcess?: boolean } = {}): SqlProgram<number> {
  yield* runSql(sql`DELETE FROM browsers WHERE ${owner} AND status = 'starting'`);
  return yield* crashBrowsers(sql`${owner} AND status = 'running'`, "server_lost", options);
}

/**
 * {@link BrowserStore}'s rules, once for both databases. On PostgreSQL it serves the
 * server (node) `nodeId`: the browsers it reserves are recorded as its own, and
 * {@link recoverAbandoned} touches only those; a reserve locks the organization's row
 * before it counts usage, so creates on every server sharing the database take their
 * slots one at a time (as archiving a project does) and the caps hold across servers.
 * SQLite's write transaction holds the whole database, and it has one server.
 */
export class SqlBrowserStore implements Programs<BrowserStore> {
  readonly #usage: SqlUsageStore;
  readonly #nodeId: string | undefined;
  // The rows of this server.
  readonly #mine: Sql;

  /** `nodeId` is required on PostgreSQL (where servers share the database) and unused on SQLite. */
  constructor(context: { dialect: Dialect; nodeId?: string }, usage: SqlUsageStore) {
    this.#usage = usage;
    this.#nodeId = context.dialect === "postgres" ? context.nodeId : undefined;
    if (context.dialect === "postgres" && this.#nodeId === undefined) throw new TypeError("A browser store on PostgreSQL needs its node's id.");
    this.#mine = this.#nodeId === undefined ? sql`1 = 1` : sql`node_id = ${this.#nodeId}`;
  }

  *reserve(request: BrowserReservation): SqlProgram<BrowserRow> {
    return yield* inTransaction(() => this.#reserve(request));
  }

  *#reserve(request: BrowserReservation): SqlProgram<BrowserRow> {
    yield* lockRows(sql`SELECT 1 FROM organizations WHERE id = ${request.orgId} FOR UPDATE`);
    // Only PostgreSQL's nodes place creates on each other.
    if (
      this.#nodeId !== undefined &&
      request.placedUnder !== undefined &&
      !(yield* getRow(
        sql`SELECT 1 AS held FROM nodes WHERE node_id = ${this.#nodeId} AND lease_id = ${request.placedUnder} AND lease_expires_at > now() FOR SHARE`,
      ))
    ) {
      throw new BrowserUnavailableError(new Error("This node was sent the create under a lease that is over: its sender started the browser elsewhere."));
    }
    if (
      request.name !== undefined &&
      (yield* getRow(sql`SELECT 1 AS taken FROM browsers WHERE project_id = ${request.projectId} AND name = ${request.name}`))
    ) {
      throw new NameConflictError(`A browser named "${request.name}" already exists in this project; choose another name or delete that browser.`);
    }
    // Only an active project gains a browser, checked in the same transaction as the
    // insert that archiving and deleting count against: a browser of an archived or
    // deleted project could be neither listed nor stopped through the API.
    const caps = yield* getRow<{ project_cap: number | null; org_default: number | null }>(
      sql`SELECT p.max_concurrent_sessions AS project_cap, o.default_project_max_concurrent_sessions AS org_default FROM projects p JOIN organizations o ON o.id = p.org_id WHERE p.id = ${request.projectId} AND p.status = 'active' AND p.deleted_at IS NULL`,
    );
    if (!caps) throw new ProjectNotFoundError(`The project ${request.projectId} is no longer active; no browser was started.`);
    assertRoomForBrowser({
      planLimit: request.planLimit,
      projectCap: effectiveProjectCap(caps.project_cap, caps.org_default),
      orgUsed: yield* this.#usage.organization(request.orgId),
      projectUsed: yield* this.#usage.project(request.projectId),
    });
    const row: BrowserRow = this.#nodeId === undefined ? reservedRow(request) : { ...reservedRow(request), node_id: this.#nodeId };
    if (request.profile?.save === true) {
      const saver = yield* getRow<{ id: string }>(
        sql`SELECT id FROM browsers WHERE profile_id = ${request.profile.id} AND profile_save = 1 AND status <> 'crashed'`,
      );
      if (saver !== undefined) throw new ProfileInUseError(request.profile.name ?? request.profile.id, saver.id, "save");
    }
    const values = sql`${row.id}, ${row.project_id}, ${row.name}, ${row.status}, ${row.cdp_token_sha256}, ${row.pid}, ${row.user_data_dir}, ${row.sandboxed}, ${row.budget_memory_mib}, ${row.budget_max_processes}, ${row.budget_cpus}, ${row.created_at}, ${row.timeout_seconds}, ${row.profile_id}, ${row.profile_name}, ${row.profile_save}, ${row.internal}, ${row.telemetry}`;
    try {
      yield* runSql(
        sqlFor({
          sqlite: sql`INSERT INTO browsers (${INSERTED}) VALUES (${values})`,
          postgres: sql`INSERT INTO browsers (${INSERTED}, node_id) VALUES (${values}, ${this.#nodeId ?? null})`,
        }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw new NameConflictError(`A browser named "${request.name}" already exists in this project.`);
      throw error;
    }
    let position = 0;
    for (const extension of request.extensions ?? []) {
      yield* runSql(
        sql`INSERT INTO browser_extensions (browser_id, position, extension_id, name) VALUES (${row.id}, ${position++}, ${extension.id}, ${extension.name})`,
      );
    }
    return row;
  }

  *markRunning(id: string, launched: LaunchedRecord, tokenSha256: string): SqlProgram<BrowserRow | undefined> {
    return yield* inTransaction(() => this.#markRunning(id, launched, tokenSha256));
  }

  *#markRunning(id: string, launched: LaunchedRecord, tokenSha256: string): SqlProgram<BrowserRow | undefined> {
    const [memoryMib, maxProcesses, cpus] = budgetColumns(launched);
    // Only a reservation still starting: one dropped or ended meanwhile stays as it is.
    const updated = yield* getRow<BrowserRow>(
      sql`UPDATE browsers SET status = 'running', cdp_token_sha256 = ${tokenSha256}, pid = ${launched.pid ?? null}, user_data_dir = ${launched.userDataDir ?? null}, sandboxed = ${launched.sandboxed === true ? 1 : 0}, budget_memory_mib = ${memoryMib}, budget_max_processes = ${maxProcesses}, budget_cpus = ${cpus} WHERE id = ${id} AND status = 'starting' RETURNING ${COLUMNS}`,
    );
    yield* runSql(
      sql`UPDATE extensions SET last_used_at = (SELECT created_at FROM browsers WHERE id = ${id}) WHERE id IN (SELECT extension_id FROM browser_extensions WHERE browser_id = ${id})`,
    );
    yield* runSql(
      sql`UPDATE profiles SET last_used_at = (SELECT created_at FROM browsers WHERE id = ${id}) WHERE id = (SELECT profile_id FROM browsers WHERE id = ${id})`,
    );
    return updated;
  }

  *recordProcess(id: string, launched: Pick<LaunchedRecord, "pid" | "userDataDir">): SqlProgram<void> {
    yield* inTransaction(() =>
      runSql(sql`UPDATE browsers SET pid = ${launched.pid ?? null}, user_data_dir = ${launched.userDataDir ?? null} WHERE id = ${id} AND status = 'starting'`),
    );
  }

  *markCrashed(id: string, reason: CrashReason): SqlProgram<void> {
    yield* inTransaction(() => crashBrowsers(sql`id = ${id}`, reason));
  }

  *remove(id: string): SqlProgram<void> {
    yield* inTransaction(() => runSql(sql`DELETE FROM browsers WHERE id = ${id}`));
  }

  *getByIdOrName(projectId: string, idOrName: string): SqlProgram<BrowserRow> {
    // No id or name holds a NUL, which SQLite's binding would cut the text at.
    if (!isStorableText(idOrName)) throw new NotFoundError("No browser has an id or name containing a NUL character.");
    const row =
      (yield* getRow<BrowserRow>(sql`SELECT ${COLUMNS} FROM browsers WHERE project_id = ${projectId} AND id = ${idOrName} AND ${SHOWN}`)) ??
      (yield* getRow<BrowserRow>(sql`SELECT ${COLUMNS} FROM browsers WHERE project_id = ${projectId} AND name = ${idOrName} AND ${SHOWN}`));
    if (!row) throw new NotFoundError(`No browser has the id or name "${idOrName}" in this project.`);
    return row;
  }

  *findLaunched(id: string): SqlProgram<(BrowserRow & { org_id: string }) | undefined> {
    if (!isStorableText(id)) return undefined;
    return yield* getRow<BrowserRow & { org_id: string }>(
      sql`SELECT ${JOINED_COLUMNS}, p.org_id AS org_id FROM browsers b JOIN projects p ON p.id = b.project_id WHERE b.id = ${id} AND b.${VISIBLE}`,
    );
  }

  *list(projectId: string, offset: number, limit: number): SqlProgram<{ items: BrowserRow[]; hasMore: boolean }> {
    const rows = yield* allRows<BrowserRow>(
      sql`SELECT ${COLUMNS} FROM browsers WHERE project_id = ${projectId} AND ${SHOWN} ORDER BY seq LIMIT ${limit + 1} OFFSET ${offset}`,
    );
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  *recoverAbandoned(): SqlProgram<BrowserRow[]> {
    return yield* inTransaction(() => this.#recoverAbandoned());
  }

  *#recoverAbandoned(): SqlProgram<BrowserRow[]> {
    // A crashed row that still names a process was reaped while this node was away
    // (another node marked it, knowing nothing of its host): what it left is ended here.
    const rows = yield* allRows<BrowserRow>(
      sql`SELECT ${COLUMNS} FROM browsers WHERE ${this.#mine} AND (status IN ('starting', 'running') OR (status = 'crashed' AND pid IS NOT NULL))`,
    );
    yield* runSql(sql`UPDATE browsers SET pid = NULL WHERE ${this.#mine} AND status = 'crashed' AND pid IS NOT NULL`);
    yield* abandonBrowsers(this.#mine);
    return [...rows];
  }

  *extensionsOf(browserIds: readonly string[]): SqlProgram<Map<string, BrowserExtension[]>> {
    const byBrowser = new Map<string, BrowserExtension[]>();
    if (browserIds.length === 0) return byBrowser;
    const rows = yield* allRows<{ browser_id: string; id: string; name: string | null }>(
      sql`SELECT browser_id, extension_id AS id, name FROM browser_extensions WHERE ${sqlIn(rawSql("browser_id"), browserIds)} ORDER BY browser_id, position`,
    );
    for (const { browser_id: browserId, id, name } of rows) {
      let list = byBrowser.get(browserId);
      if (list === undefined) byBrowser.set(browserId, (list = []));
      list.push({ id, name });
    }
    return byBrowser;
  }
}
