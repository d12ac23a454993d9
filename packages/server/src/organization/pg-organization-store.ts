import type { PgDatabase } from "../storage/pg-database.js";
import type { Organization, OrganizationStore } from "./organization-store.js";

const COLUMNS = "id, default_project_id, default_project_max_concurrent_sessions, created_at";

/** {@link OrganizationStore} in PostgreSQL. */
export class PgOrganizationStore implements OrganizationStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  find(): Promise<Organization | undefined> {
    return this.#db.get<Organization>(`SELECT ${COLUMNS} FROM organizations ORDER BY created_at LIMIT 1`);
  }

  async get(id: string): Promise<Organization> {
    const org = await this.#db.get<Organization>(`SELECT ${COLUMNS} FROM organizations WHERE id = $1`, [id]);
    if (!org) throw new Error(`Organization ${id} named by an API key does not exist; the database is inconsistent.`);
    return org;
  }

  async insert(org: Organization): Promise<void> {
    await this.#db.run(`INSERT INTO organizations (${COLUMNS}) VALUES ($1, $2, $3, $4)`, [
      org.id,
      org.default_project_id,
      org.default_project_max_concurrent_sessions,
      org.created_at,
    ]);
  }

  async setDefaultProject(id: string, projectId: string): Promise<void> {
    await this.#db.run("UPDATE organizations SET default_project_id = $1 WHERE id = $2", [projectId, id]);
  }

  async setDefaultProjectCap(id: string, cap: number | null): Promise<void> {
    await this.#db.run("UPDATE organizations SET default_project_max_concurrent_sessions = $1 WHERE id = $2", [cap, id]);
  }
}
