import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { limits } from "@browser-service/types";
import Fastify, { type FastifyInstance, type FastifyServerOptions } from "fastify";
import type { IssuedKey } from "../auth/api-key-store.js";
import type { BrowserLauncher } from "../browsers/browser-launcher.js";
import { BrowserService, type CreateObservation } from "../browsers/browser-service.js";
import { ChromiumLauncher } from "../browsers/chromium-launcher.js";
import { WarmBrowserRecords } from "../browsers/warm-browser-records.js";
import { WarmPool, type WarmPoolStats } from "../browsers/warm-pool.js";
import { readFixturesFile } from "../fixtures/fixtures-file.js";
import { installBodyIdleTimeout } from "../http/body-idle-timeout.js";
import { trustedProxies } from "../http/client-key.js";
import { installConnectionLimits } from "../http/connection-limits.js";
import { installDurableResponses } from "../http/durable-responses.js";
import { answerClientError, answerConnect, answerFrameworkError, installErrorHandling, MAX_HEADER_BYTES } from "../http/error-handler.js";
import { type RateLimitSettings, RateLimits } from "../http/rate-limiter.js";
import { answerRawError } from "../http/raw-error-response.js";
import { installRequestIdHeader, newRequestId } from "../http/request-id.js";
import { requestTargetError } from "../http/request-target.js";
import { installBodyReading } from "../http/request-validation.js";
import { installResponseCheck, type ResponseCheckOptions } from "../http/response-check.js";
import { Cluster, DEFAULT_LEASE_TTL_MS } from "../nodes/cluster.js";
import { logProofRefusals, MIN_NODE_SECRET_LENGTH, PeerAuth, type ProofRefusal } from "../nodes/peer-auth.js";
import { PeerCalls } from "../nodes/peer-calls.js";
import type { OtlpDestination } from "../telemetry/otlp-export.js";
import { TelemetryService } from "../telemetry/telemetry-service.js";
import { DEFAULT_CONFIG, isAdvertiseUrl } from "./config.js";
import { issueApiKey } from "./issue-key.js";
import { answerKeyRequests } from "./key-requests.js";
import { loadFixtures } from "./load-fixtures.js";
import { checkServerOptions } from "./settings.js";
import "../http/fastify-augment.js";
import type { CdpEndpointLimits } from "../cdp/client-limits.js";
import { BrowserUrls, ownOrigins } from "../cdp/public-url.js";
import { CredentialSeals } from "../credentials/credential-seals.js";
import { installUpgradeRouter, type UpgradeRouter } from "../http/upgrade-router.js";
import type { LiveViewLimits } from "../live-view/live-view-limits.js";
import { HealthChecks } from "../managed-auth/health-checks.js";
import { HostedAccess } from "../managed-auth/hosted-access.js";
import { LoginFlows } from "../managed-auth/login-flows.js";
import { DEFAULT_PROFILE_STATE_BYTES, ProfileStates } from "../profiles/profile-states.js";
import type { ApiDeps } from "../routes/api-deps.js";
import { type CdpEndpoint, installCdpEndpoint } from "../routes/cdp-endpoint.js";
import { forwardToFlow } from "../routes/flow-placement.js";
import { registerHealthRoutes } from "../routes/health-routes.js";
import { loginFlowUrls, registerHostedLoginRoutes } from "../routes/hosted-login-routes.js";
import { installLiveView, type LiveViewEndpoint } from "../routes/live-view-endpoint.js";
import { registerApi } from "../routes/register-api.js";
import { loadSecretsKey, parseSecretsKey } from "../secrets/secrets-key.js";
import { credentialContext, profileContext, SecretsVault } from "../secrets/secrets-vault.js";
import { claimDataDir, dataDirLayout } from "../storage/data-dir.js";
import type { SnapshotBuildCounts } from "../webmcp/browser-webmcp.js";
import { TITLE_MAX_AGE_MS } from "../webmcp/tab-titles.js";
import { WebMcpService } from "../webmcp/webmcp-service.js";
import { type FirstStart, initializeOrganization } from "./first-start.js";
import { MetricsListener, ServerMetrics } from "./server-metrics.js";
import { openStores } from "./stores.js";

