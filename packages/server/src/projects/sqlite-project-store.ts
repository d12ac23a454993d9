import { BrowsersRunningError, DefaultProjectError, LastActiveProjectError, NotFoundError, ProjectNotEmptyError } from "../http/api-errors.js";
import { isStorableText, isUniqueViolation, type SqliteDatabase } from "../storage/database.js";
import { newId } from "../storage/ids.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import {
  canonicalProjectName,
  nameTaken,
  type ProjectChange,
  type ProjectListQuery,
  type ProjectRow,
  type ProjectStore,
  projectNotFound,
  storableName,
} from "./project-store.js";

const COLUMNS = "id, org_id, name, status, created_at, updated_at, max_concurrent_sessions";
// The same columns as the arguments of SQLite's json_object().
const JSON_COLUMNS = COLUMNS.split(", ")
  .map((column) => `'${column}', ${column}`)
  .join(", ");

// A full page (the store reads one row more than the page to learn whether more follow)
// cut to the page, by the remembered rows it was cut from.
const fullPages = new WeakMap<readonly ProjectRow[], readonly ProjectRow[]>();

/** {@link ProjectStore} in SQLite. */
export class SqliteProjectStore implements Synchronous<ProjectStore> {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  findById(orgId: string, id: string): ProjectRow | undefined {
    if (!isStorableText(id)) return undefined;
    return this.#db.remembered<ProjectRow>("get", `SELECT ${COLUMNS} FROM projects WHERE org_id = ? AND id = ? AND deleted_at IS NULL`, [orgId, id]);
  }

  findByIdOrName(orgId: string, idOrName: string): ProjectRow | undefined {
    return this.findById(orgId, idOrName) ?? this.findByName(orgId, idOrName);
  }

