import type { ManagedAuth } from "@browser-service/types";
import { NotFoundError } from "../http/api-errors.js";
import { isStorableText } from "../storage/database.js";
import type { PgDatabase } from "../storage/pg-database.js";
import type { AuthConnectionStore, StoredAuthConnection } from "./auth-connection-store.js";
import { connectionAt } from "./flow-expiry.js";

/** {@link AuthConnectionStore} in PostgreSQL. */
export class PgAuthConnectionStore implements AuthConnectionStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async get(projectId: string, id: string, now = Date.now()): Promise<ManagedAuth> {
    const row = isStorableText(id)
      ? await this.#db.get<{ record: string }>("SELECT record FROM auth_connections WHERE id = $1 AND project_id = $2", [id, projectId])
      : undefined;
    if (!row) throw new NotFoundError(`No auth connection has the id "${id}" in this project.`);
    return connectionAt(JSON.parse(row.record) as ManagedAuth, now);
  }

  async replaceAll(connections: StoredAuthConnection[]): Promise<void> {
    await this.#db.transaction(async () => {
      await this.#db.run("DELETE FROM auth_connections");
      for (const connection of connections) {
        await this.#db.run("INSERT INTO auth_connections (id, project_id, record) VALUES ($1, $2, $3)", [
          connection.record.id,
          connection.projectId,
          JSON.stringify(connection.record),
        ]);
      }
    });
  }
}
