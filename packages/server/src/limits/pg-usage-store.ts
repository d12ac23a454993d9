import type { PgDatabase } from "../storage/pg-database.js";
import type { UsageStore } from "./usage-store.js";

// Browsers still launching hold their slot too, so concurrent creates cannot overshoot.
const LIVE_BROWSER = "status IN ('starting', 'running')";

/** {@link UsageStore} in PostgreSQL. */
export class PgUsageStore implements UsageStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async organization(orgId: string): Promise<number> {
    const row = await this.#db.get<{ n: number }>(
      `SELECT (
         (SELECT count(*) FROM browsers b JOIN projects p ON p.id = b.project_id WHERE p.org_id = $1 AND p.deleted_at IS NULL AND b.${LIVE_BROWSER})
       + (SELECT coalesce(sum(r.size), 0) FROM pool_reservations r JOIN projects p ON p.id = r.project_id WHERE p.org_id = $1 AND p.deleted_at IS NULL))::int AS n`,
      [orgId],
    );
    return row?.n ?? 0;
  }

  async project(projectId: string): Promise<number> {
    const row = await this.#db.get<{ n: number }>(
      `SELECT (
         (SELECT count(*) FROM browsers WHERE project_id = $1 AND ${LIVE_BROWSER})
       + (SELECT coalesce(sum(size), 0) FROM pool_reservations WHERE project_id = $1))::int AS n`,
      [projectId],
    );
    return row?.n ?? 0;
  }
}
