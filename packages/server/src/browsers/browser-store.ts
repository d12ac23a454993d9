import { newId } from "../storage/ids.js";
import { NameConflictError, NotFoundError, ProjectNotFoundError } from "../http/api-errors.js";
import { assertRoomForBrowser, effectiveProjectCap } from "../limits/concurrency.js";
import type { UsageStore } from "../limits/usage-store.js";
import type { LaunchedBrowser } from "./browser-launcher.js";
import { isStorableText, isUniqueViolation, type SqliteDatabase } from "../storage/database.js";

/** A browser as the API shows it (the spec's `Browser`). */
export interface Browser {
  id: string;
  name: string | null;
  status: "running" | "crashed";
  created_at: string;
  cdp_ws_url: string;
  sandboxed: boolean;
}

/** A browser row, including the bookkeeping the API does not show. */
export interface BrowserRow {
  id: string;
  project_id: string;
  name: string | null;
  status: "starting" | "running" | "crashed";
  /** SHA-256 of the browser's DevTools access token; `null` until it runs and after it crashed. */
  cdp_token_sha256: string | null;
  pid: number | null;
  user_data_dir: string | null;
  /** 1 when the browser runs (or ran) in its sandbox, else 0. */
  sandboxed: number;
  created_at: string;
}

/** What {@link BrowserStore.reserve} needs. */
export interface BrowserReservation {
  orgId: string;
  projectId: string;
  name: string | undefined;
  /** The organization limit from its plan. */
  planLimit: number;
  /**
   * A browser already running (taken from the warm pool): the row is inserted `running`
   * with its process and token hash, in the same transaction as the checks, so one
   * commit (one round of fsyncs) records it instead of two.
   */
  running?: { launched: Pick<LaunchedBrowser, "pid" | "userDataDir" | "sandboxed">; tokenSha256: string };
}

const COLUMNS = "id, project_id, name, status, cdp_token_sha256, pid, user_data_dir, sandboxed, created_at";
// Rows still 'starting' have no DevTools URL yet; reads show only launched browsers.
const VISIBLE = "status IN ('running', 'crashed')";

/** The API's view of a launched browser row, with the DevTools URL of the request's host. */
export function toBrowser(row: BrowserRow, cdpWsUrl: string): Browser {
  return { id: row.id, name: row.name, status: row.status === "crashed" ? "crashed" : "running", created_at: row.created_at, cdp_ws_url: cdpWsUrl, sandboxed: row.sandboxed === 1 };
}

/** Browser records and their concurrency slots. */
export class BrowserStore {
  readonly #db: SqliteDatabase;
  readonly #usage: UsageStore;

  constructor(db: SqliteDatabase, usage: UsageStore) {
    this.#db = db;
    this.#usage = usage;
  }

