import type { TelemetryEvent } from "@browser-service/types";
import { allRows, getRow, inTransaction, type Programs, runSql, type SqlProgram } from "../storage/sql-program.js";
import { joinSql, type Sql, sql, sqlIn } from "../storage/sql-text.js";

/** One captured event as it is stored: its browser's number for it, and the event. */
export interface StoredEvent {
  seq: number;
  event: TelemetryEvent;
}

/** An event to store: {@link StoredEvent} with its JSON, made once when it was captured. */
export interface EventToStore extends StoredEvent {
  json: string;
}

/** What a page of events asks for. */
export interface EventQuery {
  /** A `seq`: the page starts after it (ascending) or before it (descending); 0 for the oldest or the newest. */
  cursor: number;
  limit: number;
  order: "asc" | "desc";
  categories?: readonly string[] | undefined;
  types?: readonly string[] | undefined;
}

/** The events of a browser, kept after it ends for the retention period. */
export interface TelemetryStore {
  /** Records that `browserId` of `projectId` captures telemetry (again, after a restart of its node: kept as it was). */
  begin(browserId: string, projectId: string): Promise<void>;
  /** Stores events of a running browser, then drops its oldest past `maxEvents`; how many were dropped. */
  append(browserId: string, projectId: string, events: readonly EventToStore[], maxEvents: number): Promise<number>;
  /** The browser's project and dropped count, or `undefined` when it captured nothing (or is past retention) in that project. */
  browser(projectId: string, browserId: string): Promise<{ dropped: number; ended: boolean } | undefined>;
  /** A page of the browser's events, filtered, with whether more follow. */
  page(projectId: string, browserId: string, query: EventQuery): Promise<{ items: StoredEvent[]; hasMore: boolean }>;
  /** Counts events of the browser dropped before they were stored (produced faster than kept). */
  addDropped(browserId: string, count: number): Promise<void>;
  /** The browser ended at `atMs`: its retention period starts. */
  end(browserId: string, atMs: number): Promise<void>;
  /**
   * Deletes what is past retention (browsers ended before `endedBeforeMs`, and those whose
   * browser is gone without an end being recorded, a killed node's, which end now), then
   * drops each project's oldest events past `maxPerProject`, counted on their browsers.
   */
  sweep(nowMs: number, endedBeforeMs: number, maxPerProject: number): Promise<{ expired: number; dropped: number }>;
}

/** The columns of an event row, from which {@link StoredEvent} is read. */
interface EventRow {
  seq: number | string;
  event: string;
}

const fromRow = (row: EventRow): StoredEvent => ({ seq: Number(row.seq), event: JSON.parse(row.event) as TelemetryEvent });

/** {@link TelemetryStore} on either database. */
export class SqlTelemetryStore implements Programs<TelemetryStore> {
  *begin(browserId: string, projectId: string): SqlProgram<void> {
    yield* runSql(sql`INSERT INTO telemetry_browsers (browser_id, project_id) VALUES (${browserId}, ${projectId}) ON CONFLICT (browser_id) DO NOTHING`);
  }

  *append(browserId: string, projectId: string, events: readonly EventToStore[], maxEvents: number): SqlProgram<number> {
    if (events.length === 0) return 0;
    return yield* inTransaction(function* (): SqlProgram<number> {
      const values = joinSql(
        events.map(({ seq, event, json }) => sql`(${browserId}, ${seq}, ${projectId}, ${event.ts}, ${event.category}, ${event.type}, ${json})`),
        ", ",
      );
      yield* runSql(sql`INSERT INTO telemetry_events (browser_id, seq, project_id, ts, category, type, event) VALUES ${values} ON CONFLICT DO NOTHING`);
      // Numbers only grow, so the newest `maxEvents` are those above the last minus the cap.
      const last = events[events.length - 1]?.seq ?? 0;
      const dropped = yield* runSql(sql`DELETE FROM telemetry_events WHERE browser_id = ${browserId} AND seq <= ${last - maxEvents}`);
      if (dropped > 0) yield* runSql(sql`UPDATE telemetry_browsers SET dropped = dropped + ${dropped} WHERE browser_id = ${browserId}`);
      return dropped;
    });
  }

