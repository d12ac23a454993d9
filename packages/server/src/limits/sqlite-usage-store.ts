import type { SqliteDatabase } from "../storage/database.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import type { UsageStore } from "./usage-store.js";

// Browsers still launching hold their slot too, so concurrent creates cannot overshoot.
const LIVE_BROWSER = "status IN ('starting', 'running')";

/** {@link UsageStore} in SQLite. */
export class SqliteUsageStore implements Synchronous<UsageStore> {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  organization(orgId: string): number {
    const row = this.#db.get<{ n: number }>(
      `SELECT
         (SELECT count(*) FROM browsers b JOIN projects p ON p.id = b.project_id WHERE p.org_id = :org AND p.deleted_at IS NULL AND b.${LIVE_BROWSER})
       + (SELECT coalesce(sum(r.size), 0) FROM pool_reservations r JOIN projects p ON p.id = r.project_id WHERE p.org_id = :org AND p.deleted_at IS NULL) AS n`,
      { ":org": orgId },
    );
    return row?.n ?? 0;
  }

  project(projectId: string): number {
    const row = this.#db.get<{ n: number }>(
      `SELECT
         (SELECT count(*) FROM browsers WHERE project_id = :project AND ${LIVE_BROWSER})
       + (SELECT coalesce(sum(size), 0) FROM pool_reservations WHERE project_id = :project) AS n`,
      { ":project": projectId },
    );
    return row?.n ?? 0;
  }
}
