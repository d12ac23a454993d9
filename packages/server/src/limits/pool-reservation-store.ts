/** Capacity a browser pool holds in a project; it counts toward the concurrency limits. */
export interface PoolReservation {
  projectId: string;
  /** The pool's name, for people reading the database. */
  name: string;
  /** Browsers the pool reserves. */
  size: number;
}

/** Browser pool reservations (pools themselves are outside this server; fixtures load them). */
export interface PoolReservationStore {
  /** Replaces every reservation; must run inside a unit of work. */
  replaceAll(reservations: PoolReservation[]): Promise<void>;
}
