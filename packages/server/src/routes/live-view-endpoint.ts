import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import type WebSocket from "ws";
import { WebSocketServer } from "ws";
import type { BrowserService } from "../browsers/browser-service.js";
import type { BrowserStore } from "../browsers/browser-store.js";
import { liveViewAccess } from "../cdp/browser-token.js";
import { ApiError, NotFoundError } from "../http/api-errors.js";
import type { RateLimits } from "../http/rate-limiter.js";
import { refuseUpgrade, type UpgradeRoute } from "../http/upgrade-router.js";
import { handshakeError } from "../http/websocket-handshake.js";
import { keepAlive } from "../http/websocket-heartbeat.js";
import type { BrowserLiveView } from "../live-view/browser-live-view.js";
import { LiveViewHub } from "../live-view/live-view-hub.js";
import type { LiveViewLimits } from "../live-view/live-view-limits.js";
import { buildLiveViewPage } from "../live-view/live-view-page.js";
import { SocketViewer } from "../live-view/socket-viewer.js";
import type { Cluster } from "../nodes/cluster.js";
import { connectionEvents } from "../telemetry/client-telemetry.js";
import type { TelemetryService } from "../telemetry/telemetry-service.js";
import type { WebMcpService } from "../webmcp/webmcp-service.js";

/** What the live view needs from the rest of the server. */
export interface LiveViewDeps {
  browsers: BrowserService;
  browserStore: BrowserStore;
  webmcp: WebMcpService;
  rateLimits: RateLimits;
  limits: LiveViewLimits;
  /** This node among several sharing a database: another node's browser is watched through it. */
  cluster?: Cluster | undefined;
  /** The browsers' telemetry: their viewers' connections. */
  telemetry?: TelemetryService | undefined;
}

/** The live view's part of the server's WebSocket upgrades, and what it is doing now. */
export interface LiveViewEndpoint {
  /** Its upgrades, for the server's upgrade router. */
  route: UpgradeRoute;
  /**
   * Viewers connected and tabs captured now, over every browser, and the places taken:
   * viewers admitted (counted against `maxViewers`) until their socket closes, those
   * still waiting for their browser's view to open included.
   */
  stats(): { viewers: number; screencasts: number; places: number };
}

/** The protocol a live view page asks for; the token travels beside it as `token.<token>`. */
export const LIVE_VIEW_PROTOCOL = "browser-service.live-view";

/**
 * Close codes a live view page explains to its viewer (4000-4999: the application's own,
 * RFC 6455 7.4.2): `unauthorized` for every viewer not let in (no running browser opens
 * with what it sent), `gone` for a browser that ends, or cannot be reached, once its
 * viewer's token was taken, `tooMany` for a full browser or a blocked address.
 */
export const LIVE_VIEW_CLOSE = { unauthorized: 4401, gone: 4404, tooMany: 4429 } as const;

const LIVE_PATH = /^\/browsers\/([^/]+)\/live$/;
// The largest frame a watch-only viewer may send: its messages are at most 1,024 characters.
const WATCH_MAX_MESSAGE_BYTES = 4096;
const TOKEN_PROTOCOL = /^token\.([A-Za-z0-9_-]{1,128})$/;
// The one reason given to a viewer not let in (see `notOpened`); a close reason is at most 123 bytes.
const NOT_OPENED = "No running browser opens with this token: the browser is gone, or the token is wrong.";

/**
 * `GET /browsers/{id}/live`: the live view page (the same document for every browser, no
 * credential needed to load it), and the same path upgraded to the page's WebSocket,
 * which carries the token as a protocol (`token.<token>`) beside
 * {@link LIVE_VIEW_PROTOCOL}. A page's script cannot read why an upgrade was refused, so
 * every refusal past the handshake is an accepted connection closed at once with a
 * {@link LIVE_VIEW_CLOSE} code and a reason.
 */
