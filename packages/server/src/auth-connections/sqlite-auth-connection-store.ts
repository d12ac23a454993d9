import type { ManagedAuth, ManagedAuthTimelineEvent } from "@browser-service/types";
import { isStorableText, isUniqueViolation, type SqliteDatabase } from "../storage/database.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import type { AuthConnectionPage, AuthConnectionRow, AuthConnectionStore, StoredAuthConnection, TimelinePage } from "./auth-connection-store.js";
import { TIMELINE_EVENTS_KEPT } from "./auth-connection-store.js";
import { connectionAt } from "./flow-expiry.js";
import { connectionExists, connectionNotFound, fromStoredConnection, nextCheckColumn, type StoredConnectionRow } from "./stored-connection.js";

/** {@link AuthConnectionStore} in SQLite. */
export class SqliteAuthConnectionStore implements Synchronous<AuthConnectionStore> {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  get(projectId: string, id: string, now = Date.now()): ManagedAuth {
    const row = this.find(projectId, id);
    if (row === undefined) throw connectionNotFound(id);
    return connectionAt(row.record, now);
  }

  find(projectId: string, id: string): AuthConnectionRow | undefined {
    if (!isStorableText(id)) return undefined;
    const row = this.#db.get<StoredConnectionRow>("SELECT project_id, record, internals FROM auth_connections WHERE id = ? AND project_id = ?", [
      id,
      projectId,
    ]);
    return row === undefined ? undefined : fromStoredConnection(row);
  }

  insert(row: AuthConnectionRow): void {
    const { projectId, record, internals } = row;
    try {
      this.#db.transaction(() =>
        this.#db.run(
          "INSERT INTO auth_connections (id, project_id, domain, profile_name, from_fixtures, record, internals, next_check_at) VALUES (?, ?, ?, ?, 0, ?, ?, ?)",
          [record.id, projectId, record.domain, record.profile_name, JSON.stringify(record), JSON.stringify(internals), nextCheckColumn(row)],
        ),
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw connectionExists(record);
      throw error;
    }
  }

  list(projectId: string, { offset, limit, domain, profileName, query }: AuthConnectionPage): { items: ManagedAuth[]; hasMore: boolean } {
    if ([domain, profileName, query].some((text) => text !== undefined && !isStorableText(text))) return { items: [], hasMore: false };
    const where = ["project_id = ?"];
    const params: (string | number)[] = [projectId];
    if (domain !== undefined) {
      where.push("domain = ?");
      params.push(domain);
    }
    if (profileName !== undefined) {
      where.push("profile_name = ?");
      params.push(profileName);
    }
    if (query !== undefined) {
      // instr, not LIKE: the text is matched as written, `%` and `_` included.
      where.push("(id = ? OR instr(lower(domain), lower(?)) > 0 OR instr(lower(profile_name), lower(?)) > 0)");
      params.push(query, query, query);
    }
    const rows = this.#db.all<{ record: string }>(`SELECT record FROM auth_connections WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ? OFFSET ?`, [
      ...params,
      limit + 1,
      offset,
    ]);
    const now = Date.now();
    return { items: rows.slice(0, limit).map((row) => connectionAt(JSON.parse(row.record) as ManagedAuth, now)), hasMore: rows.length > limit };
  }

  update(projectId: string, id: string, change: (current: AuthConnectionRow) => AuthConnectionRow | undefined): AuthConnectionRow | undefined {
    return this.#db.transaction(() => {
      const current = this.find(projectId, id);
      if (current === undefined) return undefined;
      const next = change(current);
      if (next === undefined) return undefined;
      this.#db.run("UPDATE auth_connections SET record = ?, internals = ?, next_check_at = ? WHERE id = ?", [
        JSON.stringify(next.record),
        JSON.stringify(next.internals),
        nextCheckColumn(next),
        id,
      ]);
      return next;
    });
  }

  delete(projectId: string, id: string): boolean {
    if (!isStorableText(id)) return false;
    return this.#db.transaction(() => {
      const removed = this.#db.run("DELETE FROM auth_connections WHERE id = ? AND project_id = ?", [id, projectId]);
      if (removed > 0) this.#db.run("DELETE FROM auth_timeline WHERE connection_id = ? AND project_id = ?", [id, projectId]);
      return removed > 0;
    });
  }

  due(now: number, limit: number): AuthConnectionRow[] {
    return this.#db
      .all<StoredConnectionRow>(
        "SELECT project_id, record, internals FROM auth_connections WHERE next_check_at IS NOT NULL AND next_check_at <= ? AND from_fixtures = 0 ORDER BY next_check_at LIMIT ?",
        [now, limit],
      )
      .map(fromStoredConnection);
  }

  inProgress(): AuthConnectionRow[] {
    return this.#db
      .all<StoredConnectionRow>("SELECT project_id, record, internals FROM auth_connections WHERE from_fixtures = 0")
      .map(fromStoredConnection)
      .filter((row) => row.record.flow_status === "IN_PROGRESS");
  }

  putTimelineEvent(projectId: string, connectionId: string, event: ManagedAuthTimelineEvent): void {
    this.#db.transaction(() => {
      const changed = this.#db.run("UPDATE auth_timeline SET record = ? WHERE id = ? AND connection_id = ?", [JSON.stringify(event), event.id, connectionId]);
      if (changed === 0) {
        this.#db.run("INSERT INTO auth_timeline (id, connection_id, project_id, type, record) VALUES (?, ?, ?, ?, ?)", [
          event.id,
          connectionId,
          projectId,
          event.type,
          JSON.stringify(event),
        ]);
        this.#db.run(
          "DELETE FROM auth_timeline WHERE connection_id = ? AND seq <= (SELECT seq FROM auth_timeline WHERE connection_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)",
          [connectionId, connectionId, TIMELINE_EVENTS_KEPT],
        );
      }
    });
  }

  timeline(projectId: string, connectionId: string, { offset, limit, type }: TimelinePage): { items: ManagedAuthTimelineEvent[]; hasMore: boolean } {
    const where = ["connection_id = ?", "project_id = ?"];
    const params: (string | number)[] = [connectionId, projectId];
    if (type !== undefined) {
      where.push("type = ?");
      params.push(type);
    }
    const rows = this.#db.all<{ record: string }>(`SELECT record FROM auth_timeline WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ? OFFSET ?`, [
      ...params,
      limit + 1,
      offset,
    ]);
    return { items: rows.slice(0, limit).map((row) => JSON.parse(row.record) as ManagedAuthTimelineEvent), hasMore: rows.length > limit };
  }

  replaceAll(connections: StoredAuthConnection[]): void {
    this.#db.run("DELETE FROM auth_connections WHERE from_fixtures = 1");
    for (const connection of connections) {
      this.#db.run("INSERT INTO auth_connections (id, project_id, domain, profile_name, from_fixtures, record) VALUES (?, ?, ?, ?, 1, ?)", [
        connection.record.id,
        connection.projectId,
        connection.record.domain,
        connection.record.profile_name,
        JSON.stringify(connection.record),
      ]);
    }
  }
}
