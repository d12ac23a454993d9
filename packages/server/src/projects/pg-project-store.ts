import { BrowsersRunningError, DefaultProjectError, LastActiveProjectError, NotFoundError, ProjectNotEmptyError } from "../http/api-errors.js";
import { isStorableText } from "../storage/database.js";
import { newId } from "../storage/ids.js";
import { isPgUniqueViolation, type PgDatabase, type PgValue } from "../storage/pg-database.js";
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

/** The folded form of a name that the `query` filter compares, as SQLite's `casefold` folds it. */
function folded(name: string): string {
  return name.toLowerCase();
}

/**
 * {@link ProjectStore} in PostgreSQL. The rules that read before they write (archive,
 * delete) lock the organization's row first, as a browser's reserve does, so that on
 * every server they run one at a time within an organization.
 */
export class PgProjectStore implements ProjectStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async findById(orgId: string, id: string): Promise<ProjectRow | undefined> {
    if (!isStorableText(id)) return undefined;
    return this.#db.get<ProjectRow>(`SELECT ${COLUMNS} FROM projects WHERE org_id = $1 AND id = $2 AND deleted_at IS NULL`, [orgId, id]);
  }

  async findByIdOrName(orgId: string, idOrName: string): Promise<ProjectRow | undefined> {
    return (await this.findById(orgId, idOrName)) ?? (await this.findByName(orgId, idOrName));
  }

  async findByName(orgId: string, name: string): Promise<ProjectRow | undefined> {
    if (!isStorableText(name)) return undefined;
    return this.#db.get<ProjectRow>(`SELECT ${COLUMNS} FROM projects WHERE org_id = $1 AND name = $2 AND deleted_at IS NULL`, [
      orgId,
      canonicalProjectName(name),
    ]);
  }

  async getByIdOrName(orgId: string, idOrName: string): Promise<ProjectRow> {
    const row = await this.findByIdOrName(orgId, idOrName);
    if (!row) throw projectNotFound(idOrName);
    return row;
  }

  async list(orgId: string, query: ProjectListQuery): Promise<{ items: readonly ProjectRow[]; hasMore: boolean }> {
    if ([query.name, query.query, query.onlyId].some((text) => text !== undefined && !isStorableText(text))) return { items: [], hasMore: false };
    const params: PgValue[] = [orgId];
    const where = ["org_id = $1", "deleted_at IS NULL"];
    const bind = (value: PgValue) => `$${params.push(value)}`;
    if (query.name !== undefined) where.push(`name = ${bind(canonicalProjectName(query.name))}`);
    if (query.query !== undefined) where.push(`strpos(name_folded, ${bind(folded(canonicalProjectName(query.query)))}) > 0`);
    if (query.onlyId !== undefined) where.push(`id = ${bind(query.onlyId)}`);
    const rows = await this.#db.all<ProjectRow>(
      `SELECT ${COLUMNS} FROM projects WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ${bind(query.limit + 1)} OFFSET ${bind(query.offset)}`,
      params,
    );
    return { items: rows.slice(0, query.limit), hasMore: rows.length > query.limit };
  }

  async insert(orgId: string, requestedName: string, now = new Date().toISOString()): Promise<ProjectRow> {
    const name = storableName(requestedName);
    const id = newId("project");
    try {
      await this.#db.run("INSERT INTO projects (id, org_id, name, name_folded, status, created_at, updated_at) VALUES ($1, $2, $3, $4, 'active', $5, $5)", [
        id,
        orgId,
        name,
        folded(name),
        now,
      ]);
    } catch (error) {
      if (isPgUniqueViolation(error)) throw nameTaken(name);
      throw error;
    }
    return { id, org_id: orgId, name, status: "active", created_at: now, updated_at: now, max_concurrent_sessions: null };
  }

  create(orgId: string, name: string): Promise<ProjectRow> {
    return this.insert(orgId, name);
  }

  update(orgId: string, project: ProjectRow, change: ProjectChange): Promise<ProjectRow> {
    return this.#db.transaction(async () => {
      await this.#lockOrganization(orgId);
      const current = await this.findById(orgId, project.id);
      if (!current) throw new NotFoundError(`No project has the id "${project.id}" in this organization.`);
      const name = change.name === undefined ? current.name : storableName(change.name);
      const status = change.status ?? current.status;
      if (name === current.name && status === current.status) return current;
      if (current.status === "active" && status === "archived") {
        if ((await this.#countActive(orgId)) <= 1) throw new LastActiveProjectError("archive");
        if (await this.#isDefault(orgId, current.id)) throw new DefaultProjectError("archive");
        // Counted under the organization's lock, which a browser's reserve takes too: no
        // browser can start between this check and the archive.
        const browsers = await this.#liveBrowsers(current.id);
        if (browsers > 0) throw new BrowsersRunningError(browsers);
      }
      const now = new Date().toISOString();
      try {
        await this.#db.run("UPDATE projects SET name = $1, name_folded = $2, status = $3, updated_at = $4 WHERE id = $5", [
          name,
          folded(name),
          status,
          now,
          current.id,
        ]);
      } catch (error) {
        if (isPgUniqueViolation(error)) throw nameTaken(name);
        throw error;
      }
      return { ...current, name, status, updated_at: now };
    });
  }

  delete(orgId: string, project: ProjectRow): Promise<void> {
    return this.#db.transaction(async () => {
      await this.#lockOrganization(orgId);
      const current = await this.findById(orgId, project.id);
      if (!current) throw new NotFoundError(`No project has the id "${project.id}" in this organization.`);
      if (current.status === "active" && (await this.#countActive(orgId)) <= 1) throw new LastActiveProjectError("delete");
      if (await this.#isDefault(orgId, current.id)) throw new DefaultProjectError("delete");
      const count = async (sql: string) => (await this.#db.get<{ n: number }>(sql, [current.id]))?.n ?? 0;
      const remaining: [number, string][] = [
        [await this.#liveBrowsers(current.id), "running browser"],
        [await count("SELECT count(*)::int AS n FROM extensions WHERE project_id = $1 AND deleted_at IS NULL"), "extension"],
        [await count("SELECT count(*)::int AS n FROM credentials WHERE project_id = $1"), "credential"],
        [await count("SELECT count(*)::int AS n FROM profiles WHERE project_id = $1"), "profile"],
        [await count("SELECT count(*)::int AS n FROM auth_connections WHERE project_id = $1"), "auth connection"],
        [await count("SELECT count(*)::int AS n FROM pool_reservations WHERE project_id = $1"), "browser pool reservation"],
      ];
      const parts = remaining.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}${n === 1 ? "" : "s"}`);
      if (parts.length > 0) {
        const list = parts.length === 1 ? parts[0] : `${parts.slice(0, -1).join(", ")} and ${parts.at(-1)}`;
        throw new ProjectNotEmptyError(`The project still has ${list}; remove them first.`);
      }
      await this.#db.run("DELETE FROM browsers WHERE project_id = $1 AND status = 'crashed'", [current.id]);
      await this.#db.run("UPDATE projects SET deleted_at = $1 WHERE id = $2", [new Date().toISOString(), current.id]);
    });
  }

  async setCap(project: ProjectRow, cap: number | null): Promise<ProjectRow> {
    await this.#db.run("UPDATE projects SET max_concurrent_sessions = $1 WHERE id = $2", [cap, project.id]);
    return { ...project, max_concurrent_sessions: cap };
  }

  async #lockOrganization(orgId: string): Promise<void> {
    await this.#db.run("SELECT 1 FROM organizations WHERE id = $1 FOR UPDATE", [orgId]);
  }

  async #isDefault(orgId: string, projectId: string): Promise<boolean> {
    return (await this.#db.get<{ id: string }>("SELECT default_project_id AS id FROM organizations WHERE id = $1", [orgId]))?.id === projectId;
  }

  async #liveBrowsers(projectId: string): Promise<number> {
    return (
      (await this.#db.get<{ n: number }>("SELECT count(*)::int AS n FROM browsers WHERE project_id = $1 AND status IN ('starting', 'running')", [projectId]))
        ?.n ?? 0
    );
  }

  async #countActive(orgId: string): Promise<number> {
    return (
      (await this.#db.get<{ n: number }>("SELECT count(*)::int AS n FROM projects WHERE org_id = $1 AND status = 'active' AND deleted_at IS NULL", [orgId]))
        ?.n ?? 0
    );
  }
}
