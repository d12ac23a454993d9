import { once } from "node:events";
import type { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { NotFoundError } from "../http/api-errors.js";
import { openEventStream } from "../http/event-stream.js";
import { isStorableText } from "../storage/storable-text.js";
import type { CapturedEvent } from "../telemetry/browser-telemetry.js";
import type { ApiDeps } from "./api-deps.js";

/** How often a stream without events sends a comment, so that proxies keep it open (the SDK's 15 s). */
const KEEPALIVE_MS = 15_000;
/** How often a stream of a browser another node runs reads its new events. */
const REMOTE_POLL_MS = 500;
/** Events read from the store at a time, by a page or a stream's replay. */
const READ_CHUNK = 100;
/**
 * The most characters of events in one page of `GET .../telemetry/events`: past it the page
 * ends early (with at least one event) and `X-Has-More` says there is more. Events are at
 * most 64 KiB each, so a page of 1,000 could otherwise be 64 MiB held and sent at once.
 */
const PAGE_CHARS = 4 * 1024 * 1024;
/** Bytes a stream's reader may leave unread before a replay waits for it to read. */
const REPLAY_HIGH_WATER = 256 * 1024;
/** Bytes a stream's reader may leave unread; past it live events skip that reader (the gap shows in `seq`). */
const MAX_UNREAD_BYTES = 512 * 1024;
/** Live events held while a stream replays what was kept; past it the newest are not held (the gap shows in `seq`). */
const MAX_HELD = 2_000;

interface TelemetryQuery {
  offset?: number;
  limit?: number;
  order?: "asc" | "desc";
  category?: string[];
  type?: string[];
  replay?: string;
}

/** An event as the API shows it: the envelope written around the event's JSON as it was captured, never re-serialized. */
const envelope = (seq: number, eventJson: string) => `{"seq":${seq},"event":${eventJson}}`;

/** Resolves once `raw` has written what it holds (or closed). */
async function drained(raw: ServerResponse): Promise<void> {
  if (raw.writableLength <= REPLAY_HIGH_WATER || raw.destroyed) return;
  await Promise.race([once(raw, "drain"), once(raw, "close")]);
}

/** `/browsers/{id_or_name}/telemetry/events` and `/stream`: a browser's events, kept or as they come. */
export function registerTelemetryRoutes(app: FastifyInstance, deps: ApiDeps): void {
  const { stores } = deps;

  /**
   * The browser a request names, in its project: a launched browser by id or name, or by
   * id one that ended whose events are kept. Another project's browser is not found,
   * whatever it captured.
   */
  const browserOf = async (
    request: FastifyRequest<{ Params: { id_or_name: string } }>,
  ): Promise<{ projectId: string; browserId: string; running: boolean }> => {
    const projectId = (await request.scope.project()).id;
    const key = request.params.id_or_name;
    try {
      const row = await stores.browsers.getByIdOrName(projectId, key);
      return { projectId, browserId: row.id, running: row.status === "running" };
    } catch (error) {
      // Text no store can hold names nothing kept either.
      if (!(error instanceof NotFoundError) || !isStorableText(key)) throw error;
      if ((await stores.telemetry.browser(projectId, key)) === undefined) throw error;
      return { projectId, browserId: key, running: false };
    }
  };

  app.get<{ Params: { id_or_name: string } }>(
    "/browsers/:id_or_name/telemetry/events",
    { config: { operationId: "listBrowserTelemetryEvents" } },
    async (request, reply) => {
      const query = request.query as TelemetryQuery;
      const { projectId, browserId } = await browserOf(request);
      // What this node captured a moment ago is read too.
      if (deps.telemetry?.of(browserId) !== undefined) await deps.telemetry.flush();
      const order = query.order ?? "asc";
      let remaining = query.limit ?? 100;
      let cursor = query.offset ?? 0;
      const parts: string[] = [];
      let chars = 0;
      let hasMore = false;
      for (;;) {
        const chunk = await stores.telemetry.page(projectId, browserId, {
          cursor,
          limit: Math.min(remaining, READ_CHUNK),
          order,
          categories: query.category,
          types: query.type,
        });
        let taken = 0;
        for (const item of chunk.items) {
          if (parts.length > 0 && chars + item.json.length > PAGE_CHARS) break;
          parts.push(envelope(item.seq, item.json));
          chars += item.json.length;
          cursor = item.seq;
          taken++;
        }
        remaining -= taken;
        if (taken < chunk.items.length) {
          hasMore = true;
          break;
        }
        if (!chunk.hasMore || remaining === 0) {
          hasMore = chunk.hasMore;
          break;
        }
      }
      const kept = await stores.telemetry.browser(projectId, browserId);
      reply.header("x-has-more", String(hasMore));
      reply.header("x-next-offset", String(hasMore ? cursor : 0));
      reply.header("x-telemetry-dropped", String(kept?.dropped ?? 0));
      reply.type("application/json; charset=utf-8");
      return `[${parts.join(",")}]`;
    },
  );

  app.get<{ Params: { id_or_name: string } }>(
    "/browsers/:id_or_name/telemetry/stream",
    { config: { operationId: "streamBrowserTelemetry" } },
    async (request, reply) => {
      const query = request.query as TelemetryQuery;
      const { projectId, browserId, running } = await browserOf(request);
      const lastEventId = request.headers["last-event-id"];
      const resumeAfter = typeof lastEventId === "string" && /^(?:0|[1-9][0-9]{0,15})$/.test(lastEventId) ? Number(lastEventId) : undefined;
      const categories = query.category === undefined || query.category.length === 0 ? undefined : query.category;
      const types = query.type === undefined || query.type.length === 0 ? undefined : query.type;
      const shown = (category: string, type: string) =>
        (categories === undefined || categories.includes(category)) && (types === undefined || types.includes(type));

      const raw = openEventStream(request, reply);
      let done = false;
      let lastSent = 0;
      const cleanups: (() => void)[] = [];
      const finish = () => {
        if (done) return;
        done = true;
        for (const cleanup of cleanups) cleanup();
        raw.end();
      };
      raw.on("close", finish);
      const keepalive = setInterval(() => raw.write(": keepalive\n\n"), KEEPALIVE_MS);
      cleanups.push(() => clearInterval(keepalive));
      const frame = (seq: number, json: string) => raw.write(`id: ${seq}\ndata: ${envelope(seq, json)}\n\n`);
      /** A live event: skipped by a reader that stopped reading. */
      const sendLive = ({ seq, event, json }: CapturedEvent) => {
        if (done || seq <= lastSent) return;
        lastSent = seq;
        if (shown(event.category, event.type) && raw.writableLength <= MAX_UNREAD_BYTES) frame(seq, json);
      };
      /** Sends what was kept after `cursor`, waiting for the reader as it goes (filtered in the store); the last `seq` sent. */
      const replay = async (from: number): Promise<number> => {
        let cursor = from;
        for (;;) {
          const page = await stores.telemetry.page(projectId, browserId, { cursor, limit: READ_CHUNK, order: "asc", categories, types });
          for (const item of page.items) {
            if (done) return cursor;
            if (item.seq > lastSent) {
              frame(item.seq, item.json);
              lastSent = item.seq;
            }
            cursor = item.seq;
            await drained(raw);
          }
          if (!page.hasMore || done) return cursor;
        }
      };

      try {
        const start = resumeAfter ?? (query.replay === "all" ? 0 : undefined);
        const recorder = deps.telemetry?.of(browserId);
        if (recorder !== undefined && deps.telemetry !== undefined) {
          // This node's browser: live events as they come, held while the kept ones are sent first.
          const held: CapturedEvent[] = [];
          let replaying = start !== undefined;
          const unfollow = deps.telemetry.follow(browserId, {
            event: (captured) => {
              if (!replaying) sendLive(captured);
              else if (held.length < MAX_HELD) held.push(captured);
            },
            end: finish,
          });
          if (unfollow === undefined) {
            if (start !== undefined) await replay(start);
            finish();
            return;
          }
          cleanups.push(unfollow);
          if (start === undefined) lastSent = recorder.lastSeq;
          else {
            await deps.telemetry.flush();
            lastSent = start;
            await replay(start);
            replaying = false;
            for (const captured of held) sendLive(captured);
          }
          return;
        }
        if (!running) {
          // Ended: what was kept, if asked, and the stream ends.
          if (start !== undefined) {
            lastSent = start;
            await replay(start);
          }
          finish();
          return;
        }
        // Another node's browser: its events are read as that node writes them.
        let cursor = start ?? (await lastKept(projectId, browserId));
        lastSent = cursor;
        let timer: NodeJS.Timeout | undefined;
        const poll = async () => {
          if (done) return;
          cursor = await replay(cursor);
          const kept = await stores.telemetry.browser(projectId, browserId);
          if (kept === undefined || kept.ended) {
            await replay(cursor);
            finish();
            return;
          }
          timer = setTimeout(() => void poll().catch(failed), REMOTE_POLL_MS);
        };
        timer = setTimeout(() => void poll().catch(failed), 0);
        cleanups.push(() => clearTimeout(timer));
      } catch (error) {
        failed(error);
      }

      function failed(error: unknown): void {
        request.log.error({ err: error, browser: browserId }, "a telemetry stream failed; it was ended");
        finish();
      }
    },
  );

  /** The `seq` of the newest event kept of a browser (0 for none). */
  async function lastKept(projectId: string, browserId: string): Promise<number> {
    const page = await stores.telemetry.page(projectId, browserId, { cursor: 0, limit: 1, order: "desc" });
    return page.items[0]?.seq ?? 0;
  }
}