/** Settings of {@link createServer}; all but `dataDir` have defaults. */
export interface CreateServerOptions {
  /** Directory of the database and uploaded archives; created if missing. */
  dataDir: string;
  /**
   * A PostgreSQL database (`postgres://` URL) that holds the control plane instead of the
   * data directory's SQLite file, as `--database` does; several servers may share one.
   * The data directory still holds this server's browser profiles and uploads.
   */
  database?: string;
  /**
   * This server's name among those sharing `database` (`--node-id`): its browsers are
   * recorded under it, and only it cleans them up after its own unclean exit. 1 to 64
   * letters, digits, `.`, `_` or `-`. Default: the host name.
   */
  nodeId?: string;
  /** Interface to listen on. Default `127.0.0.1`. */
  host?: string;
  /** Port to listen on; `0` picks a free one. Default 8787. */
  port?: number;
  /** The organization's concurrency limit, as its plan would set it. Default 10. */
  planLimit?: number;
  /** Answer project administration with 404 `projects_disabled`. Default false. */
  projectsDisabled?: boolean;
  /** A fixtures file to load at start (format in the README). */
  fixtures?: string;
  /**
   * Starts browsers for `POST /browsers`. Default: a {@link ChromiumLauncher} with
   * `allowPrivateNetwork` and `unsafeNoSandbox` below.
   */
  launcher?: BrowserLauncher;
  /**
   * Let browsers of the default launcher reach loopback, private and link-local addresses
   * and this host, as `--allow-private-network` does: for tests and local development that
   * serve pages on 127.0.0.1. Default false (only public addresses).
   */
  allowPrivateNetwork?: boolean;
  /**
   * Run browsers of the default launcher without their sandbox, as `--unsafe-no-sandbox`
   * does: a developer's own machine only. Default false.
   */
  unsafeNoSandbox?: boolean;
  /**
   * The URL clients reach the server at, when it differs from the request's `Host` (a
   * proxy, TLS): `cdp_ws_url` then starts with its WebSocket form (`https` → `wss`).
   */
  publicUrl?: string;
  /**
   * Connections each client (address, IPv6 /64, or one of the server's browsers) may hold
   * open at once; `0` turns the limit off. Default {@link DEFAULT_CONFIG}`.maxClientConnections`.
   */
  maxClientConnections?: number;
  /** Seconds a request body may stall before its connection is closed; `0` turns it off. Default {@link DEFAULT_CONFIG}`.bodyIdleTimeoutSec`. */
  bodyIdleTimeoutSec?: number;
  /** Bounds of the DevTools endpoint; each defaults as in {@link DEFAULT_CONFIG}. */
  cdpLimits?: Partial<CdpEndpointLimits>;
  /** Bounds of the live view (`live_view_url`); each defaults as in {@link DEFAULT_LIVE_VIEW_LIMITS}, `maxViewers` as `--live-view-max-viewers`. */
  liveView?: Partial<LiveViewLimits>;
  /** Fastify's logger setting. Default off. */
  logger?: FastifyServerOptions["logger"];
  /**
   * The key that encrypts stored credentials, 64 hex characters (`--secrets-key`); every
   * node sharing a database needs the same one. Default: the data directory's
   * `secrets.key`, created at the first start.
   */
  secretsKey?: string;
  /** The most a profile's saved state may hold, in bytes. Default 64 MiB (`--profile-state-mib`). */
  profileStateBytes?: number;
  /** Seconds a login flow of an auth connection may run, from its start to `flow_expires_at`. Default {@link DEFAULT_CONFIG}'s (600). */
  authFlowSeconds?: number;
  /**
   * Checks every auth connection's session this often, in seconds, instead of its
   * `health_check_interval` (`--auth-check-seconds`: tests and demos). Default: each
   * connection's own interval.
   */
  authCheckSeconds?: number;
  /** The key the secrets were sealed with before (`--secrets-key-previous`): they are sealed again with `secretsKey` at start. */
  previousSecretsKey?: string;
  /**
   * Browsers' telemetry: how long their events are kept after they end (`--telemetry-retention-hours`),
   * how many per browser and per project (the oldest dropped past them), and the OTLP
   * destinations a create may name (`--otlp-destinations`). `flushMs` and `sweepMs` are how
   * often events are written (250) and retention applied (10,000).
   */
  telemetry?: {
    retentionHours?: number;
    maxEventsPerBrowser?: number;
    maxEventsPerProject?: number;
    /** Bytes of events' JSON kept per browser (`--telemetry-max-mib-per-browser`); default 64 MiB. */
    maxBytesPerBrowser?: number;
    /** Bytes of events' JSON kept per project (`--telemetry-max-mib-per-project`); default 1 GiB. */
    maxBytesPerProject?: number;
    destinations?: readonly OtlpDestination[];
    flushMs?: number;
    sweepMs?: number;
  };
  /** Checks every response against the spec (tests turn this on). Default off. */
  responseCheck?: ResponseCheckOptions;
  /**
   * Request rate limits per API key and failed authentications per client address; each
   * defaults as in {@link DEFAULT_CONFIG}, and a `rate` of 0 turns one off.
   * `browserOfConnection` tells the server's own browsers apart from other clients on
   * their address (the proxies to believe are `trustProxy`).
   */
  rateLimits?: Partial<Omit<RateLimitSettings, "trustedProxy">>;
  /**
   * The clock (milliseconds) and the sweep interval of the browsers' inactivity timeouts
   * (`timeout_seconds`); default the process's monotonic clock, checked every second.
   */
  browserTimeouts?: { clock?: () => number; sweepMs?: number };
  /**
   * MiB of memory the host keeps available: below it `POST /browsers` answers `503
   * host_memory_low` with `Retry-After` before anything starts. Default `0` (no floor) for
   * an embedded server; the command line's default is {@link DEFAULT_CONFIG}`.minFreeMemoryMib`.
   */
  minFreeMemoryMib?: number;
  /**
   * Serve `GET /metrics` (Prometheus text) on a listener of its own at `host` (default
   * `127.0.0.1`) and `port` (`0`: a free one), apart from the API; without it, none.
   */
  metrics?: { port: number; host?: string };
  /** Bytes of memory available now (a test's stand-in); default Linux's `MemAvailable`. */
  availableMemory?: () => number;
  /**
   * The reverse proxies in front of the server, as `--trust-proxy` takes them: IP
   * addresses, CIDR ranges, or `loopback`, `linklocal`, `uniquelocal`. A request from one
   * of them counts, for the failed-authentication limit (and `request.ip` in the log), as
   * the client its `X-Forwarded-For` names; from any other peer that header is ignored.
   * Default none. An unusable entry throws a `TrustProxyError` (`invalid_trust_proxy`).
   */
  trustProxy?: readonly string[];
  /**
   * Browsers kept launched and ready, so `POST /browsers` does not wait for Chromium to
   * start. Default 0 (none): an embedded server starts no process it was not asked for;
   * the command line's default is {@link DEFAULT_CONFIG}`.warmBrowsers`.
   */
  warmBrowsers?: number;
  /**
   * How long one read of a browser's tab titles serves `GET .../webmcp/tools` listings, in
   * milliseconds: from 0 (read them for every listing) to the spec's `page_title`
   * `x-max-age-ms` (500), the default. Pages set titles without any event, so they are read
   * from the browser, a round trip that costs a large listing most of its time.
   */
  webmcpTitleMaxAgeMs?: number;
  /**
   * Serving browsers over several nodes sharing `database` (`--advertise-url`,
   * `--node-secret`, `--node-lease-sec`). Without `advertiseUrl` the node serves only its
   * own browsers (requests for another node's browser answer as for a browser that is not
   * running), but still holds a lease, so that its browsers are marked crashed if it dies.
   */
  cluster?: {
    /** The http(s) URL other nodes reach this one at (its origin; no path). */
    advertiseUrl?: string;
    /**
     * The secret every node shares, at least 32 characters; required with `advertiseUrl`.
     * It never leaves the node: each request to another node carries a proof made with it.
     */
    secret?: string;
    /** Other secrets whose proofs this node accepts, never makes: the old or new secret while it is rotated (README). */
    acceptedSecrets?: readonly string[];
    /** How long a lease lasts unless renewed: 2,000 to 300,000 ms. Default 10,000. */
    leaseTtlMs?: number;
  };
}

