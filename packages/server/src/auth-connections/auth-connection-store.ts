import type { ManagedAuth } from "@browser-service/types";
import { NotFoundError } from "../http/api-errors.js";
import { connectionAt } from "./flow-expiry.js";
import { isStorableText, type SqliteDatabase } from "../storage/database.js";

/** A stored connection and the project it belongs to. */
export interface StoredAuthConnection {
  projectId: string;
  record: ManagedAuth;
}

/** Managed auth connections, each a validated `ManagedAuth` record scoped to one project. */
export class AuthConnectionStore {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  /**
   * The connection with this id in the project as it reads at `now` (a flow past its
   * `flow_expires_at` reads as `EXPIRED`); one in another project is 404 `not_found` too.
   */
  get(projectId: string, id: string, now = Date.now()): ManagedAuth {
    const row = isStorableText(id) ? this.#db.get<{ record: string }>("SELECT record FROM auth_connections WHERE id = ? AND project_id = ?", [id, projectId]) : undefined;
    if (!row) throw new NotFoundError(`No auth connection has the id "${id}" in this project.`);
    return connectionAt(JSON.parse(row.record) as ManagedAuth, now);
  }

  /** Replaces every stored connection; must run inside a transaction. */
  replaceAll(connections: StoredAuthConnection[]): void {
    this.#db.run("DELETE FROM auth_connections");
    for (const connection of connections) {
      this.#db.run("INSERT INTO auth_connections (id, project_id, record) VALUES (?, ?, ?)", [connection.record.id, connection.projectId, JSON.stringify(connection.record)]);
    }
  }
}
