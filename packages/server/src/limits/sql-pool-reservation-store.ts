import { type Programs, runSql, type SqlProgram } from "../storage/sql-program.js";
import { sql } from "../storage/sql-text.js";
import type { PoolReservation, PoolReservationStore } from "./pool-reservation-store.js";

/** {@link PoolReservationStore} on either database; the unit of work it must run in makes the replacement atomic. */
export class SqlPoolReservationStore implements Programs<PoolReservationStore> {
  *replaceAll(reservations: PoolReservation[]): SqlProgram<void> {
    yield* runSql(sql`DELETE FROM pool_reservations`);
    for (const reservation of reservations) {
      yield* runSql(sql`INSERT INTO pool_reservations (project_id, name, size) VALUES (${reservation.projectId}, ${reservation.name}, ${reservation.size})`);
    }
  }
}
