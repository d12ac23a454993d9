import type { ManagedAuth, ManagedAuthTimelineEvent } from "@browser-service/types";
import { isStorableText } from "../storage/database.js";
import { isPgUniqueViolation, type PgDatabase, type PgValue } from "../storage/pg-database.js";
import {
  type AuthConnectionPage,
  type AuthConnectionRow,
  type AuthConnectionStore,
  type StoredAuthConnection,
  TIMELINE_EVENTS_KEPT,
  type TimelinePage,
} from "./auth-connection-store.js";
import { connectionAt } from "./flow-expiry.js";
import { connectionExists, connectionNotFound, fromStoredConnection, nextCheckColumn, type StoredConnectionRow } from "./stored-connection.js";

/** {@link AuthConnectionStore} in PostgreSQL, shared by every node. */
export class PgAuthConnectionStore implements AuthConnectionStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async get(projectId: string, id: string, now = Date.now()): Promise<ManagedAuth> {
    const row = await this.find(projectId, id);
    if (row === undefined) throw connectionNotFound(id);
    return connectionAt(row.record, now);
  }

  async find(projectId: string, id: string, lock = false): Promise<AuthConnectionRow | undefined> {
    if (!isStorableText(id)) return undefined;
    const row = await this.#db.get<StoredConnectionRow>(
      `SELECT project_id, record, internals FROM auth_connections WHERE id = $1 AND project_id = $2${lock ? " FOR UPDATE" : ""}`,
      [id, projectId],
    );
    return row === undefined ? undefined : fromStoredConnection(row);
  }

  async insert(row: AuthConnectionRow): Promise<void> {
    const { projectId, record, internals } = row;
    try {
      await this.#db.run(
        "INSERT INTO auth_connections (id, project_id, domain, profile_name, from_fixtures, record, internals, next_check_at) VALUES ($1, $2, $3, $4, 0, $5, $6, $7)",
        [record.id, projectId, record.domain, record.profile_name, JSON.stringify(record), JSON.stringify(internals), nextCheckColumn(row)],
      );
    } catch (error) {
      if (isPgUniqueViolation(error)) throw connectionExists(record);
      throw error;
    }
  }

  async list(projectId: string, { offset, limit, domain, profileName, query }: AuthConnectionPage): Promise<{ items: ManagedAuth[]; hasMore: boolean }> {
    if ([domain, profileName, query].some((text) => text !== undefined && !isStorableText(text))) return { items: [], hasMore: false };
    const params: PgValue[] = [projectId];
    const where = ["project_id = $1"];
    if (domain !== undefined) {
      params.push(domain);
      where.push(`domain = $${params.length}`);
    }
    if (profileName !== undefined) {
      params.push(profileName);
      where.push(`profile_name = $${params.length}`);
    }
    if (query !== undefined) {
      params.push(query);
      const n = params.length;
      // strpos, not LIKE: the text is matched as written, `%` and `_` included.
      where.push(`(id = $${n} OR strpos(lower(domain), lower($${n})) > 0 OR strpos(lower(profile_name), lower($${n})) > 0)`);
    }
    params.push(limit + 1, offset);
    const rows = await this.#db.all<{ record: string }>(
      `SELECT record FROM auth_connections WHERE ${where.join(" AND ")} ORDER BY seq LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    const now = Date.now();
    return { items: rows.slice(0, limit).map((row) => connectionAt(JSON.parse(row.record) as ManagedAuth, now)), hasMore: rows.length > limit };
  }

  async update(projectId: string, id: string, change: (current: AuthConnectionRow) => AuthConnectionRow | undefined): Promise<AuthConnectionRow | undefined> {
    return this.#db.transaction(async () => {
      const current = await this.find(projectId, id, true);
      if (current === undefined) return undefined;
      const next = change(current);
      if (next === undefined) return undefined;
      await this.#db.run("UPDATE auth_connections SET record = $1, internals = $2, next_check_at = $3 WHERE id = $4", [
        JSON.stringify(next.record),
        JSON.stringify(next.internals),
        nextCheckColumn(next),
        id,
      ]);
      return next;
    });
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    if (!isStorableText(id)) return false;
    return this.#db.transaction(async () => {
      const removed = await this.#db.run("DELETE FROM auth_connections WHERE id = $1 AND project_id = $2", [id, projectId]);
      if (removed > 0) await this.#db.run("DELETE FROM auth_timeline WHERE connection_id = $1 AND project_id = $2", [id, projectId]);
      return removed > 0;
    });
  }

  async due(now: number, limit: number): Promise<AuthConnectionRow[]> {
    const rows = await this.#db.all<StoredConnectionRow>(
      "SELECT project_id, record, internals FROM auth_connections WHERE next_check_at IS NOT NULL AND next_check_at <= $1 AND from_fixtures = 0 ORDER BY next_check_at LIMIT $2",
      [now, limit],
    );
    return rows.map(fromStoredConnection);
  }

  async inProgress(): Promise<AuthConnectionRow[]> {
    const rows = await this.#db.all<StoredConnectionRow>("SELECT project_id, record, internals FROM auth_connections WHERE from_fixtures = 0");
    return rows.map(fromStoredConnection).filter((row) => row.record.flow_status === "IN_PROGRESS");
  }

  async putTimelineEvent(projectId: string, connectionId: string, event: ManagedAuthTimelineEvent): Promise<void> {
    await this.#db.run(
      "INSERT INTO auth_timeline (id, connection_id, project_id, type, record) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET record = excluded.record",
      [event.id, connectionId, projectId, event.type, JSON.stringify(event)],
    );
    await this.#db.run(
      "DELETE FROM auth_timeline WHERE connection_id = $1 AND seq <= (SELECT seq FROM auth_timeline WHERE connection_id = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2)",
      [connectionId, TIMELINE_EVENTS_KEPT],
    );
  }

  async timeline(
    projectId: string,
    connectionId: string,
    { offset, limit, type }: TimelinePage,
  ): Promise<{ items: ManagedAuthTimelineEvent[]; hasMore: boolean }> {
    const params: PgValue[] = [connectionId, projectId];
    const where = ["connection_id = $1", "project_id = $2"];
    if (type !== undefined) {
      params.push(type);
      where.push(`type = $${params.length}`);
    }
    params.push(limit + 1, offset);
    const rows = await this.#db.all<{ record: string }>(
      `SELECT record FROM auth_timeline WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return { items: rows.slice(0, limit).map((row) => JSON.parse(row.record) as ManagedAuthTimelineEvent), hasMore: rows.length > limit };
  }

  async replaceAll(connections: StoredAuthConnection[]): Promise<void> {
    await this.#db.transaction(async () => {
      await this.#db.run("DELETE FROM auth_connections WHERE from_fixtures = 1");
      for (const connection of connections) {
        await this.#db.run("INSERT INTO auth_connections (id, project_id, domain, profile_name, from_fixtures, record) VALUES ($1, $2, $3, $4, 1, $5)", [
          connection.record.id,
          connection.projectId,
          connection.record.domain,
          connection.record.profile_name,
          JSON.stringify(connection.record),
        ]);
      }
    });
  }
}
