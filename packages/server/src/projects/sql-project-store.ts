import { BrowsersRunningError, DefaultProjectError, LastActiveProjectError, NotFoundError, ProjectNotEmptyError } from "../http/api-errors.js";
import { isStorableText } from "../storage/database.js";
import { newId } from "../storage/ids.js";
import { isUniqueViolation } from "../storage/program-runners.js";
import { allRows, getRow, inTransaction, jsonRows, lockRows, type Programs, runSql, type SqlProgram, type SqlStoreContext } from "../storage/sql-program.js";
import { type Dialect, joinSql, rawSql, type Sql, sql, sqlFor } from "../storage/sql-text.js";
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

const COLUMNS = rawSql("id, org_id, name, status, created_at, updated_at, max_concurrent_sessions");
// The same columns as the arguments of SQLite's json_object().
const JSON_COLUMNS = rawSql(
  "id, org_id, name, status, created_at, updated_at, max_concurrent_sessions"
    .split(", ")
    .map((column) => `'${column}', ${column}`)
    .join(", "),
);

/** The folded form of a name that the `query` filter compares (SQLite folds with its `casefold` function, the same). */
function folded(name: string): string {
  return name.toLowerCase();
}

// A full page (the store reads one row more than the page to learn whether more follow)
// cut to the page, by the remembered rows it was cut from.
const fullPages = new WeakMap<readonly ProjectRow[], readonly ProjectRow[]>();

/**
 * {@link ProjectStore}'s rules, once for both databases. The rules that read before they
 * write (archive, delete) lock the organization's row first in PostgreSQL, as a browser's
 * reserve does, so that on every server they run one at a time within an organization
 * (SQLite's write transaction holds the whole database).
 */
export class SqlProjectStore implements Programs<ProjectStore> {
  readonly #dialect: Dialect;

  constructor(context: SqlStoreContext) {
    this.#dialect = context.dialect;
  }

  *findById(orgId: string, id: string): SqlProgram<ProjectRow | undefined> {
    // No stored id holds a NUL, which SQLite's binding would cut the text at.
    if (!isStorableText(id)) return undefined;
    return yield* getRow<ProjectRow>(sql`SELECT ${COLUMNS} FROM projects WHERE org_id = ${orgId} AND id = ${id} AND deleted_at IS NULL`, { remembered: true });
  }

  *findByIdOrName(orgId: string, idOrName: string): SqlProgram<ProjectRow | undefined> {
    return (yield* this.findById(orgId, idOrName)) ?? (yield* this.findByName(orgId, idOrName));
  }

  *findByName(orgId: string, name: string): SqlProgram<ProjectRow | undefined> {
    if (!isStorableText(name)) return undefined;
    return yield* getRow<ProjectRow>(
      sql`SELECT ${COLUMNS} FROM projects WHERE org_id = ${orgId} AND name = ${canonicalProjectName(name)} AND deleted_at IS NULL`,
    );
  }

  *getByIdOrName(orgId: string, idOrName: string): SqlProgram<ProjectRow> {
    const row = yield* this.findByIdOrName(orgId, idOrName);
    if (!row) throw projectNotFound(idOrName);
    return row;
  }

