import type { FastifyInstance, FastifyRequest } from "fastify";
import { NotFoundError } from "../http/api-errors.js";
import type { CapturedEvent } from "../telemetry/browser-telemetry.js";
import type { StoredEvent } from "../telemetry/sql-telemetry-store.js";
import type { ApiDeps } from "./api-deps.js";

/** How often a stream without events sends a comment, so that proxies keep it open (the SDK's 15 s). */
const KEEPALIVE_MS = 15_000;
/** How often a stream of a browser another node runs reads its new events. */
const REMOTE_POLL_MS = 500;
/** Events read at a time when a stream replays or polls. */
const READ_PAGE = 500;
/** Bytes a stream's reader may leave unread; past it new events skip that reader (the gap shows in `seq`). */
const MAX_UNREAD_BYTES = 1024 * 1024;
/** Live events held while a stream replays what was kept; past it the oldest are not held. */
const MAX_HELD = 10_000;

interface TelemetryQuery {
  offset?: number;
  limit?: number;
  order?: "asc" | "desc";
  category?: string[];
  type?: string[];
  replay?: string;
}

/** One frame of a stream: the envelope written around the event's JSON as it was captured, never re-serialized. */
const frame = (seq: number, eventJson: string) => `id: ${seq}\ndata: {"seq":${seq},"event":${eventJson}}\n\n`;

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
      if (!(error instanceof NotFoundError)) throw error;
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
      const limit = query.limit ?? 100;
      const page = await stores.telemetry.page(projectId, browserId, {
        cursor: query.offset ?? 0,
        limit,
        order: query.order ?? "asc",
        categories: query.category,
        types: query.type,
      });
      const kept = await stores.telemetry.browser(projectId, browserId);
      reply.header("x-has-more", String(page.hasMore));
      reply.header("x-next-offset", String(page.hasMore ? (page.items[page.items.length - 1]?.seq ?? 0) : 0));
      reply.header("x-telemetry-dropped", String(kept?.dropped ?? 0));
      return page.items;
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
      const categories = query.category === undefined || query.category.length === 0 ? undefined : new Set(query.category);
      const types = query.type === undefined || query.type.length === 0 ? undefined : new Set(query.type);
      const shown = (category: string, type: string) => (categories === undefined || categories.has(category)) && (types === undefined || types.has(type));

      reply.hijack();
      const raw = reply.raw;
      raw.writeHead(200, {
        "content-type": "text/event-stream; charset=utf-8",
        "cache-control": "no-store",
        connection: "keep-alive",
        "x-request-id": request.id,
      });
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
      const send = (seq: number, category: string, type: string, json: string) => {
        if (done || seq <= lastSent) return;
        lastSent = seq;
        if (!shown(category, type) || raw.writableLength > MAX_UNREAD_BYTES) return;
        raw.write(frame(seq, json));
      };
      const sendStored = ({ seq, event }: StoredEvent) => send(seq, event.category, event.type, JSON.stringify(event));
      /** Sends what was kept after `cursor`, up to `until` (inclusive) when given; the last `seq` read. */
      const replay = async (cursor: number, until?: number): Promise<number> => {
        for (;;) {
          const page = await stores.telemetry.page(projectId, browserId, { cursor, limit: READ_PAGE, order: "asc" });
          for (const item of page.items) {
            if (until !== undefined && item.seq > until) return cursor;
            sendStored(item);
            cursor = item.seq;
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
              if (!replaying) send(captured.seq, captured.event.category, captured.event.type, captured.json);
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
            await replay(start);
            replaying = false;
            for (const captured of held) send(captured.seq, captured.event.category, captured.event.type, captured.json);
          }
          return;
        }
        if (!running) {
          // Ended: what was kept, if asked, and the stream ends.
          if (start !== undefined) await replay(start);
          finish();
          return;
        }
        // Another node's browser: its events are read as that node writes them.
        let cursor = start ?? (await lastKept(projectId, browserId));
        if (start !== undefined) lastSent = start;
        else lastSent = cursor;
        const poll = async () => {
          if (done) return;
          cursor = await replay(cursor);
          const kept = await stores.telemetry.browser(projectId, browserId);
          if (kept === undefined || kept.ended) {
            cursor = await replay(cursor);
            finish();
            return;
          }
          timer = setTimeout(() => void poll().catch(failed), REMOTE_POLL_MS);
        };
        let timer = setTimeout(() => void poll().catch(failed), 0);
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
