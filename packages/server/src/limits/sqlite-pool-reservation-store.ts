import type { SqliteDatabase } from "../storage/database.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import type { PoolReservation, PoolReservationStore } from "./pool-reservation-store.js";

/** {@link PoolReservationStore} in SQLite. */
export class SqlitePoolReservationStore implements Synchronous<PoolReservationStore> {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  replaceAll(reservations: PoolReservation[]): void {
    this.#db.run("DELETE FROM pool_reservations");
    for (const reservation of reservations) {
      this.#db.run("INSERT INTO pool_reservations (project_id, name, size) VALUES (?, ?, ?)", [reservation.projectId, reservation.name, reservation.size]);
    }
  }
}