  *list(orgId: string, query: ProjectListQuery): SqlProgram<{ items: readonly ProjectRow[]; hasMore: boolean }> {
    // No stored name holds a NUL, so a filter with one matches nothing.
    if ([query.name, query.query, query.onlyId].some((text) => text !== undefined && !isStorableText(text))) return { items: [], hasMore: false };
    const where: Sql[] = [sql`org_id = ${orgId}`, sql`deleted_at IS NULL`];
    if (query.name !== undefined) where.push(sql`name = ${canonicalProjectName(query.name)}`);
    if (query.query !== undefined) {
      const part = folded(canonicalProjectName(query.query));
      where.push(sqlFor({ sqlite: sql`instr(casefold(name), ${part}) > 0`, postgres: sql`strpos(name_folded, ${part}) > 0` }));
    }
    if (query.onlyId !== undefined) where.push(sql`id = ${query.onlyId}`);
    const page = sql`SELECT seq, ${COLUMNS} FROM projects WHERE ${joinSql(where, " AND ")} ORDER BY seq LIMIT ${query.limit + 1} OFFSET ${query.offset}`;
    if (this.#dialect === "postgres") {
      const rows = yield* allRows<ProjectRow>(sql`SELECT ${COLUMNS} FROM (${page}) AS page ORDER BY seq`);
      return { items: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
    }
    // Remembered until the next write (a rename or an archive shows at once). The page comes
    // back as ONE JSON text built inside SQLite: reading rows column by column
    // costs a call into the WebAssembly module per value, which made a full page cost more
    // than the rest of the request together. A cap past 2^53 (only servers without the spec's
    // bound stored one) comes back rounded, which changes nothing: storedCap() clamps it.
    const rows = yield* jsonRows<ProjectRow>(sql`SELECT json_group_array(json_object(${JSON_COLUMNS}) ORDER BY seq) AS rows FROM (${page})`);
    if (rows.length <= query.limit) return { items: rows, hasMore: false };
    // The same page array for the same remembered rows, so that its JSON can be kept too.
    let items = fullPages.get(rows);
    if (items === undefined) {
      items = Object.freeze(rows.slice(0, query.limit));
      fullPages.set(rows, items);
    }
    return { items, hasMore: true };
  }

  *insert(orgId: string, requestedName: string, now = new Date().toISOString()): SqlProgram<ProjectRow> {
    const name = storableName(requestedName);
    const id = newId("project");
    try {
      yield* runSql(
        sqlFor({
          sqlite: sql`INSERT INTO projects (id, org_id, name, status, created_at, updated_at) VALUES (${id}, ${orgId}, ${name}, 'active', ${now}, ${now})`,
          postgres: sql`INSERT INTO projects (id, org_id, name, name_folded, status, created_at, updated_at) VALUES (${id}, ${orgId}, ${name}, ${folded(name)}, 'active', ${now}, ${now})`,
        }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
    return { id, org_id: orgId, name, status: "active", created_at: now, updated_at: now, max_concurrent_sessions: null };
  }

  *create(orgId: string, name: string): SqlProgram<ProjectRow> {
    return yield* inTransaction(() => this.insert(orgId, name));
  }

  *update(orgId: string, project: ProjectRow, change: ProjectChange): SqlProgram<ProjectRow> {
    return yield* inTransaction(() => this.#update(orgId, project, change));
  }

  *#update(orgId: string, project: ProjectRow, change: ProjectChange): SqlProgram<ProjectRow> {
    yield* this.#lockOrganization(orgId);
    const current = yield* this.findById(orgId, project.id);
    if (!current) throw new NotFoundError(`No project has the id "${project.id}" in this organization.`);
    const name = change.name === undefined ? current.name : storableName(change.name);
    const status = change.status ?? current.status;
    if (name === current.name && status === current.status) return current;
    if (current.status === "active" && status === "archived") {
      if ((yield* this.#countActive(orgId)) <= 1) throw new LastActiveProjectError("archive");
      if (yield* this.#isDefault(orgId, current.id)) throw new DefaultProjectError("archive");
      // Counted inside this transaction (under the organization's lock), and a browser's
      // slot is reserved in one too (BrowserStore.reserve, which refuses an archived
      // project): no browser can start between this check and the archive.
      const browsers = yield* this.#liveBrowsers(current.id);
      if (browsers > 0) throw new BrowsersRunningError(browsers);
    }
    const now = new Date().toISOString();
    try {
      yield* runSql(
        sqlFor({
          sqlite: sql`UPDATE projects SET name = ${name}, status = ${status}, updated_at = ${now} WHERE id = ${current.id}`,
          postgres: sql`UPDATE projects SET name = ${name}, name_folded = ${folded(name)}, status = ${status}, updated_at = ${now} WHERE id = ${current.id}`,
        }),
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
    return { ...current, name, status, updated_at: now };
  }

  *delete(orgId: string, project: ProjectRow): SqlProgram<void> {
    yield* inTransaction(() => this.#delete(orgId, project));
  }

  *#delete(orgId: string, project: ProjectRow): SqlProgram<void> {
    yield* this.#lockOrganization(orgId);
    const current = yield* this.findById(orgId, project.id);
    if (!current) throw new NotFoundError(`No project has the id "${project.id}" in this organization.`);
    if (current.status === "active" && (yield* this.#countActive(orgId)) <= 1) throw new LastActiveProjectError("delete");
    if (yield* this.#isDefault(orgId, current.id)) throw new DefaultProjectError("delete");
    // Each holds a process, stored data or concurrency capacity that nobody could reach
    // or free once the project is gone (usage only counts live projects).
    const held: [Sql, string][] = [
      [sql`SELECT CAST(count(*) AS INTEGER) AS n FROM extensions WHERE project_id = ${current.id} AND deleted_at IS NULL`, "extension"],
      [sql`SELECT CAST(count(*) AS INTEGER) AS n FROM credentials WHERE project_id = ${current.id}`, "credential"],
      [sql`SELECT CAST(count(*) AS INTEGER) AS n FROM profiles WHERE project_id = ${current.id}`, "profile"],
      [sql`SELECT CAST(count(*) AS INTEGER) AS n FROM auth_connections WHERE project_id = ${current.id}`, "auth connection"],
      [sql`SELECT CAST(count(*) AS INTEGER) AS n FROM pool_reservations WHERE project_id = ${current.id}`, "browser pool reservation"],
    ];
    const remaining: [number, string][] = [[yield* this.#liveBrowsers(current.id), "running browser"]];
    for (const [count, what] of held) remaining.push([(yield* getRow<{ n: number }>(count))?.n ?? 0, what]);
    const parts = remaining.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}${n === 1 ? "" : "s"}`);
    if (parts.length > 0) {
      const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
      throw new ProjectNotEmptyError(`The project still has ${list}; remove them first.`);
    }
    // A crashed browser holds no process and no slot; its record would only linger unseen.
    yield* runSql(sql`DELETE FROM browsers WHERE project_id = ${current.id} AND status = 'crashed'`);
    yield* runSql(sql`UPDATE projects SET deleted_at = ${new Date().toISOString()} WHERE id = ${current.id}`);
  }

  *setCap(project: ProjectRow, cap: number | null): SqlProgram<ProjectRow> {
    yield* inTransaction(() => runSql(sql`UPDATE projects SET max_concurrent_sessions = ${cap} WHERE id = ${project.id}`));
    return { ...project, max_concurrent_sessions: cap };
  }

  *#lockOrganization(orgId: string): SqlProgram<void> {
    yield* lockRows(sql`SELECT 1 FROM organizations WHERE id = ${orgId} FOR UPDATE`);
  }

  *#isDefault(orgId: string, projectId: string): SqlProgram<boolean> {
    return (yield* getRow<{ id: string }>(sql`SELECT default_project_id AS id FROM organizations WHERE id = ${orgId}`))?.id === projectId;
  }

  /** Browsers of the project that run or are starting (a starting one is about to run). */
  *#liveBrowsers(projectId: string): SqlProgram<number> {
    return (
      (yield* getRow<{ n: number }>(
        sql`SELECT CAST(count(*) AS INTEGER) AS n FROM browsers WHERE project_id = ${projectId} AND status IN ('starting', 'running')`,
      ))?.n ?? 0
    );
  }

  *#countActive(orgId: string): SqlProgram<number> {
    return (
      (yield* getRow<{ n: number }>(
        sql`SELECT CAST(count(*) AS INTEGER) AS n FROM projects WHERE org_id = ${orgId} AND status = 'active' AND deleted_at IS NULL`,
      ))?.n ?? 0
    );
  }
}