/** A server built by {@link createServer}. */
export interface BrowserServiceServer {
  /** The URL of `GET /metrics` once listening with {@link CreateServerOptions.metrics}; `undefined` without. */
  readonly metricsUrl: string | undefined;
  /** The Fastify instance, for in-process requests (`app.inject`). */
  app: FastifyInstance;
  /** What this start created when the data directory was empty; its key is shown nowhere else. */
  firstStart: FirstStart | undefined;
  /** The base URL once listening, such as `http://127.0.0.1:8787`. */
  readonly url: string;
  /** Starts listening and resolves with the base URL. */
  listen(): Promise<string>;
  /** Issues an API key, org-wide or scoped to the project with this id or name. */
  issueApiKey(project?: string): Promise<IssuedKey>;
  /** Answers the key requests `keys create` left in the data directory; returns how many. */
  answerKeyRequests(): Promise<number>;
  /** How many warm browsers are ready and launching (both 0 without a warm pool). */
  warmPoolStats(): WarmPoolStats;
  /**
   * How many WebMCP tool snapshots were built for `GET .../webmcp/tools`, how many of
   * those requests shared a build already running for the same browser and state, and
   * how many were answered `304` from the remembered tag of the last build, without
   * building.
   */
  webmcpSnapshotBuilds(): SnapshotBuildCounts;
  /**
   * Live view viewers connected and tabs being captured for them now, over every browser,
   * and the viewer places taken (`--live-view-max-viewers` counts these: a viewer holds
   * one from its admission, while its view still opens, until its socket closes).
   */
  liveViewStats(): { viewers: number; screencasts: number; places: number };
  /**
   * Drains the server before {@link close}: `GET /readyz` answers `503 not_ready`, creates
   * go to other nodes (`503 node_draining` with none), the warm browsers end, and the
   * running browsers, their DevTools and live view connections and every other request
   * go on being served until the browsers have all ended, `seconds` have passed, or
   * `signal` aborts. Resolves with how many browsers were still running then ({@link
   * close} ends them, saving their profiles where asked).
   */
  drain(seconds: number, signal?: AbortSignal): Promise<number>;
  /**
   * Stops gracefully: stops accepting connections, lets in-flight requests finish,
   * closes every browser, closes the database and releases the data directory.
   */
  close(): Promise<void>;
}

// Shutdown lets in-flight requests finish for this long; browsers (5 s to stop at most)
// and the database are then closed, so a shutdown takes well under 10 s whatever clients do.
const SHUTDOWN_GRACE_MS = 3_000;
/** How often a drain looks whether the browsers have all ended. */
const DRAIN_POLL_MS = 200;

// The spec's cap on the WebMCP invoke body (1 MiB + 4 KiB, its `x-max-bytes`); no other
// JSON body comes near it, so it is every JSON body's cap.
const JSON_BODY_LIMIT = limits.schemas.WebMcpInvokeRequest.maxBytes;
/** The largest body of an operation another node may forward here: a call's frame holds it whole. */
const PEER_CALL_BODY_LIMIT = Math.max(JSON_BODY_LIMIT, limits.schemas.ManagedAuthSubmitRequest.maxBytes);

/**
 * Where a log line may carry a request's headers (Fastify's request serializer, and
 * plugins that log the options they pass on, such as @fastify/multipart's busboy
 * options): their credentials are written as `[redacted]`, at every level.
 */
export const REDACTED_LOG_PATHS = [
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  "headers.cookie",
  "*.headers.authorization",
  "*.headers.cookie",
];

/** The logger setting with credentials redacted; `false` (no log) as it is. */
function withRedaction(logger: NonNullable<FastifyServerOptions["logger"]>): NonNullable<FastifyServerOptions["logger"]> {
  if (logger === false) return logger;
  const settings = logger === true ? {} : logger;
  return { ...settings, redact: { paths: REDACTED_LOG_PATHS, censor: "[redacted]" } };
}
// As long as the request line may be: every path segment reaches its operation, whose
// spec bounds it (400 maxLength), instead of the router refusing it with its own error.
const MAX_PARAM_LENGTH = MAX_HEADER_BYTES;

