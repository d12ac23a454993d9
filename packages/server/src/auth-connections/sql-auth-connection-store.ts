import type { ManagedAuth, ManagedAuthTimelineEvent } from "@browser-service/types";
import { isStorableText } from "../storage/database.js";
import { isUniqueViolation } from "../storage/program-runners.js";
import { allRows, getRow, inTransaction, lockRows, type Programs, runSql, type SqlProgram, type SqlStoreContext } from "../storage/sql-program.js";
import { type Dialect, joinSql, rawSql, type Sql, sql, sqlContains, sqlFor } from "../storage/sql-text.js";
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

/**
 * {@link AuthConnectionStore}'s rules, once for both databases (in PostgreSQL shared by
 * every node). A change reads the connection under its row lock in PostgreSQL (SQLite's
 * write transaction holds the whole database). Records, internals and timeline events
 * are stored as JSON text in both.
 */
export class SqlAuthConnectionStore implements Programs<AuthConnectionStore> {
  readonly #dialect: Dialect;

  constructor(context: SqlStoreContext) {
    this.#dialect = context.dialect;
  }

  *get(projectId: string, id: string, now = Date.now()): SqlProgram<ManagedAuth> {
    const row = yield* this.find(projectId, id);
    if (row === undefined) throw connectionNotFound(id);
    return connectionAt(row.record, now);
  }

  *find(projectId: string, id: string): SqlProgram<AuthConnectionRow | undefined> {
    return yield* this.#find(projectId, id, false);
  }

