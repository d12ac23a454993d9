import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import type WebSocket from "ws";
import { WebSocketServer } from "ws";
import { type ApiKeyStore, type Credential, keyReaches } from "../auth/api-key-store.js";
import { hasAuthorization, parseBearer } from "../auth/bearer-token.js";
import type { BrowserService } from "../browsers/browser-service.js";
import type { BrowserStore } from "../browsers/browser-store.js";
import { browserTokenMatches } from "../cdp/browser-token.js";
import type { CdpChannel } from "../cdp/cdp-router.js";
import { bridge } from "../cdp/client-bridge.js";
import type { CdpEndpointLimits } from "../cdp/client-limits.js";
import { MessageBudget, ProjectBudgets } from "../cdp/message-budget.js";
import { Admissions } from "../http/admissions.js";
import { CdpClientLimitError, ConflictError, ForbiddenError, NotFoundError, UnauthorizedError } from "../http/api-errors.js";
import type { RateLimits } from "../http/rate-limiter.js";
import { refuseUpgrade, type UpgradeRoute } from "../http/upgrade-router.js";
import { handshakeError } from "../http/websocket-handshake.js";
import { keepAlive } from "../http/websocket-heartbeat.js";
import type { Cluster } from "../nodes/cluster.js";
import { commandReporter, connectionEvents } from "../telemetry/client-telemetry.js";
import type { TelemetryService } from "../telemetry/telemetry-service.js";

/** What the endpoint needs from the rest of the server. */
export interface CdpEndpointDeps {
  browsers: BrowserService;
  browserStore: BrowserStore;
  apiKeys: ApiKeyStore;
  limits: CdpEndpointLimits;
  /** The server's rate limits: failed authentications count per client, API keys per key, as on every operation. */
  rateLimits: RateLimits;
  /**
   * The service's own origins (`http://127.0.0.1:8787`, `--public-url`'s), serialized as
   * browsers send `Origin`: an upgrade from a page of one of them is let through. Read at
   * each upgrade, since the listening port is known only once the server listens.
   */
  ownOrigins: () => readonly string[];
  /** This node among several sharing a database: another node's browser is reached through it. */
  cluster?: Cluster | undefined;
  /** Told of the bytes each client sends and receives (the server's metrics). */
  onBytes?: (direction: "in" | "out", bytes: number) => void;
  /** The browsers' telemetry: their clients' commands and connections. */
  telemetry?: TelemetryService | undefined;
}

/** What the server reads of the endpoint. */
export interface CdpEndpoint {
  /** Its upgrades, for the server's upgrade router. */
  route: UpgradeRoute;
  /** DevTools client connections open now, over every browser. */
  clients(): number;
}

const CDP_PATH = /^\/browsers\/([^/]+)\/cdp$/;

/**
 * The server's DevTools endpoint, `GET /browsers/{id}/cdp` upgraded to a WebSocket.
 * The browser's token (`?token=`) or an API key of the browser's project
 * (`Authorization: Bearer`) is checked before the upgrade: a refusal is an HTTP
 * response with the spec's Error body. Each accepted client gets its own channel of the
 * browser's pipe. The endpoint stops with the server.
 */