export function installLiveView(app: FastifyInstance, deps: LiveViewDeps): LiveViewEndpoint {
  const { limits } = deps;
  const page = buildLiveViewPage();
  const serverFor = (maxPayload: number) =>
    new WebSocketServer({
      noServer: true,
      maxPayload,
      perMessageDeflate: false,
      handleProtocols: (protocols) => (protocols.has(LIVE_VIEW_PROTOCOL) ? LIVE_VIEW_PROTOCOL : false),
    });
  const wss = serverFor(limits.maxMessageBytes);
  // A watch-only viewer sends only small messages (a tab, the tools): ws refuses a larger
  // frame as it arrives (1009), before the server reads it whole.
  const watchWss = serverFor(WATCH_MAX_MESSAGE_BYTES);
  // Every viewer's socket, with the browser it watches.
  const sockets = new Map<WebSocket, string>();
  const hub = new LiveViewHub({
    limits,
    log: app.log,
    webmcpOf: async (browserId) => {
      const row = await deps.browserStore.findLaunched(browserId);
      // The service's own browsers (a login flow's) serve no WebMCP, here as through the API.
      if (!row || row.internal === 1) throw new NotFoundError(`No browser has the id "${browserId}"; it may have been deleted.`);
      return deps.webmcp.of(row);
    },
    ended: (browserId) => {
      for (const [ws, watched] of sockets) if (watched === browserId) ws.close(LIVE_VIEW_CLOSE.gone, "The browser ended.");
    },
  });

  app.get<{ Params: { id_or_name: string } }>("/browsers/:id_or_name/live", { config: { page: true } }, async (_request, reply) =>
    reply
      .type("text/html; charset=utf-8")
      .header("content-security-policy", page.contentSecurityPolicy)
      .header("cache-control", "no-cache")
      .header("referrer-policy", "no-referrer")
      .header("x-content-type-options", "nosniff")
      .send(page.html),
  );
  app.addHook("preClose", async () => {
    for (const ws of sockets.keys()) ws.terminate();
  });

  // ws has already closed the connection with the matching code (1009, 1002, 1007) when it reports why.
  const socketFailed = (error: Error) => app.log.debug({ err: error }, "a live view connection was closed for a broken or oversized frame");

  const route: UpgradeRoute = {
    name: "live view",
    claims: (request, path) => request.method === "GET" && LIVE_PATH.test(path) && request.headers.upgrade?.toLowerCase() === "websocket",
    take: (request, socket, head) => accept(request, socket, head),
  };

  function accept(request: IncomingMessage, socket: Duplex, head: Buffer): void {
    const path = LIVE_PATH.exec((request.url ?? "").split("?")[0] ?? "") as RegExpExecArray;
    const offered = (request.headers["sec-websocket-protocol"] ?? "").split(",").map((protocol) => protocol.trim());
    // A handshake ws would refuse in plain text, or not a live view page's (so no page to
    // show a close code to): an HTTP refusal with the Error body.
    const handshake =
      handshakeError(request) ??
      (offered.includes(LIVE_VIEW_PROTOCOL)
        ? undefined
        : new ApiError(400, "bad_request", "The WebSocket handshake is invalid (1 problem).", {
            details: [{ code: "invalid_websocket_handshake", message: `A live view connection asks for the protocol ${LIVE_VIEW_PROTOCOL}.` }],
          }));
    if (handshake) {
      refuseUpgrade(socket, handshake);
      return;
    }
    const token = offered.map((protocol) => TOKEN_PROTOCOL.exec(protocol)?.[1]).find((found) => found !== undefined);
    open(request, socket, head, path[1] as string, token).catch((error: unknown) => {
      app.log.error({ err: error }, "live view failed to accept a viewer");
      socket.destroy();
    });
  }

  async function open(request: IncomingMessage, socket: Duplex, head: Buffer, idInPath: string, token: string | undefined): Promise<void> {
    const closeWith = (code: number, reason: string) =>
      wss.handleUpgrade(request, socket, head, (ws) => {
        // What the client sends before the close reaches it is still read: a frame over the
        // cap or not UTF-8 is reported here, which would otherwise end the whole server.
        ws.on("error", socketFailed);
        ws.close(code, reason);
      });
    // As on the API: the failed-authentication limit of the client, before any lookup.
    const client = deps.rateLimits.clientKey(request);
    if (deps.rateLimits.checkClient(client)) {
      closeWith(LIVE_VIEW_CLOSE.tooMany, "Too many failed attempts from this address; wait and reload.");
      return;
    }
    // One answer for every viewer not let in, token or none, whatever the browser: so that
    // nobody learns from it which ids are browsers running now. Each counts as a failed
    // attempt of its address, so ids cannot be probed for free either.
    const notOpened = (counted: boolean) => {
      if (counted) deps.rateLimits.recordFailedAuth(client);
      closeWith(LIVE_VIEW_CLOSE.unauthorized, NOT_OPENED);
    };
    let browserId: string;
    try {
      browserId = decodeURIComponent(idInPath);
    } catch {
      notOpened(true);
      return;
    }
    const row = await deps.browserStore.findLaunched(browserId);
    // Another node's browser: its node checks the token (it alone holds the browser's) and serves the view.
    const where = row?.status === "running" ? deps.cluster?.locate(row.node_id) : undefined;
    const forwarder = deps.cluster?.forwarder;
    if (typeof where === "object" && forwarder !== undefined) {
      const to = { target: where, path: `/browsers/${encodeURIComponent(browserId)}/live` };
      // Its node counts the attempt; one that does not answer leaves the token unchecked, so the attempt is not counted.
      forwarder.upgrade(request, socket, head, to, client, () => notOpened(false));
      return;
    }
    const cdpToken = row ? deps.browsers.token(row.id) : undefined;
    const router = row ? deps.browsers.cdp(row.id) : undefined;
    // A browser that ended took its tokens with it: whatever was sent, it opens nothing.
    const access = token === undefined || cdpToken === undefined ? undefined : liveViewAccess(token, cdpToken);
    if (!row || router === undefined || row.status !== "running" || access === undefined) {
      notOpened(true);
      return;
    }
    // A viewer that left during the lookup (its close is past, so no listener below would
    // hear it) takes no place; it was counted above like any other if its token was wrong.
    if (socket.destroyed || socket.readableEnded) {
      socket.destroy();
      return;
    }
    const leave = hub.admit(row.id);
    if (leave === undefined) {
      closeWith(LIVE_VIEW_CLOSE.tooMany, `This browser has ${limits.maxViewers} viewers, as many as the server allows.`);
      return;
    }
    // A viewer that gives up while the view opens frees its place at once, not when the browser answers.
    let gaveUp = false;
    const giveUp = () => {
      if (gaveUp) return;
      gaveUp = true;
      leave();
      socket.destroy();
    };
    // The server lets clients half-close (app/server.ts): a FIN is `end` without `close`.
    socket.once("close", giveUp);
    socket.once("end", giveUp);
    let view: BrowserLiveView;
    try {
      view = await hub.viewOf(row.id, router);
    } catch (error) {
      socket.off("close", giveUp);
      socket.off("end", giveUp);
      if (gaveUp) return;
      leave();
      app.log.warn({ err: error, browser: row.id }, "could not open a live view");
      closeWith(LIVE_VIEW_CLOSE.gone, "This browser is gone: its DevTools could not be reached.");
      return;
    }
    socket.off("close", giveUp);
    socket.off("end", giveUp);
    if (gaveUp) return;
    if (socket.destroyed || view.closed) {
      leave();
      // Closed under it: the browser ended while the view opened.
      if (!socket.destroyed) closeWith(LIVE_VIEW_CLOSE.gone, "This browser is gone: it was deleted or it crashed.");
      return;
    }
    let upgraded = false;
    (access === "watch" ? watchWss : wss).handleUpgrade(request, socket, head, (ws) => {
      upgraded = true;
      sockets.set(ws, row.id);
      // A viewer keeps the browser active: its inactivity timeout starts when the last one
      // leaves, or is found gone (the heartbeat closes a viewer that stopped answering).
      const released = deps.browsers.hold(row.id);
      const recorder = deps.telemetry?.of(row.id);
      const disconnected = recorder?.wants("connection") === true ? connectionEvents(recorder, "live_view", { read_only: access === "watch" }) : undefined;
      keepAlive(ws, limits.heartbeatMs);
      // A frame over the size cap, a broken frame: ws closes the connection (1009, 1002) and
      // reports it here; without a listener the report would end the whole server.
      ws.on("error", socketFailed);
      const viewer = new SocketViewer(ws, access, limits.maxBufferedBytes);
      ws.on("message", (data, isBinary) => {
        if (isBinary) {
          viewer.send(JSON.stringify({ type: "error", code: "invalid_message", message: "Messages are JSON text." }));
          return;
        }
        try {
          view.receive(viewer, data.toString());
        } catch (error) {
          app.log.error({ err: error }, "live view failed to handle a viewer's message");
          ws.close(1011, "The server failed to handle a message.");
        }
      });
      ws.once("close", () => {
        disconnected?.({});
        released();
        sockets.delete(ws);
        view.leave(viewer);
        leave();
      });
      view.join(viewer);
    });
    // ws calls back at once, or never when the socket closed meanwhile: its place is freed here.
    if (!upgraded) leave();
  }

  return { route, stats: () => hub.stats() };
}