  *browser(projectId: string, browserId: string): SqlProgram<{ dropped: number; ended: boolean } | undefined> {
    const row = yield* getRow<{ dropped: number | string; ended_at: number | string | null }>(
      sql`SELECT dropped, ended_at FROM telemetry_browsers WHERE browser_id = ${browserId} AND project_id = ${projectId}`,
    );
    return row === undefined ? undefined : { dropped: Number(row.dropped), ended: row.ended_at !== null };
  }

  *page(projectId: string, browserId: string, query: EventQuery): SqlProgram<{ items: StoredEvent[]; hasMore: boolean }> {
    const conditions: Sql[] = [sql`browser_id = ${browserId}`, sql`project_id = ${projectId}`];
    if (query.cursor > 0) conditions.push(query.order === "asc" ? sql`seq > ${query.cursor}` : sql`seq < ${query.cursor}`);
    if (query.categories !== undefined && query.categories.length > 0) conditions.push(sqlIn(sql`category`, query.categories));
    if (query.types !== undefined && query.types.length > 0) conditions.push(sqlIn(sql`type`, query.types));
    const order = query.order === "asc" ? sql`ORDER BY seq ASC` : sql`ORDER BY seq DESC`;
    const rows = yield* allRows<EventRow>(sql`SELECT seq, event FROM telemetry_events WHERE ${joinSql(conditions, " AND ")} ${order} LIMIT ${query.limit + 1}`);
    return { items: rows.slice(0, query.limit).map(fromRow), hasMore: rows.length > query.limit };
  }

  *addDropped(browserId: string, count: number): SqlProgram<void> {
    yield* runSql(sql`UPDATE telemetry_browsers SET dropped = dropped + ${count} WHERE browser_id = ${browserId}`);
  }

  *end(browserId: string, atMs: number): SqlProgram<void> {
    yield* runSql(sql`UPDATE telemetry_browsers SET ended_at = ${atMs} WHERE browser_id = ${browserId} AND ended_at IS NULL`);
  }

  *sweep(nowMs: number, endedBeforeMs: number, maxPerProject: number): SqlProgram<{ expired: number; dropped: number }> {
    // A browser whose row is gone or crashed ended without its node saying so (it was killed).
    yield* runSql(
      sql`UPDATE telemetry_browsers SET ended_at = ${nowMs} WHERE ended_at IS NULL
          AND NOT EXISTS (SELECT 1 FROM browsers b WHERE b.id = telemetry_browsers.browser_id AND b.status IN ('starting', 'running'))`,
    );
    const gone = yield* allRows<{ browser_id: string }>(sql`SELECT browser_id FROM telemetry_browsers WHERE ended_at < ${endedBeforeMs}`);
    let expired = 0;
    for (const { browser_id } of gone) {
      expired += yield* runSql(sql`DELETE FROM telemetry_events WHERE browser_id = ${browser_id}`);
      yield* runSql(sql`DELETE FROM telemetry_browsers WHERE browser_id = ${browser_id}`);
    }
    let dropped = 0;
    const full = yield* allRows<{ project_id: string; n: number | string }>(
      sql`SELECT project_id, count(*) AS n FROM telemetry_events GROUP BY project_id HAVING count(*) > ${maxPerProject}`,
    );
    for (const { project_id, n } of full) {
      const excess = Number(n) - maxPerProject;
      // The oldest first, across the project's browsers, each browser's drops counted on it.
      const victims = yield* allRows<{ browser_id: string; seq: number | string }>(
        sql`SELECT browser_id, seq FROM telemetry_events WHERE project_id = ${project_id} ORDER BY ts ASC, seq ASC LIMIT ${excess}`,
      );
      const byBrowser = new Map<string, number>();
      for (const victim of victims) byBrowser.set(victim.browser_id, Math.max(byBrowser.get(victim.browser_id) ?? 0, Number(victim.seq)));
      for (const [browserId, upTo] of byBrowser) {
        const removed = yield* runSql(sql`DELETE FROM telemetry_events WHERE browser_id = ${browserId} AND seq <= ${upTo}`);
        dropped += removed;
        yield* runSql(sql`UPDATE telemetry_browsers SET dropped = dropped + ${removed} WHERE browser_id = ${browserId}`);
      }
    }
    return { expired, dropped };
  }
}
