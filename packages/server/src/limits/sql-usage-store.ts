import { getRow, type Programs, type SqlProgram } from "../storage/sql-program.js";
import { sql } from "../storage/sql-text.js";
import type { UsageStore } from "./usage-store.js";

/**
 * {@link UsageStore} on either database. Browsers still launching hold their slot too, so
 * concurrent creates cannot overshoot.
 */
export class SqlUsageStore implements Programs<UsageStore> {
  *organization(orgId: string): SqlProgram<number> {
    const row = yield* getRow<{ n: number }>(
      sql`SELECT CAST(
         (SELECT count(*) FROM browsers b JOIN projects p ON p.id = b.project_id WHERE p.org_id = ${orgId} AND p.deleted_at IS NULL AND b.status IN ('starting', 'running'))
       + (SELECT coalesce(sum(r.size), 0) FROM pool_reservations r JOIN projects p ON p.id = r.project_id WHERE p.org_id = ${orgId} AND p.deleted_at IS NULL) AS INTEGER) AS n`,
    );
    return row?.n ?? 0;
  }

  *project(projectId: string): SqlProgram<number> {
    const row = yield* getRow<{ n: number }>(
      sql`SELECT CAST(
         (SELECT count(*) FROM browsers WHERE project_id = ${projectId} AND status IN ('starting', 'running'))
       + (SELECT coalesce(sum(size), 0) FROM pool_reservations WHERE project_id = ${projectId}) AS INTEGER) AS n`,
    );
    return row?.n ?? 0;
  }
}