export function installCdpEndpoint(app: FastifyInstance, deps: CdpEndpointDeps): CdpEndpoint {
  const { limits } = deps;
  const wss = new WebSocketServer({ noServer: true, maxPayload: limits.maxMessageBytes, perMessageDeflate: false });
  const clients = new Map<string, Set<WebSocket>>();
  // Each browser's clients, counted from the admission on (their session still opening).
  const places = new Admissions(limits.maxClients);
  const projectBudgets = new ProjectBudgets({ messageRate: limits.projectMessageRate, byteRate: limits.projectByteRate }, limits.clock);

  // Upgraded sockets hold the HTTP server open; they end before it closes.
  app.addHook("preClose", async () => {
    for (const set of clients.values()) for (const ws of set) ws.terminate();
  });
  const endpoint: CdpEndpoint = {
    route: {
      name: "DevTools",
      claims: (request, path) => request.method === "GET" && CDP_PATH.test(path) && request.headers.upgrade?.toLowerCase() === "websocket",
      take: (request, socket, head) => accept(request, socket, head),
    },
    clients: () => {
      let open = 0;
      for (const set of clients.values()) open += set.size;
      return open;
    },
  };

  return endpoint;

  async function accept(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const path = CDP_PATH.exec((request.url ?? "").split("?")[0] ?? "") as RegExpExecArray;
    // Checked here, not by ws, whose refusal is plain text without the Error body.
    const handshake = handshakeError(request);
    if (handshake) {
      refuseUpgrade(socket, handshake);
      return;
    }
    // Another node forwarded it, having checked its Origin and counted it against its key.
    const peer = deps.cluster?.verifiedPeer(request);
    const fromPeer = peer !== undefined;
    const origin = fromPeer ? undefined : foreignOrigin(request, deps.ownOrigins());
    if (origin !== undefined) {
      refuseUpgrade(
        socket,
        new ForbiddenError(
          `A DevTools connection from a web page (Origin ${JSON.stringify(origin.slice(0, 200))}) is refused: DevTools clients such as Playwright and Puppeteer send no Origin.`,
        ),
      );
      return;
    }
    // As on the API: an upgrade without a credential guesses nothing, so it is neither
    // counted nor refused; one with a credential is refused while its client is blocked.
    const client = presentsCredential(request) ? deps.rateLimits.clientKey(request) : undefined;
    const blocked = client === undefined ? undefined : deps.rateLimits.checkClient(client);
    if (blocked) {
      refuseUpgrade(socket, blocked);
      return;
    }
    let browserId: string;
    try {
      browserId = decodeURIComponent(path[1] as string);
    } catch {
      refuseUpgrade(socket, new NotFoundError("The browser id in the path is not valid percent-encoding."));
      return;
    }
    const launched = await deps.browserStore.findLaunched(browserId);
    // The service's own browsers (a login flow's, which types stored credentials) take no
    // DevTools client: to every caller they are as missing as a deleted one.
    const found = launched?.internal === 1 ? undefined : launched;
    // Another node checked the client's credential for this very browser, and signed that it did.
    const access = found !== undefined && peer?.opens === found.id ? "peer" : await authorized(request, found);
    // One answer whether the browser is missing or another project's: no credential tells them apart.
    if (access === "refused") {
      if (client !== undefined) deps.rateLimits.recordFailedAuth(client);
      refuseUpgrade(
        socket,
        new UnauthorizedError(
          "Send the browser's token (the ?token= of its cdp_ws_url) or an API key of its project as \"Authorization: Bearer <key>\"; a browser's token dies with it.",
        ),
      );
      return;
    }
    if (access === "not_its_project" || found === undefined) {
      refuseUpgrade(socket, new NotFoundError(`No browser with the id "${browserId}" is in this key's projects; it may have been deleted.`));
      return;
    }
    const row = found;
    const limited = access === "token" || access === "peer" || fromPeer ? undefined : deps.rateLimits.takeKeyRequest(access.keyId);
    if (limited) {
      refuseUpgrade(socket, limited);
      return;
    }
    // Another node's browser: its node takes the connection, with its own limits and answers.
    const where = row.status === "running" ? deps.cluster?.locate(row.node_id) : undefined;
    if (where === "unreachable" || (typeof where === "object" && deps.cluster?.forwarder === undefined)) {
      refuseUpgrade(socket, new ConflictError(`Browser ${row.id} cannot be reached: its node (${row.node_id}) cannot be reached from this one.`));
      return;
    }
    if (typeof where === "object") {
      // Checked here: the owner is told so, signed, and never sees the client's token or key.
      const to = { target: where, path: `/browsers/${encodeURIComponent(row.id)}/cdp`, opens: row.id };
      deps.cluster?.forwarder?.upgrade(request, socket, head, to, client ?? deps.rateLimits.clientKey(request), () =>
        refuseUpgrade(socket, new ConflictError(`Browser ${row.id} cannot be reached: its node (${row.node_id}) does not answer.`)),
      );
      return;
    }
    const router = deps.browsers.cdp(row.id);
    if (row.status !== "running" || !router) {
      refuseUpgrade(socket, new ConflictError(`Browser ${row.id} is not running (status ${row.status}).`));
      return;
    }
    const release = places.admit(row.id);
    if (release === undefined) {
      refuseUpgrade(socket, new CdpClientLimitError(limits.maxClients));
      return;
    }
    try {
      const recorder = deps.telemetry?.of(row.id);
      const channel = await router.openChannel({ maxPending: limits.maxPending, commands: recorder === undefined ? undefined : commandReporter(recorder) });
      if (socket.destroyed) {
        channel.close();
        release();
        return;
      }
      // The place is the connection's from here: freed when it closes, or if it never opens.
      if (!upgrade(request, socket, head, row, channel, release)) release();
    } catch (error) {
      release();
      throw error;
    }
  }

  /**
   * Completes the upgrade and relays between the client and its channel. ws calls back at
   * once, or never when the socket closed meanwhile: the channel is then closed here.
   */
  function upgrade(
    request: IncomingMessage,
    socket: Duplex,
    head: Buffer,
    row: { id: string; project_id: string },
    channel: CdpChannel,
    release: () => void,
  ): boolean {
    let upgraded = false;
    wss.handleUpgrade(request, socket, head, (ws) => {
      upgraded = true;
      const connected = clients.get(row.id) ?? new Set<WebSocket>();
      connected.add(ws);
      clients.set(row.id, connected);
      const projectBudget = projectBudgets.acquire(row.project_id);
      // A connected client keeps the browser active: its inactivity timeout starts when the last
      // one leaves, or is found gone (the heartbeat closes a client that stopped answering).
      const released = deps.browsers.hold(row.id);
      keepAlive(ws, limits.heartbeatMs);
      const recorder = deps.telemetry?.of(row.id);
      const disconnected = recorder?.wants("connection") === true ? connectionEvents(recorder, "cdp") : undefined;
      let messages = 0;
      let browserEnded = false;
      channel.onClose((reason) => {
        browserEnded = reason === "browser";
      });
      ws.once("close", () => {
        disconnected?.({ message_count: messages, reason: browserEnded ? "upstream_error" : "client_close", telemetry_excluded: channel.excludedCommands });
        released();
        release();
        connected.delete(ws);
        if (connected.size === 0 && clients.get(row.id) === connected) clients.delete(row.id);
        projectBudgets.release(row.project_id);
      });
      try {
        const ownBudget = new MessageBudget({ messageRate: limits.messageRate, byteRate: limits.byteRate }, limits.clock);
        const onBytes = deps.onBytes;
        const counted =
          disconnected === undefined
            ? onBytes
            : (direction: "in" | "out", bytes: number) => {
                messages++;
                onBytes?.(direction, bytes);
              };
        bridge(ws, channel, { limits, budgets: [ownBudget, projectBudget], log: app.log, ...(counted === undefined ? {} : { onBytes: counted }) });
      } catch (error) {
        // Past the upgrade an HTTP refusal can no longer be written: only this connection ends.
        app.log.error({ err: error }, "DevTools endpoint failed to start a client's session");
        channel.close();
        ws.close(1011, "The server could not open a DevTools session.");
      }
    });
    if (!upgraded) channel.close();
    return upgraded;
  }

  /**
   * Which credential opens the browser (`row`; `undefined`: none has that id): its token,
   * an API key of its project, a key of none of its projects (`"not_its_project"`), or
   * none (`"refused"`). A key is looked up whether or not the browser exists, so that the
   * time taken does not tell either.
   */
  async function authorized(
    request: IncomingMessage,
    row: { project_id: string; org_id: string; cdp_token_sha256: string | null } | undefined,
  ): Promise<"token" | Credential | "not_its_project" | "refused"> {
    const token = new URL(request.url ?? "/", "http://endpoint").searchParams.get("token");
    if (token !== null) return browserTokenMatches(token, row?.cdp_token_sha256 ?? null) ? "token" : "refused";
    const bearer = parseBearer(request.headers.authorization);
    if (bearer === undefined) return "refused";
    const credential = await deps.apiKeys.authenticate(bearer);
    if (credential === undefined) return "refused";
    return row !== undefined && keyReaches(credential, { org_id: row.org_id, id: row.project_id }) ? credential : "not_its_project";
  }
}

/** Whether an upgrade carries a credential: a `?token=` (even empty) or an `Authorization` header. */
function presentsCredential(request: IncomingMessage): boolean {
  return hasAuthorization(request.headers.authorization) || new URL(request.url ?? "/", "http://endpoint").searchParams.has("token");
}

/**
 * The `Origin` of an upgrade that comes from a web page other than the service's own, or
 * `undefined`. Browsers send `Origin` with every WebSocket and skip CORS for them, so any
 * page (one in a browser of this service, or any site a user with a key visits) could
 * otherwise open DevTools connections here with whatever token it guesses or has been
 * handed; DevTools clients (Playwright, Puppeteer, `ws`) send none. Only an origin of
 * the service itself is let through, compared exactly as browsers serialize it, and never
 * the request's own `Host`: a DNS-rebinding page sends a `Host` and `Origin` that agree.
 */
function foreignOrigin(request: IncomingMessage, own: readonly string[]): string | undefined {
  const origin = request.headers.origin;
  if (origin === undefined || own.includes(origin)) return undefined;
  return origin;
}
