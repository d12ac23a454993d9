import type { SqliteDatabase } from "../storage/database.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import type { Organization, OrganizationStore } from "./organization-store.js";

/** {@link OrganizationStore} in SQLite. */
export class SqliteOrganizationStore implements Synchronous<OrganizationStore> {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  find(): Organization | undefined {
    return this.#db.get<Organization>(
      "SELECT id, default_project_id, default_project_max_concurrent_sessions, created_at FROM organizations ORDER BY created_at LIMIT 1",
    );
  }

  get(id: string): Organization {
    const org = this.#db.remembered<Organization>(
      "get",
      "SELECT id, default_project_id, default_project_max_concurrent_sessions, created_at FROM organizations WHERE id = ?",
      [id],
    );
    if (!org) throw new Error(`Organization ${id} named by an API key does not exist; the database is inconsistent.`);
    return org;
  }

  insert(org: Organization): void {
    this.#db.run("INSERT INTO organizations (id, default_project_id, default_project_max_concurrent_sessions, created_at) VALUES (?, ?, ?, ?)", [
      org.id,
      org.default_project_id,
      org.default_project_max_concurrent_sessions,
      org.created_at,
    ]);
  }

  setDefaultProject(id: string, projectId: string): void {
    this.#db.run("UPDATE organizations SET default_project_id = ? WHERE id = ?", [projectId, id]);
  }

  setDefaultProjectCap(id: string, cap: number | null): void {
    this.#db.transaction(() => this.#db.run("UPDATE organizations SET default_project_max_concurrent_sessions = ? WHERE id = ?", [cap, id]));
  }
}
