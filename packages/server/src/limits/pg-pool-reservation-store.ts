import type { PgDatabase } from "../storage/pg-database.js";
import type { PoolReservation, PoolReservationStore } from "./pool-reservation-store.js";

/** {@link PoolReservationStore} in PostgreSQL. */
export class PgPoolReservationStore implements PoolReservationStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async replaceAll(reservations: PoolReservation[]): Promise<void> {
    await this.#db.transaction(async () => {
      await this.#db.run("DELETE FROM pool_reservations");
      for (const reservation of reservations) {
        await this.#db.run("INSERT INTO pool_reservations (project_id, name, size) VALUES ($1, $2, $3)", [
          reservation.projectId,
          reservation.name,
          reservation.size,
        ]);
      }
    });
  }
}