/**
 * The live view's bounds but the viewer cap (a flag): a screen captured at most 30 times
 * a second, scaled to fit 1600 x 1200, JPEG quality 70; 200 messages a second and
 * 4 invocations at once per viewer, 4 MiB a second per browser (structure counted 256-fold); a viewer's message as large as the API's largest body;
 * 64 MiB waiting for a viewer that does not read (two full tool lists).
 */
export const DEFAULT_LIVE_VIEW_LIMITS: Omit<LiveViewLimits, "maxViewers"> = {
  maxFps: 30,
  maxWidth: 1600,
  maxHeight: 1200,
  quality: 70,
  inputRate: 200,
  byteRate: 4 * 1024 * 1024,
  maxInvocations: 4,
  maxMessageBytes: JSON_BODY_LIMIT,
  maxBufferedBytes: 64 * 1024 * 1024,
};

/** `options.cluster`, checked before anything is opened. */
function checkedClusterOptions(options: CreateServerOptions): NonNullable<CreateServerOptions["cluster"]> {
  const cluster = options.cluster ?? {};
  if (options.cluster !== undefined && options.database === undefined) throw new RangeError("cluster needs a database several servers can share (database).");
  if (cluster.advertiseUrl !== undefined) {
    if (!isAdvertiseUrl(cluster.advertiseUrl))
      throw new RangeError("cluster.advertiseUrl must be an http or https URL of an origin, without path, query or credentials.");
    if (cluster.secret === undefined) throw new RangeError("cluster.advertiseUrl needs cluster.secret, shared by every node.");
  }
  if (cluster.secret !== undefined && cluster.secret.length < MIN_NODE_SECRET_LENGTH) {
    throw new RangeError(`cluster.secret must be at least ${MIN_NODE_SECRET_LENGTH} characters.`);
  }
  if (cluster.acceptedSecrets !== undefined) {
    if (cluster.secret === undefined) throw new RangeError("cluster.acceptedSecrets needs cluster.secret.");
    if (cluster.acceptedSecrets.some((secret) => secret.length < MIN_NODE_SECRET_LENGTH))
      throw new RangeError(`Each of cluster.acceptedSecrets must be at least ${MIN_NODE_SECRET_LENGTH} characters.`);
  }
  const ttl = cluster.leaseTtlMs;
  if (ttl !== undefined && (!Number.isSafeInteger(ttl) || ttl < 2_000 || ttl > 300_000))
    throw new RangeError(`cluster.leaseTtlMs must be an integer from 2000 to 300000; received ${ttl}.`);
  return cluster;
}

/**
 * Builds the browser service on a data directory: claims the directory, opens and
 * migrates its database, creates the organization on the first start, loads fixtures,
 * recovers from an unclean exit, and registers every operation of the spec.
 */
