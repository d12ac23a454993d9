import { inTransaction, type Programs, runSql, type SqlProgram, type SqlStoreContext } from "../storage/sql-program.js";
import { sql } from "../storage/sql-text.js";
import type { PoolReservation, PoolReservationStore } from "./pool-reservation-store.js";

/**
 * {@link PoolReservationStore} on either database. On SQLite the unit of work it must run
 * in makes the replacement atomic (SQLite's transactions do not nest); on PostgreSQL it is
 * one transaction of its own too, which joins the unit of work.
 */
export class SqlPoolReservationStore implements Programs<PoolReservationStore> {
  readonly #ownTransaction: boolean;

  constructor(context: SqlStoreContext) {
    this.#ownTransaction = context.dialect === "postgres";
  }

  *replaceAll(reservations: PoolReservation[]): SqlProgram<void> {
    if (this.#ownTransaction) yield* inTransaction(() => this.#replaceAll(reservations));
    else yield* this.#replaceAll(reservations);
  }

  *#replaceAll(reservations: PoolReservation[]): SqlProgram<void> {
    yield* runSql(sql`DELETE FROM pool_reservations`);
    for (const reservation of reservations) {
      yield* runSql(sql`INSERT INTO pool_reservations (project_id, name, size) VALUES (${reservation.projectId}, ${reservation.name}, ${reservation.size})`);
    }
  }
}
