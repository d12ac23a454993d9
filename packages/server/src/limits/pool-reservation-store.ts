import type { SqliteDatabase } from "../storage/database.js";

/** Capacity a browser pool holds in a project; it counts toward the concurrency limits. */
export interface PoolReservation {
  projectId: string;
  /** The pool's name, for people reading the database. */
  name: string;
  /** Browsers the pool reserves. */
  size: number;
}

/** Browser pool reservations (pools themselves are outside this server; fixtures load them). */
export class PoolReservationStore {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  /** Replaces every reservation; must run inside a transaction. */
  replaceAll(reservations: PoolReservation[]): void {
    this.#db.run("DELETE FROM pool_reservations");
    for (const reservation of reservations) {
      this.#db.run("INSERT INTO pool_reservations (project_id, name, size) VALUES (?, ?, ?)", [reservation.projectId, reservation.name, reservation.size]);
    }
  }
}