  *#find(projectId: string, id: string, lock: boolean): SqlProgram<AuthConnectionRow | undefined> {
    // No stored id holds a NUL, which SQLite's binding would cut the text at.
    if (!isStorableText(id)) return undefined;
    if (lock) yield* lockRows(sql`SELECT 1 FROM auth_connections WHERE id = ${id} AND project_id = ${projectId} FOR UPDATE`);
    const row = yield* getRow<StoredConnectionRow>(
      sql`SELECT project_id, record, internals FROM auth_connections WHERE id = ${id} AND project_id = ${projectId}`,
    );
    return row === undefined ? undefined : fromStoredConnection(row);
  }

  *insert(row: AuthConnectionRow): SqlProgram<void> {
    const { projectId, record, internals } = row;
    try {
      yield* inTransaction(() =>
        runSql(
          sql`INSERT INTO auth_connections (id, project_id, domain, profile_name, from_fixtures, record, internals, next_check_at) VALUES (${record.id}, ${projectId}, ${record.domain}, ${record.profile_name}, 0, ${JSON.stringify(record)}, ${JSON.stringify(internals)}, ${nextCheckColumn(row)})`,
        ),
      );
    } catch (error) {
      if (isUniqueViolation(error)) throw connectionExists(record);
      throw error;
    }
  }

  *list(projectId: string, { offset, limit, domain, profileName, query }: AuthConnectionPage): SqlProgram<{ items: ManagedAuth[]; hasMore: boolean }> {
    if ([domain, profileName, query].some((text) => text !== undefined && !isStorableText(text))) return { items: [], hasMore: false };
    const where: Sql[] = [sql`project_id = ${projectId}`];
    if (domain !== undefined) where.push(sql`domain = ${domain}`);
    if (profileName !== undefined) where.push(sql`profile_name = ${profileName}`);
    if (query !== undefined) {
      where.push(sql`(id = ${query} OR ${sqlContains(rawSql("domain"), query)} OR ${sqlContains(rawSql("profile_name"), query)})`);
    }
    const rows = yield* allRows<{ record: string }>(
      sql`SELECT record FROM auth_connections WHERE ${joinSql(where, " AND ")} ORDER BY seq LIMIT ${limit + 1} OFFSET ${offset}`,
    );
    const now = Date.now();
    return { items: rows.slice(0, limit).map((row) => connectionAt(JSON.parse(row.record) as ManagedAuth, now)), hasMore: rows.length > limit };
  }

  *update(projectId: string, id: string, change: (current: AuthConnectionRow) => AuthConnectionRow | undefined): SqlProgram<AuthConnectionRow | undefined> {
    return yield* inTransaction(() => this.#update(projectId, id, change));
  }

  *#update(projectId: string, id: string, change: (current: AuthConnectionRow) => AuthConnectionRow | undefined): SqlProgram<AuthConnectionRow | undefined> {
    const current = yield* this.#find(projectId, id, true);
    if (current === undefined) return undefined;
    const next = change(current);
    if (next === undefined) return undefined;
    yield* runSql(
      sql`UPDATE auth_connections SET record = ${JSON.stringify(next.record)}, internals = ${JSON.stringify(next.internals)}, next_check_at = ${nextCheckColumn(next)} WHERE id = ${id}`,
    );
    return next;
  }

  *delete(projectId: string, id: string): SqlProgram<boolean> {
    if (!isStorableText(id)) return false;
    return yield* inTransaction(() => this.#delete(projectId, id));
  }

  *#delete(projectId: string, id: string): SqlProgram<boolean> {
    const removed = yield* runSql(sql`DELETE FROM auth_connections WHERE id = ${id} AND project_id = ${projectId}`);
    if (removed > 0) yield* runSql(sql`DELETE FROM auth_timeline WHERE connection_id = ${id} AND project_id = ${projectId}`);
    return removed > 0;
  }

  *due(now: number, limit: number): SqlProgram<AuthConnectionRow[]> {
    const rows = yield* allRows<StoredConnectionRow>(
      sql`SELECT project_id, record, internals FROM auth_connections WHERE next_check_at IS NOT NULL AND next_check_at <= ${now} AND from_fixtures = 0 ORDER BY next_check_at LIMIT ${limit}`,
    );
    return rows.map(fromStoredConnection);
  }

  *inProgress(): SqlProgram<AuthConnectionRow[]> {
    const rows = yield* allRows<StoredConnectionRow>(sql`SELECT project_id, record, internals FROM auth_connections WHERE from_fixtures = 0`);
    return rows.map(fromStoredConnection).filter((row) => row.record.flow_status === "IN_PROGRESS");
  }

  *putTimelineEvent(projectId: string, connectionId: string, event: ManagedAuthTimelineEvent): SqlProgram<void> {
    yield* inTransaction(() => this.#putTimelineEvent(projectId, connectionId, event));
  }

  *#putTimelineEvent(projectId: string, connectionId: string, event: ManagedAuthTimelineEvent): SqlProgram<void> {
    const record = JSON.stringify(event);
    // SQLite replaces the connection's event of that id if there is one, else inserts it
    // (its write transaction holds the whole database); PostgreSQL inserts it in one
    // statement that replaces the record of the event with its id instead, if there is one.
    if (
      this.#dialect === "sqlite" &&
      (yield* runSql(sql`UPDATE auth_timeline SET record = ${record} WHERE id = ${event.id} AND connection_id = ${connectionId}`)) > 0
    ) {
      return;
    }
    yield* runSql(
      sql`INSERT INTO auth_timeline (id, connection_id, project_id, type, record) VALUES (${event.id}, ${connectionId}, ${projectId}, ${event.type}, ${record})${sqlFor(
        {
          sqlite: sql``,
          postgres: sql` ON CONFLICT (id) DO UPDATE SET record = excluded.record`,
        },
      )}`,
    );
    // Past TIMELINE_EVENTS_KEPT, the oldest go.
    yield* runSql(
      sql`DELETE FROM auth_timeline WHERE connection_id = ${connectionId} AND seq <= (SELECT seq FROM auth_timeline WHERE connection_id = ${connectionId} ORDER BY seq DESC LIMIT 1 OFFSET ${TIMELINE_EVENTS_KEPT})`,
    );
  }

  *timeline(
    projectId: string,
    connectionId: string,
    { offset, limit, type }: TimelinePage,
  ): SqlProgram<{ items: ManagedAuthTimelineEvent[]; hasMore: boolean }> {
    const where: Sql[] = [sql`connection_id = ${connectionId}`, sql`project_id = ${projectId}`];
    if (type !== undefined) where.push(sql`type = ${type}`);
    const rows = yield* allRows<{ record: string }>(
      sql`SELECT record FROM auth_timeline WHERE ${joinSql(where, " AND ")} ORDER BY seq DESC LIMIT ${limit + 1} OFFSET ${offset}`,
    );
    return { items: rows.slice(0, limit).map((row) => JSON.parse(row.record) as ManagedAuthTimelineEvent), hasMore: rows.length > limit };
  }

  *replaceAll(connections: StoredAuthConnection[]): SqlProgram<void> {
    // It runs inside a unit of work: in SQLite that is the transaction (one cannot nest in
    // it); in PostgreSQL this one joins it.
    if (this.#dialect === "postgres") yield* inTransaction(() => this.#replaceAll(connections));
    else yield* this.#replaceAll(connections);
  }

  *#replaceAll(connections: StoredAuthConnection[]): SqlProgram<void> {
    yield* runSql(sql`DELETE FROM auth_connections WHERE from_fixtures = 1`);
    for (const connection of connections) {
      yield* runSql(
        sql`INSERT INTO auth_connections (id, project_id, domain, profile_name, from_fixtures, record) VALUES (${connection.record.id}, ${connection.projectId}, ${connection.record.domain}, ${connection.record.profile_name}, 1, ${JSON.stringify(connection.record)})`,
      );
    }
  }
}
