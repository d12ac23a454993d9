import type { SqliteDatabase } from "../storage/database.js";

/** The organization a data directory serves. */
export interface Organization {
  id: string;
  /** The project a request acts on without a project header or a project-scoped key. */
  default_project_id: string;
  /** The default per-project cap; `null` when not set. */
  default_project_max_concurrent_sessions: number | null;
  created_at: string;
}

/** The organization row: its default project and default per-project cap. */
export class OrganizationStore {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  /** The organization, or `undefined` before the first start created it. */
  find(): Organization | undefined {
    return this.#db.get<Organization>("SELECT id, default_project_id, default_project_max_concurrent_sessions, created_at FROM organizations ORDER BY created_at LIMIT 1");
  }

  /** The organization with this id; it must exist (every key names one). */
  get(id: string): Organization {
    const org = this.#db.remembered<Organization>("get", "SELECT id, default_project_id, default_project_max_concurrent_sessions, created_at FROM organizations WHERE id = ?", [id]);
    if (!org) throw new Error(`Organization ${id} named by an API key does not exist; the database is inconsistent.`);
    return org;
  }

  /** Inserts the organization; must run inside a transaction. */
  insert(org: Organization): void {
    this.#db.run("INSERT INTO organizations (id, default_project_id, default_project_max_concurrent_sessions, created_at) VALUES (?, ?, ?, ?)", [
      org.id,
      org.default_project_id,
      org.default_project_max_concurrent_sessions,
      org.created_at,
    ]);
  }

  /** Points the organization at its default project; must run inside a transaction. */
  setDefaultProject(id: string, projectId: string): void {
    this.#db.run("UPDATE organizations SET default_project_id = ? WHERE id = ?", [projectId, id]);
  }

  /** Sets or clears (`null`) the default per-project cap. */
  setDefaultProjectCap(id: string, cap: number | null): void {
    this.#db.transaction(() => this.#db.run("UPDATE organizations SET default_project_max_concurrent_sessions = ? WHERE id = ?", [cap, id]));
  }
}