export async function createServer(options: CreateServerOptions): Promise<BrowserServiceServer> {
  // Every option that is a setting, by the setting's own rule; nothing is opened yet.
  checkServerOptions(options);
  let url: string | undefined;
  // Checked before anything is opened, so a bad URL leaves nothing behind.
  const browserUrls = new BrowserUrls(
    options.publicUrl,
    () => new URL(url ?? `http://${options.host ?? DEFAULT_CONFIG.host}:${options.port ?? DEFAULT_CONFIG.port}`).host,
  );
  const layout = dataDirLayout(options.dataDir);
  const planLimit = options.planLimit ?? DEFAULT_CONFIG.planLimit;
  // Built before anything is opened: a bad setting throws with nothing to undo.
  const trustedProxy = options.trustProxy === undefined ? undefined : trustedProxies(options.trustProxy);
  const launcher =
    options.launcher ?? new ChromiumLauncher({ allowPrivateNetwork: options.allowPrivateNetwork ?? false, unsafeNoSandbox: options.unsafeNoSandbox ?? false });
  // A page's requests to this server come through its browser's egress proxy; they count as that browser's, not as 127.0.0.1's.
  const browserOfConnection = options.rateLimits?.browserOfConnection ?? launcher.browserOfConnection?.bind(launcher);
  const clusterOptions = checkedClusterOptions(options);
  const nodeId = options.nodeId ?? DEFAULT_CONFIG.nodeId;
  const peer =
    clusterOptions.secret === undefined
      ? undefined
      : new PeerAuth({
          secret: clusterOptions.secret,
          acceptedSecrets: clusterOptions.acceptedSecrets ?? [],
          nodeId,
          onRefused: (refusal) => logRefusal(refusal),
        });
  // Set once the log exists: a node's proof refused though made with the secret says why there.
  let logRefusal: (refusal: ProofRefusal) => void = () => undefined;
  // Set once the cluster exists; a request before that has no peer to be.
  let cluster: Cluster | undefined;
  const rateLimits = new RateLimits({
    perKey: options.rateLimits?.perKey ?? { rate: DEFAULT_CONFIG.rateLimit, burst: DEFAULT_CONFIG.rateLimitBurst },
    authFailuresPerAddress: options.rateLimits?.authFailuresPerAddress ?? { rate: DEFAULT_CONFIG.authFailureLimit, burst: DEFAULT_CONFIG.authFailureBurst },
    ...(options.rateLimits?.clock === undefined ? {} : { clock: options.rateLimits.clock }),
    ...(browserOfConnection === undefined ? {} : { browserOfConnection }),
    ...(trustedProxy === undefined ? {} : { trustedProxy }),
    ...(peer === undefined ? {} : { declaredClient: (request: IncomingMessage) => cluster?.verifiedPeer(request)?.client }),
  });
  const minFreeMemoryMib = options.minFreeMemoryMib ?? 0;
  const warmBrowsers = options.warmBrowsers ?? 0;
  const titleMaxAgeMs = options.webmcpTitleMaxAgeMs ?? TITLE_MAX_AGE_MS;
  if (!Number.isSafeInteger(titleMaxAgeMs) || titleMaxAgeMs < 0 || titleMaxAgeMs > TITLE_MAX_AGE_MS) {
    throw new RangeError(`webmcpTitleMaxAgeMs must be an integer from 0 to ${TITLE_MAX_AGE_MS}; received ${titleMaxAgeMs}.`);
  }
  const releaseDataDir = claimDataDir(layout);
  let stores;
  // Set once the log exists; an idle connection's error before that has no request to fail.
  let logIdleError: (error: Error) => void = () => undefined;
  try {
    stores = await openStores(layout, {
      databaseUrl: options.database,
      nodeId,
      onIdleError: (error) => logIdleError(error),
      // A node stalled inside a transaction (a paused VM, a frozen process) would hold its
      // locks, the organization's during a create or its own lease row during a renewal,
      // past its lease; the others count it dead by then, and must not wait on it.
      idleInTransactionMs: clusterOptions.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS,
    });
  } catch (error) {
    releaseDataDir();
    throw error;
  }
  const openedStores = stores;
  const app = Fastify({
    logger: withRedaction(options.logger ?? false),
    genReqId: newRequestId,
    requestIdHeader: false,
    bodyLimit: JSON_BODY_LIMIT,
    return503OnClosing: false,
    // The same proxies as the rate limiter's, so that request.ip in the log is the client it counted.
    ...(trustedProxy === undefined ? {} : { trustProxy: trustedProxy }),
    // The spec has no HEAD operations; a HEAD of a GET path is 405 like any method a path lacks.
    exposeHeadRoutes: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Node's limit, stated so that the 431's message is true whatever node was started with;
    // a missing Host is answered by installErrorHandling with the Error body, not by Node.
    http: { maxHeaderSize: MAX_HEADER_BYTES, requireHostHeader: false },
    // What Node and the router refuse before a request exists also gets the Error body.
    clientErrorHandler: answerClientError,
    frameworkErrors: answerFrameworkError,
    // Fastify's own server, but for a request target that is not a path: refused before
    // routing (the router would serve `POST http://elsewhere/browsers` as `POST /browsers`).
    serverFactory: (handler, settings) => {
      const server = createHttpServer(settings.http ?? {}, (request, response) => {
        const targetError = requestTargetError(request);
        if (targetError) answerRawError(response, targetError);
        else handler(request, response);
      });
      // What Fastify sets on the server it builds itself.
      server.keepAliveTimeout = settings.keepAliveTimeout as number;
      server.requestTimeout = settings.requestTimeout as number;
      server.setTimeout(settings.connectionTimeout as number);
      return server;
    },
  });
  logIdleError = (error) => app.log.warn({ err: error }, "a PostgreSQL connection failed while idle; the next query opens another");
  logRefusal = logProofRefusals(app.log);
  app.server.on("connect", answerConnect);
  const connections = installConnectionLimits(app.server, {
    perClient: options.maxClientConnections ?? DEFAULT_CONFIG.maxClientConnections,
    trustedProxy,
    browserOfConnection,
  });
  // A client that half-closes after its request (FIN once the bytes are sent) still gets
  // its answer: Node's default drops a response that is not written yet when the FIN is
  // read, and responses can wait (for a sync of the database, a browser's launch). The
  // switch is http.Server's own property (set in its constructor since Node 0.x), not in
  // @types/node.
  (app.server as typeof app.server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // An Expect other than 100-continue is ignored, as RFC 9110 10.1.1 allows, instead of
  // Node's bare 417 without the Error body: the request is served as if it had none.
  app.server.on("checkExpectation", (request: IncomingMessage, response: ServerResponse) => app.server.emit("request", request, response));
  const webmcp = new WebMcpService(app.log, titleMaxAgeMs);
  const warmRecords = new WarmBrowserRecords(layout.warmBrowsersDir);
  const warmPool =
    warmBrowsers > 0
      ? new WarmPool({ size: warmBrowsers, launcher, records: warmRecords, log: app.log, prepare: (launched) => webmcp.prepare(launched) })
      : undefined;
  const profileStateBytes = options.profileStateBytes ?? DEFAULT_PROFILE_STATE_BYTES;
  // Its states are sealed with the key, which is checked below: no browser saves before.
  let profileStates: ProfileStates | undefined;
  let loginFlows: LoginFlows | undefined;
  const hostedAccess = new HostedAccess(stores.authConnections);
  let healthChecks: HealthChecks | undefined;
  // Read at each scrape: the live view and the pool are made below.
  let liveView: LiveViewEndpoint | undefined;
  let devtools: CdpEndpoint | undefined;
  let upgrades: UpgradeRouter | undefined;
  const metrics: ServerMetrics | undefined =
    options.metrics === undefined
      ? undefined
      : new ServerMetrics({
          browsers: (): { running: number; starting: number } => browsers.counts(),
          warmPool: () => warmPool?.stats() ?? { ready: 0, launching: 0 },
          liveViewers: () => liveView?.stats().viewers ?? 0,
          devtoolsClients: () => devtools?.clients() ?? 0,
          egressRefusals: () => launcher.egressRefusals?.() ?? 0,
          draining: () => browsers.draining,
        });
  let metricsListener: MetricsListener | undefined;
  if (metrics !== undefined) {
    app.addHook("onResponse", (request, reply, done) => {
      metrics.observeRequest(request.method, request.routeOptions.url, reply.statusCode);
      done();
    });
  }
  const telemetryOptions = options.telemetry ?? {};
  const telemetry = new TelemetryService({
    store: stores.telemetry,
    log: app.log,
    retentionMs: (telemetryOptions.retentionHours ?? DEFAULT_CONFIG.telemetryRetentionHours) * 3_600_000,
    maxEventsPerBrowser: telemetryOptions.maxEventsPerBrowser ?? DEFAULT_CONFIG.telemetryMaxEventsPerBrowser,
    maxEventsPerProject: telemetryOptions.maxEventsPerProject ?? DEFAULT_CONFIG.telemetryMaxEventsPerProject,
    maxCharsPerBrowser: telemetryOptions.maxBytesPerBrowser ?? DEFAULT_CONFIG.telemetryMaxBytesPerBrowser,
    maxCharsPerProject: telemetryOptions.maxBytesPerProject ?? DEFAULT_CONFIG.telemetryMaxBytesPerProject,
    ...(telemetryOptions.destinations === undefined ? {} : { destinations: telemetryOptions.destinations }),
    ...(telemetryOptions.flushMs === undefined ? {} : { flushMs: telemetryOptions.flushMs }),
    ...(telemetryOptions.sweepMs === undefined ? {} : { sweepMs: telemetryOptions.sweepMs }),
  });
  const browsers: BrowserService = new BrowserService(stores.browsers, launcher, planLimit, app.log, webmcp, {
    telemetry,
    ...(metrics === undefined ? {} : { observeCreate: (observation: CreateObservation) => metrics.observeCreate(observation) }),
    profiles: {
      maxBytes: profileStateBytes,
      save: (profile, state) => {
        if (profileStates === undefined) throw new Error("A browser ended before the secrets key was checked; its profile was not saved.");
        return profileStates.save(profile, state);
      },
      failed: async (profile, browserId, error) => profileStates?.failed(profile, browserId, error),
    },
    pool: warmPool,
    committed: () => openedStores.durable(),
    ...(options.browserTimeouts === undefined ? {} : { idle: options.browserTimeouts }),
    minFreeMemoryMib,
    ...(options.availableMemory === undefined ? {} : { availableMemory: options.availableMemory }),
  });
  let firstStart: FirstStart | undefined;
  let vault: SecretsVault | undefined;
  let peerCalls: PeerCalls | undefined;
  try {
    firstStart = await initializeOrganization(stores);
    const org = await stores.organizations.find();
    if (!org) throw new Error("The organization is missing right after its creation.");
    if (options.fixtures !== undefined) {
      const created = await loadFixtures(stores, org.id, readFixturesFile(options.fixtures));
      if (created.length > 0) app.log.info({ projects: created }, "created projects named by the fixtures");
    }
    await stores.extensions.removeUnreferencedArchives();
    await stores.profiles.removeUnreferencedSnapshots();
    const secretsKey = loadSecretsKey(layout.secretsKeyFile, options.secretsKey, (await stores.credentials.keyCheck()) === undefined);
    if (secretsKey.created) {
      app.log.warn(
        { file: secretsKey.source },
        "created the key that encrypts stored credentials; back it up, and give every node sharing the database the same key: without it they cannot be read",
      );
    }
    const previousKey = options.previousSecretsKey === undefined ? undefined : parseSecretsKey(options.previousSecretsKey, "--secrets-key-previous");
    const opening = await SecretsVault.open(stores.credentials, secretsKey.key, {
      previous: previousKey,
      source: secretsKey.source,
      resealAll: async (resealer) =>
        (await stores.profiles.resealAll((profile, sealed) => resealer.bytes(sealed, profileContext(profile.project_id, profile.id)))) +
        (await stores.credentials.resealAll((field) => resealer.text(field.sealed, credentialContext(field, field.column)))),
    });
    if (opening.resealed > 0) app.log.info({ resealed: opening.resealed }, "sealed every stored secret again with the new secrets key");
    if (opening.previousUnused) app.log.info("--secrets-key-previous is no longer needed: every stored secret is sealed with the current key");
    vault = opening.vault;
    profileStates = new ProfileStates(stores.profiles, vault, profileStateBytes);
    // Whether a login flow's browser still runs on a live node (a single server's flows end with it).
    const flowBrowserRunning = async (browserId: string) => {
      const row = await stores.browsers.findLaunched(browserId);
      return row !== undefined && row.status !== "crashed" && cluster !== undefined;
    };
    if (stores.nodes !== undefined) {
      cluster = new Cluster({
        nodeId,
        advertiseUrl: clusterOptions.advertiseUrl,
        peer,
        store: stores.nodes,
        warmReady: () => warmPool?.stats().ready ?? 0,
        ...(clusterOptions.leaseTtlMs === undefined ? {} : { leaseTtlMs: clusterOptions.leaseTtlMs }),
        log: app.log,
        leaseLost: () => browsers.endAll(),
        // A login flow of a node gone for good ends FAILED now, not at its expiry.
        reaped: async () => {
          const ended = await loginFlows?.recover(flowBrowserRunning);
          if (ended) app.log.warn({ count: ended }, "login flows of a lapsed node were ended");
        },
      });
      // Before the clean-up: another process running under the same node id would lose its browsers to it.
      await cluster.claim();
      await browsers.recoverAbandoned();
      await cluster.start();
    } else {
      await browsers.recoverAbandoned();
    }
    loginFlows = new LoginFlows({
      connections: stores.authConnections,
      browsers,
      credentials: stores.credentials,
      seals: new CredentialSeals(vault),
      profiles: stores.profiles,
      profileStates,
      log: app.log,
      flowSeconds: options.authFlowSeconds ?? DEFAULT_CONFIG.authFlowSeconds,
      telemetryDestinations: () => telemetry.destinationNames(),
    });
    // A flow whose browser is gone (this server stopped) ends FAILED, never stuck IN_PROGRESS.
    const flowsEnded = await loginFlows.recover(flowBrowserRunning);
    if (flowsEnded > 0) app.log.warn({ count: flowsEnded }, "login flows left running by a stopped server were ended");
    healthChecks = new HealthChecks({
      connections: stores.authConnections,
      browsers,
      profiles: stores.profiles,
      profileStates,
      flows: loginFlows,
      projectOf: async (projectId) => {
        const org = await stores.organizations.find();
        return org === undefined ? undefined : stores.projects.findById(org.id, projectId);
      },
      flowUrls: loginFlowUrls(browserUrls, {}),
      log: app.log,
      everySeconds: options.authCheckSeconds,
      telemetryDestinations: () => telemetry.destinationNames(),
    });
    // The first start's key is printed by the caller, outside any response.
    stores.flush();
    const leftOver = warmRecords.endLeftOver();
    if (leftOver > 0) app.log.warn({ count: leftOver }, "warm browsers left by a previous server process were ended");

    app.removeContentTypeParser("text/plain");
    installBodyReading(app);
    installRequestIdHeader(app);
    installDurableResponses(app, stores);
    installBodyIdleTimeout(app, (options.bodyIdleTimeoutSec ?? DEFAULT_CONFIG.bodyIdleTimeoutSec) * 1000);
    if (options.responseCheck) installResponseCheck(app, options.responseCheck);
    installErrorHandling(app);
    liveView = installLiveView(app, {
      telemetry,
      browsers,
      cluster,
      browserStore: stores.browsers,
      webmcp,
      rateLimits,
      limits: { ...DEFAULT_LIVE_VIEW_LIMITS, maxViewers: DEFAULT_CONFIG.liveViewMaxViewers, ...options.liveView },
    });
    // Other nodes' calls to this node's browsers, on one channel per node (nodes/peer-calls.ts).
    const leased = cluster;
    const calls =
      peer === undefined
        ? undefined
        : new PeerCalls({
            peerOf: (request) => leased?.verifiedPeer(request),
            maxBodyBytes: PEER_CALL_BODY_LIMIT,
            log: app.log,
            serving: () => leased?.holdsLease() ?? true,
          });
    peerCalls = calls;
    // Before the upgraded sockets hold the server open: open calls get the grace in-flight requests get.
    if (calls !== undefined) app.addHook("preClose", async () => await calls.close(SHUTDOWN_GRACE_MS));
    devtools = installCdpEndpoint(app, {
      telemetry,
      ...(metrics === undefined ? {} : { onBytes: (direction: "in" | "out", bytes: number) => metrics.observeDevtoolsBytes(direction, bytes) }),
      browsers,
      cluster,
      rateLimits,
      ownOrigins: () => ownOrigins(url ?? `http://${options.host ?? DEFAULT_CONFIG.host}:${options.port ?? DEFAULT_CONFIG.port}`, options.publicUrl),
      browserStore: stores.browsers,
      apiKeys: stores.apiKeys,
      limits: {
        maxClients: options.cdpLimits?.maxClients ?? DEFAULT_CONFIG.cdpMaxClients,
        maxMessageBytes: options.cdpLimits?.maxMessageBytes ?? DEFAULT_CONFIG.cdpMaxMessageBytes,
        maxBufferedBytes: options.cdpLimits?.maxBufferedBytes ?? DEFAULT_CONFIG.cdpMaxBufferedBytes,
        messageRate: options.cdpLimits?.messageRate ?? DEFAULT_CONFIG.cdpMessageRate,
        byteRate: options.cdpLimits?.byteRate ?? DEFAULT_CONFIG.cdpByteRate,
        projectMessageRate: options.cdpLimits?.projectMessageRate ?? DEFAULT_CONFIG.cdpProjectMessageRate,
        projectByteRate: options.cdpLimits?.projectByteRate ?? DEFAULT_CONFIG.cdpProjectByteRate,
        maxPending: options.cdpLimits?.maxPending ?? DEFAULT_CONFIG.cdpMaxPending,
        ...(options.cdpLimits?.clock === undefined ? {} : { clock: options.cdpLimits.clock }),
        ...(options.cdpLimits?.heartbeatMs === undefined ? {} : { heartbeatMs: options.cdpLimits.heartbeatMs }),
      },
    });
    upgrades = installUpgradeRouter(app, {
      routes: [...(calls === undefined ? [] : [calls.route]), liveView.route, devtools.route],
      // Another node's proof is checked once, before any route asks who sent the upgrade.
      // Its connection carries one client's relayed upgrade (counted under that client, as if
      // it had come here itself), or the nodes' channel (under none): never under the node's
      // address, which every client relayed from it would otherwise share.
      identify: async (request, socket) => {
        const sender = await cluster?.peerOf(request);
        return sender === undefined || connections?.countAs(socket as Socket, sender.client ?? "") !== false;
      },
    });
    const apiDeps: ApiDeps = {
      stores,
      vault,
      loginFlows,
      profileStates,
      browsers,
      webmcp,
      browserUrls,
      rateLimits,
      planLimit,
      projectsDisabled: options.projectsDisabled ?? DEFAULT_CONFIG.projectsDisabled,
      cluster,
      connections,
      peerCalls,
      observeInvocation: metrics === undefined ? undefined : (outcome) => metrics.observeInvocation(outcome),
      telemetry,
    };
    await registerApi(app, apiDeps);
    registerHostedLoginRoutes(app, {
      hosted: hostedAccess,
      rateLimits,
      loginFlows,
      forwardSubmit: (request, reply, projectId, connectionId) => forwardToFlow(apiDeps, request, reply, projectId, connectionId, "submitAuthConnection"),
    });
    registerHealthRoutes(app, {
      draining: () => browsers.draining,
      readDatabase: () => stores.organizations.find(),
      browsersUnavailable: async () => launcher.unavailable?.(),
      memoryLow: () => browsers.memoryLow(),
    });
    await app.ready();
    // Last, so that a failed start leaves no browser behind.
    warmPool?.start();
  } catch (error) {
    await telemetry.stop();
    await cluster?.stop().catch((stopError: unknown) => app.log.error({ err: stopError }, "could not give up the lease of a node that failed to start"));
    await stores.close();
    releaseDataDir();
    throw error;
  }

  let closing: Promise<void> | undefined;
  let answering: Promise<number> = Promise.resolve(0);
  return {
    app,
    firstStart,
    get url() {
      if (url === undefined) throw new Error("The server is not listening yet; await listen() first.");
      return url;
    },
    get metricsUrl() {
      return metricsListener?.url;
    },
    async listen() {
      url = await app.listen({ host: options.host ?? DEFAULT_CONFIG.host, port: options.port ?? DEFAULT_CONFIG.port });
      if (metrics !== undefined && options.metrics !== undefined) {
        metricsListener = await MetricsListener.start(metrics, options.metrics.host ?? DEFAULT_CONFIG.metricsHost, options.metrics.port);
      }
      // Checks start with the listener: a re-authentication's live view URL names its address.
      healthChecks?.start(options.authCheckSeconds === undefined ? 5_000 : Math.max(200, options.authCheckSeconds * 500));
      return url;
    },
    issueApiKey: (project) => issueApiKey(openedStores, project),
    answerKeyRequests: () => {
      // One run at a time: two signals close together must not both answer the same request.
      const run = answering.then(() => answerKeyRequests(layout, (project) => issueApiKey(openedStores, project), app.log));
      answering = run.catch(() => 0);
      return run;
    },
    warmPoolStats: () => warmPool?.stats() ?? { ready: 0, launching: 0, taken: 0 },
    webmcpSnapshotBuilds: () => webmcp.snapshotBuilds(),
    liveViewStats: () => liveView?.stats() ?? { viewers: 0, screencasts: 0, places: 0 },
    async drain(seconds, signal) {
      await browsers.drain();
      // Another node checks the connections now: a check starts a browser, which this one no longer does.
      await healthChecks?.stop();
      await cluster?.drain();
      const left = () => {
        const counts = browsers.counts();
        return counts.running + counts.starting;
      };
      const until = Date.now() + seconds * 1000;
      while (left() > 0 && Date.now() < until && signal?.aborted !== true) {
        // Each wait takes its abort listener away when it ends: a long drain adds none up.
        await sleep(Math.min(DRAIN_POLL_MS, Math.max(0, until - Date.now())), undefined, signal === undefined ? {} : { signal }).catch((error: unknown) => {
          // Aborted: the drain is cut short, which the loop's condition sees.
          if ((error as Error).name !== "AbortError") throw error;
        });
      }
      return left();
    },
    close() {
      closing ??= (async () => {
        try {
          // In-flight requests get a grace period; one that is stuck must not hold the
          // browsers and the database open, so its connection is then closed.
          const stopped = app.close();
          await metricsListener?.close();
          let grace: NodeJS.Timeout | undefined;
          const graceOver = new Promise<"over">((resolve) => (grace = setTimeout(() => resolve("over"), SHUTDOWN_GRACE_MS)));
          if ((await Promise.race([stopped.then(() => "stopped" as const), graceOver])) === "over") {
            app.log.warn({ graceMs: SHUTDOWN_GRACE_MS }, "requests still in flight at shutdown; closing their connections");
            app.server.closeAllConnections();
            upgrades?.closePlainConnections();
            // Whatever still holds the listener, the browsers and the database are closed.
            let late: NodeJS.Timeout | undefined;
            const lateOver = new Promise<"late">((resolve) => (late = setTimeout(() => resolve("late"), SHUTDOWN_GRACE_MS)));
            if ((await Promise.race([stopped.then(() => "stopped" as const), lateOver])) === "late")
              app.log.error("the HTTP listener did not close after its connections were; closing the browsers and the database anyway");
            clearTimeout(late);
          }
          clearTimeout(grace);
          try {
            await healthChecks?.stop();
            await loginFlows?.stopAll();
            await browsers.closeAll();
            await telemetry.stop();
            await launcher.close?.();
          } finally {
            await cluster?.stop();
          }
        } finally {
          try {
            await openedStores.close();
          } finally {
            releaseDataDir();
          }
        }
      })();
      return closing;
    },
  };
}
