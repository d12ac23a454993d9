import type { ManagedAuth } from "@browser-service/types";
import { NotFoundError } from "../http/api-errors.js";
import { isStorableText, type SqliteDatabase } from "../storage/database.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import type { AuthConnectionStore, StoredAuthConnection } from "./auth-connection-store.js";
import { connectionAt } from "./flow-expiry.js";

/** {@link AuthConnectionStore} in SQLite. */
export class SqliteAuthConnectionStore implements Synchronous<AuthConnectionStore> {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  get(projectId: string, id: string, now = Date.now()): ManagedAuth {
    const row = isStorableText(id)
      ? this.#db.get<{ record: string }>("SELECT record FROM auth_connections WHERE id = ? AND project_id = ?", [id, projectId])
      : undefined;
    if (!row) throw new NotFoundError(`No auth connection has the id "${id}" in this project.`);
    return connectionAt(JSON.parse(row.record) as ManagedAuth, now);
  }

  replaceAll(connections: StoredAuthConnection[]): void {
    this.#db.run("DELETE FROM auth_connections");
    for (const connection of connections) {
      this.#db.run("INSERT INTO auth_connections (id, project_id, record) VALUES (?, ?, ?)", [
        connection.record.id,
        connection.projectId,
        JSON.stringify(connection.record),
      ]);
    }
  }
}