  findByName(orgId: string, name: string): ProjectRow | undefined {
    if (!isStorableText(name)) return undefined;
    return this.#db.get<ProjectRow>(`SELECT ${COLUMNS} FROM projects WHERE org_id = ? AND name = ? AND deleted_at IS NULL`, [
      orgId,
      canonicalProjectName(name),
    ]);
  }

  getByIdOrName(orgId: string, idOrName: string): ProjectRow {
    const row = this.findByIdOrName(orgId, idOrName);
    if (!row) throw projectNotFound(idOrName);
    return row;
  }

  list(orgId: string, query: ProjectListQuery): { items: readonly ProjectRow[]; hasMore: boolean } {
    // No stored name holds a NUL, so a filter with one matches nothing.
    if ([query.name, query.query, query.onlyId].some((text) => text !== undefined && !isStorableText(text))) return { items: [], hasMore: false };
    const where = ["org_id = :org", "deleted_at IS NULL"];
    const params: Record<string, string | number> = { ":org": orgId, ":limit": query.limit + 1, ":offset": query.offset };
    if (query.name !== undefined) {
      where.push("name = :name");
      params[":name"] = canonicalProjectName(query.name);
    }
    if (query.query !== undefined) {
      where.push("instr(casefold(name), casefold(:query)) > 0");
      params[":query"] = canonicalProjectName(query.query);
    }
    if (query.onlyId !== undefined) {
      where.push("id = :id");
      params[":id"] = query.onlyId;
    }
    // Remembered until the next write (a rename or an archive shows at once). The page comes
    // back as ONE JSON text built inside SQLite: reading rows column by column
    // costs a call into the WebAssembly module per value, which made a full page cost more
    // than the rest of the request together. A cap past 2^53 (only servers without the spec's
    // bound stored one) comes back rounded, which changes nothing: storedCap() clamps it.
    const rows = this.#db.rememberedJsonRows<ProjectRow>(
      `SELECT json_group_array(json_object(${JSON_COLUMNS}) ORDER BY seq) AS rows FROM (SELECT seq, ${COLUMNS} FROM projects WHERE ${where.join(" AND ")} ORDER BY seq LIMIT :limit OFFSET :offset)`,
      params,
    );
    if (rows.length <= query.limit) return { items: rows, hasMore: false };
    // The same page array for the same remembered rows, so that its JSON can be kept too.
    let items = fullPages.get(rows);
    if (items === undefined) {
      items = Object.freeze(rows.slice(0, query.limit));
      fullPages.set(rows, items);
    }
    return { items, hasMore: true };
  }

  insert(orgId: string, requestedName: string, now = new Date().toISOString()): ProjectRow {
    const name = storableName(requestedName);
    const id = newId("project");
    try {
      this.#db.run("INSERT INTO projects (id, org_id, name, status, created_at, updated_at) VALUES (?, ?, ?, 'active', ?, ?)", [id, orgId, name, now, now]);
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
    return { id, org_id: orgId, name, status: "active", created_at: now, updated_at: now, max_concurrent_sessions: null };
  }

  create(orgId: string, name: string): ProjectRow {
    return this.#db.transaction(() => this.insert(orgId, name));
  }

  update(orgId: string, project: ProjectRow, change: ProjectChange): ProjectRow {
    return this.#db.transaction(() => {
      const current = this.findById(orgId, project.id);
      if (!current) throw new NotFoundError(`No project has the id "${project.id}" in this organization.`);
      const name = change.name === undefined ? current.name : storableName(change.name);
      const status = change.status ?? current.status;
      if (name === current.name && status === current.status) return current;
      if (current.status === "active" && status === "archived") {
        if (this.#countActive(orgId) <= 1) throw new LastActiveProjectError("archive");
        if (this.#isDefault(orgId, current.id)) throw new DefaultProjectError("archive");
        // Counted inside this transaction, and a browser's slot is reserved in one too
        // (BrowserStore.reserve, which refuses an archived project): no browser can
        // start between this check and the archive.
        const browsers = this.#liveBrowsers(current.id);
        if (browsers > 0) throw new BrowsersRunningError(browsers);
      }
      const now = new Date().toISOString();
      try {
        this.#db.run("UPDATE projects SET name = ?, status = ?, updated_at = ? WHERE id = ?", [name, status, now, current.id]);
      } catch (error) {
        if (isUniqueViolation(error)) throw nameTaken(name);
        throw error;
      }
      return { ...current, name, status, updated_at: now };
    });
  }

  delete(orgId: string, project: ProjectRow): void {
    this.#db.transaction(() => {
      const current = this.findById(orgId, project.id);
      if (!current) throw new NotFoundError(`No project has the id "${project.id}" in this organization.`);
      if (current.status === "active" && this.#countActive(orgId) <= 1) throw new LastActiveProjectError("delete");
      if (this.#isDefault(orgId, current.id)) throw new DefaultProjectError("delete");
      const count = (sql: string) => this.#db.get<{ n: number }>(sql, [current.id])?.n ?? 0;
      // Each holds a process, stored data or concurrency capacity that nobody could reach
      // or free once the project is gone (usage only counts live projects).
      const remaining: [number, string][] = [
        [this.#liveBrowsers(current.id), "running browser"],
        [count("SELECT count(*) AS n FROM extensions WHERE project_id = ? AND deleted_at IS NULL"), "extension"],
        [count("SELECT count(*) AS n FROM credentials WHERE project_id = ?"), "credential"],
        [count("SELECT count(*) AS n FROM profiles WHERE project_id = ?"), "profile"],
        [count("SELECT count(*) AS n FROM auth_connections WHERE project_id = ?"), "auth connection"],
        [count("SELECT count(*) AS n FROM pool_reservations WHERE project_id = ?"), "browser pool reservation"],
      ];
      const parts = remaining.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}${n === 1 ? "" : "s"}`);
      if (parts.length > 0) {
        const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
        throw new ProjectNotEmptyError(`The project still has ${list}; remove them first.`);
      }
      // A crashed browser holds no process and no slot; its record would only linger unseen.
      this.#db.run("DELETE FROM browsers WHERE project_id = ? AND status = 'crashed'", [current.id]);
      this.#db.run("UPDATE projects SET deleted_at = ? WHERE id = ?", [new Date().toISOString(), current.id]);
    });
  }

  setCap(project: ProjectRow, cap: number | null): ProjectRow {
    this.#db.transaction(() => this.#db.run("UPDATE projects SET max_concurrent_sessions = ? WHERE id = ?", [cap, project.id]));
    return { ...project, max_concurrent_sessions: cap };
  }

  #isDefault(orgId: string, projectId: string): boolean {
    return this.#db.get<{ id: string }>("SELECT default_project_id AS id FROM organizations WHERE id = ?", [orgId])?.id === projectId;
  }

  /** Browsers of the project that run or are starting (a starting one is about to run). */
  #liveBrowsers(projectId: string): number {
    return this.#db.get<{ n: number }>("SELECT count(*) AS n FROM browsers WHERE project_id = ? AND status IN ('starting', 'running')", [projectId])?.n ?? 0;
  }

  #countActive(orgId: string): number {
    return this.#db.get<{ n: number }>("SELECT count(*) AS n FROM projects WHERE org_id = ? AND status = 'active' AND deleted_at IS NULL", [orgId])?.n ?? 0;
  }
}
