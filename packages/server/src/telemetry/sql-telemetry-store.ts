import type { TelemetryEvent } from "@browser-service/types";
import { allRows, getRow, inTransaction, type Programs, runSql, type SqlProgram } from "../storage/sql-program.js";
import { joinSql, type Sql, sql, sqlIn } from "../storage/sql-text.js";

/** An event to store: its browser's number for it, the event, and its JSON, made once when it was captured. */
export interface EventToStore {
  seq: number;
  event: TelemetryEvent;
  json: string;
}

/** A kept event as it is read: its number and its JSON, sent on as it is, never parsed again. */
export interface KeptEvent {
  seq: number;
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

/** How much is kept: of one browser, in events and in characters of their JSON. */
export interface KeptCaps {
  events: number;
  chars: number;
}

/** The events of a browser, kept after it ends for the retention period. */
export interface TelemetryStore {
  /** Records that `browserId` of `projectId` captures telemetry (again, after a restart of its node: kept as it was). */
  begin(browserId: string, projectId: string): Promise<void>;
  /** Stores events of a running browser, then drops its oldest past its caps; how many were dropped. */
  append(browserId: string, projectId: string, events: readonly EventToStore[], caps: KeptCaps): Promise<number>;
  /** The browser's project and dropped count, or `undefined` when it captured nothing (or is past retention) in that project. */
  browser(projectId: string, browserId: string): Promise<{ dropped: number; ended: boolean } | undefined>;
  /** A page of the browser's events, filtered, with whether more follow. */
  page(projectId: string, browserId: string, query: EventQuery): Promise<{ items: KeptEvent[]; hasMore: boolean }>;
  /** Counts events of the browser dropped before they were stored (produced faster than kept). */
  addDropped(browserId: string, count: number): Promise<void>;
  /** The browser ended at `atMs`: its retention period starts. */
  end(browserId: string, atMs: number): Promise<void>;
  /**
   * Deletes what is past retention (browsers ended before `endedBeforeMs`, and those whose
   * browser is gone without an end being recorded, a killed node's, which end now), then
   * drops each project's oldest events past its caps, counted on their browsers.
   */
  sweep(nowMs: number, endedBeforeMs: number, projectCaps: KeptCaps): Promise<{ expired: number; dropped: number }>;
}

/** A cap past which the oldest are dropped goes down to this share of it, so that a full browser is not trimmed at every write. */
const TRIM_TO = 0.9;

/** The newest events of `scope` (browser or project) whose JSON together stays under `chars`: the `seq` and `ts` of the newest one past it, if any. */
function* firstOverChars(scope: Sql, chars: number): SqlProgram<{ browser_id: string; seq: number | string; ts: number | string } | undefined> {
  return yield* getRow<{ browser_id: string; seq: number | string; ts: number | string }>(
    sql`SELECT browser_id, seq, ts FROM (
          SELECT browser_id, seq, ts, SUM(bytes) OVER (ORDER BY ts DESC, seq DESC ROWS UNBOUNDED PRECEDING) AS total
          FROM telemetry_events WHERE ${scope}) kept
        WHERE total > ${chars} ORDER BY ts DESC, seq DESC LIMIT 1`,
  );
}

/** Deletes a browser's events up to `seq` and counts them on it, its kept characters going down with them. */
function* dropUpTo(browserId: string, seq: number): SqlProgram<number> {
  const gone = yield* getRow<{ n: number | string; chars: number | string | null }>(
    sql`SELECT count(*) AS n, sum(bytes) AS chars FROM telemetry_events WHERE browser_id = ${browserId} AND seq <= ${seq}`,
  );
  const count = Number(gone?.n ?? 0);
  if (count === 0) return 0;
  yield* runSql(sql`DELETE FROM telemetry_events WHERE browser_id = ${browserId} AND seq <= ${seq}`);
  yield* runSql(sql`UPDATE telemetry_browsers SET dropped = dropped + ${count}, bytes = bytes - ${Number(gone?.chars ?? 0)} WHERE browser_id = ${browserId}`);
  return count;
}

/** {@link TelemetryStore} on either database. */
export class SqlTelemetryStore implements Programs<TelemetryStore> {
  *begin(browserId: string, projectId: string): SqlProgram<void> {
    yield* runSql(sql`INSERT INTO telemetry_browsers (browser_id, project_id) VALUES (${browserId}, ${projectId}) ON CONFLICT (browser_id) DO NOTHING`);
  }