  /**
   * Takes a concurrency slot for a new browser: in ONE transaction it checks the name,
   * the project's effective cap and the organization limit, and inserts a `starting`
   * (or, given `running`, a `running`) row that counts as usage. Concurrent creates therefore never exceed a cap. The caps
   * are read inside the transaction too, so a cap changed a moment ago applies.
   */
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
      const running = request.running;
      const row: BrowserRow = {
        id: newId("browser"),
        project_id: request.projectId,
        name: request.name ?? null,
        status: running === undefined ? "starting" : "running",
        cdp_token_sha256: running?.tokenSha256 ?? null,
        pid: running?.launched.pid ?? null,
        user_data_dir: running?.launched.userDataDir ?? null,
        sandboxed: running?.launched.sandboxed === true ? 1 : 0,
        created_at: new Date().toISOString(),
      };
      try {
        this.#db.run(
          "INSERT INTO browsers (id, project_id, name, status, cdp_token_sha256, pid, user_data_dir, sandboxed, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
          [row.id, row.project_id, row.name, row.status, row.cdp_token_sha256, row.pid, row.user_data_dir, row.sandboxed, row.created_at],
        );
      } catch (error) {
        if (isUniqueViolation(error)) throw new NameConflictError(`A browser named "${request.name}" already exists in this project.`);
        throw error;
      }
      return row;
    });
  }

  /** Records that a reserved browser is up, with the hash of its access token. */
  markRunning(id: string, launched: Pick<LaunchedBrowser, "pid" | "userDataDir" | "sandboxed">, tokenSha256: string): BrowserRow {
    this.#db.transaction(() =>
      this.#db.run("UPDATE browsers SET status = 'running', cdp_token_sha256 = ?, pid = ?, user_data_dir = ?, sandboxed = ? WHERE id = ?", [
        tokenSha256,
        launched.pid ?? null,
        launched.userDataDir ?? null,
        launched.sandboxed === true ? 1 : 0,
        id,
      ]),
    );
    const row = this.#db.get<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE id = ?`, [id]);
    if (!row) throw new Error(`Browser ${id} vanished while starting.`);
    return row;
  }

  /** Records that a browser's process exited on its own; its slot is free again. */
  markCrashed(id: string): void {
    this.#db.transaction(() => this.#db.run("UPDATE browsers SET status = 'crashed', pid = NULL, cdp_token_sha256 = NULL WHERE id = ? AND status <> 'crashed'", [id]));
  }

  /** Deletes a browser's record, freeing its slot and its name. */
  remove(id: string): void {
    this.#db.transaction(() => this.#db.run("DELETE FROM browsers WHERE id = ?", [id]));
  }

  /** The launched browser of the project with this id or, failing that, this name; 404 `not_found` otherwise. */
  getByIdOrName(projectId: string, idOrName: string): BrowserRow {
    // No id or name holds a NUL, which SQLite's binding would cut the text at.
    if (!isStorableText(idOrName)) throw new NotFoundError("No browser has an id or name containing a NUL character.");
    const row =
      this.#db.get<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE project_id = ? AND id = ? AND ${VISIBLE}`, [projectId, idOrName])
      ?? this.#db.get<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE project_id = ? AND name = ? AND ${VISIBLE}`, [projectId, idOrName]);
    if (!row) throw new NotFoundError(`No browser has the id or name "${idOrName}" in this project.`);
    return row;
  }

  /** The launched browser with this id in any project, with its project's organization; ids only, never names. */
  findLaunched(id: string): (BrowserRow & { org_id: string }) | undefined {
    if (!isStorableText(id)) return undefined;
    return this.#db.get<BrowserRow & { org_id: string }>(
      `SELECT ${COLUMNS.split(", ").map((column) => `b.${column}`).join(", ")}, p.org_id AS org_id FROM browsers b JOIN projects p ON p.id = b.project_id WHERE b.id = ? AND b.${VISIBLE}`,
      [id],
    );
  }

  /** One page of the project's launched browsers, oldest first, and whether more follow. */
  list(projectId: string, offset: number, limit: number): { items: BrowserRow[]; hasMore: boolean } {
    const rows = this.#db.all<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE project_id = ? AND ${VISIBLE} ORDER BY seq LIMIT ? OFFSET ?`, [projectId, limit + 1, offset]);
    return { items: rows.slice(0, limit), hasMore: rows.length > limit };
  }

  /**
   * After an unclean exit of the previous server: every browser it left `starting` or
   * `running` has no process this server controls, so it is marked `crashed` (freeing
   * its slot). Returns those rows so their processes and profiles can be cleaned up.
   */
  recoverAbandoned(): BrowserRow[] {
    return this.#db.transaction(() => {
      const rows = this.#db.all<BrowserRow>(`SELECT ${COLUMNS} FROM browsers WHERE status IN ('starting', 'running')`);
      this.#db.run("DELETE FROM browsers WHERE status = 'starting'");
      this.#db.run("UPDATE browsers SET status = 'crashed', pid = NULL, cdp_token_sha256 = NULL WHERE status = 'running'");
      return rows;
    });
  }
}