  *append(browserId: string, projectId: string, events: readonly EventToStore[], caps: KeptCaps): SqlProgram<number> {
    if (events.length === 0) return 0;
    return yield* inTransaction(function* (): SqlProgram<number> {
      const values = joinSql(
        events.map(({ seq, event, json }) => sql`(${browserId}, ${seq}, ${projectId}, ${event.ts}, ${event.category}, ${event.type}, ${json}, ${json.length})`),
        ", ",
      );
      yield* runSql(sql`INSERT INTO telemetry_events (browser_id, seq, project_id, ts, category, type, event, bytes) VALUES ${values} ON CONFLICT DO NOTHING`);
      const added = events.reduce((sum, { json }) => sum + json.length, 0);
      const kept = yield* getRow<{ bytes: number | string }>(
        sql`UPDATE telemetry_browsers SET bytes = bytes + ${added} WHERE browser_id = ${browserId} RETURNING bytes`,
      );
      // Numbers only grow, so the newest `events` are those above the last minus the cap.
      const last = events[events.length - 1]?.seq ?? 0;
      let dropped = last > caps.events ? yield* dropUpTo(browserId, last - caps.events) : 0;
      if (Number(kept?.bytes ?? 0) > caps.chars) {
        const over = yield* firstOverChars(sql`browser_id = ${browserId}`, Math.floor(caps.chars * TRIM_TO));
        if (over !== undefined) dropped += yield* dropUpTo(browserId, Number(over.seq));
      }
      return dropped;
    });
  }

  *browser(projectId: string, browserId: string): SqlProgram<{ dropped: number; ended: boolean } | undefined> {
    const row = yield* getRow<{ dropped: number | string; ended_at: number | string | null }>(
      sql`SELECT dropped, ended_at FROM telemetry_browsers WHERE browser_id = ${browserId} AND project_id = ${projectId}`,
    );
    return row === undefined ? undefined : { dropped: Number(row.dropped), ended: row.ended_at !== null };
  }

  *page(projectId: string, browserId: string, query: EventQuery): SqlProgram<{ items: KeptEvent[]; hasMore: boolean }> {
    const conditions: Sql[] = [sql`browser_id = ${browserId}`, sql`project_id = ${projectId}`];
    if (query.cursor > 0) conditions.push(query.order === "asc" ? sql`seq > ${query.cursor}` : sql`seq < ${query.cursor}`);
    if (query.categories !== undefined && query.categories.length > 0) conditions.push(sqlIn(sql`category`, query.categories));
    if (query.types !== undefined && query.types.length > 0) conditions.push(sqlIn(sql`type`, query.types));
    const order = query.order === "asc" ? sql`ORDER BY seq ASC` : sql`ORDER BY seq DESC`;
    const rows = yield* allRows<{ seq: number | string; event: string }>(
      sql`SELECT seq, event FROM telemetry_events WHERE ${joinSql(conditions, " AND ")} ${order} LIMIT ${query.limit + 1}`,
    );
    return { items: rows.slice(0, query.limit).map((row) => ({ seq: Number(row.seq), json: row.event })), hasMore: rows.length > query.limit };
  }

  *addDropped(browserId: string, count: number): SqlProgram<void> {
    yield* runSql(sql`UPDATE telemetry_browsers SET dropped = dropped + ${count} WHERE browser_id = ${browserId}`);
  }

  *end(browserId: string, atMs: number): SqlProgram<void> {
    yield* runSql(sql`UPDATE telemetry_browsers SET ended_at = ${atMs} WHERE browser_id = ${browserId} AND ended_at IS NULL`);
  }

  *sweep(nowMs: number, endedBeforeMs: number, projectCaps: KeptCaps): SqlProgram<{ expired: number; dropped: number }> {
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
    // Per project: the oldest first, across its browsers, each browser's drops counted on it.
    const full = yield* allRows<{ project_id: string }>(
      sql`SELECT b.project_id FROM telemetry_browsers b GROUP BY b.project_id
          HAVING sum(b.bytes) > ${projectCaps.chars}
              OR (SELECT count(*) FROM telemetry_events e WHERE e.project_id = b.project_id) > ${projectCaps.events}`,
    );
    for (const { project_id } of full) {
      const scope = sql`project_id = ${project_id}`;
      const count = yield* getRow<{ n: number | string }>(sql`SELECT count(*) AS n FROM telemetry_events WHERE ${scope}`);
      const excess = Number(count?.n ?? 0) - projectCaps.events;
      const victims =
        excess > 0
          ? yield* allRows<{ browser_id: string; seq: number | string }>(
              sql`SELECT browser_id, seq FROM telemetry_events WHERE ${scope} ORDER BY ts ASC, seq ASC LIMIT ${excess}`,
            )
          : [];
      const upTo = new Map<string, number>();
      for (const victim of victims) upTo.set(victim.browser_id, Math.max(upTo.get(victim.browser_id) ?? 0, Number(victim.seq)));
      const over = yield* firstOverChars(scope, Math.floor(projectCaps.chars * TRIM_TO));
      if (over !== undefined) {
        // Everything as old as the first event past the cap goes, in each of the project's browsers.
        const older = yield* allRows<{ browser_id: string; seq: number | string }>(
          sql`SELECT browser_id, max(seq) AS seq FROM telemetry_events WHERE ${scope} AND ts <= ${Number(over.ts)} GROUP BY browser_id`,
        );
        for (const row of older) upTo.set(row.browser_id, Math.max(upTo.get(row.browser_id) ?? 0, Number(row.seq)));
      }
      for (const [browserId, seq] of upTo) dropped += yield* dropUpTo(browserId, seq);
    }
    return { expired, dropped };
  }
}
