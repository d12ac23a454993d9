import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { CreateObservation } from "../browsers/browser-service.js";

/** What the metrics read of the server at each scrape. */
export interface MetricsSources {
  browsers: () => { running: number; starting: number };
  warmPool: () => { ready: number; launching: number };
  liveViewers: () => number;
  /** DevTools client connections open now. */
  devtoolsClients: () => number;
  /** Destinations the browsers' egress was refused, in all since the start. */
  egressRefusals: () => number;
  /** Whether the server drains (SIGTERM with `--drain-seconds`). */
  draining: () => boolean;
}

// Seconds a create takes: a warm one answers in tens of milliseconds, a cold one in one
// to a few seconds, one waiting on a busy host up to its timeout.
// Methods an HTTP API is asked with; Node parses some thirty more (PROPFIND, MKCOL...), each of which is `other`.
const HTTP_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

const CREATE_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32];

/**
 * The server's numbers in the Prometheus text format: its browsers by state, creates by
 * outcome and their time (warm and cold), the warm pool, live view viewers, DevTools
 * clients and bytes, WebMCP invocations by outcome, egress refusals, HTTP requests by route template and status, and the
 * process's own (CPU, memory, event loop). Labels
 * carry no tenant's data: routes are templates (`/browsers/:id_or_name`), never paths.
 */
export class ServerMetrics {
  readonly registry = new Registry();
  readonly #creates: Counter<"outcome">;
  readonly #createSeconds: Histogram<"start">;
  readonly #requests: Counter<"method" | "route" | "status">;
  readonly #devtoolsBytes: Counter<"direction">;
  readonly #invocations: Counter<"outcome">;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: "browser_service_browsers",
      help: "Browsers this server runs, by state.",
      labelNames: ["state"],
      registers,
      collect() {
        const counts = sources.browsers();
        this.set({ state: "running" }, counts.running);
        this.set({ state: "starting" }, counts.starting);
      },
    });
    new Gauge({
      name: "browser_service_warm_browsers",
      help: "Browsers of the warm pool, launched ahead of creates, by state.",
      labelNames: ["state"],
      registers,
      collect() {
        const pool = sources.warmPool();
        this.set({ state: "ready" }, pool.ready);
        this.set({ state: "launching" }, pool.launching);
      },
    });
    new Gauge({
      name: "browser_service_live_view_viewers",
      help: "People watching a browser's live view now.",
      registers,
      collect() {
        this.set(sources.liveViewers());
      },
    });
    new Gauge({
      name: "browser_service_draining",
      help: "1 while the server drains (it takes no new browsers before it stops), else 0.",
      registers,
      collect() {
        this.set(sources.draining() ? 1 : 0);
      },
    });
    new Gauge({
      name: "browser_service_devtools_clients",
      help: "DevTools client connections open now (cdp_ws_url), over every browser.",
      registers,
      collect() {
        this.set(sources.devtoolsClients());
      },
    });
    this.#devtoolsBytes = new Counter({
      name: "browser_service_devtools_bytes_total",
      help: "Bytes of DevTools messages, by direction: in (from clients) or out (to clients).",
      labelNames: ["direction"],
      registers,
    });
    this.#invocations = new Counter({
      name: "browser_service_webmcp_invocations_total",
      help: "WebMCP invocations run on this server, by outcome: the result's status (completed, canceled, error, awaiting_submission), outcome_unknown, refused (before it ran) or failed.",
      labelNames: ["outcome"],
      registers,
    });
    let refusalsSeen = 0;
    new Counter({
      name: "browser_service_egress_refusals_total",
      help: "Connections the browsers' egress refused: to loopback, private, link-local or special-purpose addresses, or this host's.",
      registers,
      collect() {
        const now = sources.egressRefusals();
        this.inc(now - refusalsSeen);
        refusalsSeen = now;
      },
    });
    this.#creates = new Counter({
      name: "browser_service_browser_creates_total",
      help: "Browser creates, by outcome: created, refused (a 4xx answer) or failed (a 5xx answer).",
      labelNames: ["outcome"],
      registers,
    });
    this.#createSeconds = new Histogram({
      name: "browser_service_browser_create_seconds",
      help: "Time of the creates that started a browser, by start: warm (taken from the pool) or cold (launched for it).",
      labelNames: ["start"],
      buckets: CREATE_BUCKETS,
      registers,
    });
    this.#requests = new Counter({
      name: "browser_service_http_requests_total",
      help: "HTTP requests answered, by method, route template and status.",
      labelNames: ["method", "route", "status"],
      registers,
    });
  }

  /** Counts a create's end (see `BrowserService`). */
  observeCreate(observation: CreateObservation): void {
    this.#creates.inc({ outcome: observation.outcome });
    if (observation.outcome === "created" && observation.start !== undefined) this.#createSeconds.observe({ start: observation.start }, observation.seconds);
  }

  /** Counts how a WebMCP invocation run here ended. */
  observeInvocation(outcome: string): void {
    this.#invocations.inc({ outcome });
  }

  /** Counts the bytes of a DevTools message, from a client (`in`) or to one (`out`). */
  observeDevtoolsBytes(direction: "in" | "out", bytes: number): void {
    this.#devtoolsBytes.inc({ direction }, bytes);
  }

  /** Counts an answered request; `route` is its template, `unrouted` when none matched. */
  observeRequest(method: string, route: string | undefined, status: number): void {
    this.#requests.inc({ method: HTTP_METHODS.has(method) ? method : "other", route: route ?? "unrouted", status: String(status) });
  }
}

/** Connections the metrics' listener holds at once; more are closed as they arrive. */
export const METRICS_MAX_CONNECTIONS = 64;
/** How long a scraper may take to send its request's headers. */
const METRICS_HEADERS_MS = 5_000;

/**
 * The metrics' own listener, apart from the API (an operator keeps it on a private
 * address): `GET /metrics`, and `404` for anything else.
 */
export class MetricsListener {
  readonly #server: Server;

  private constructor(server: Server) {
    this.#server = server;
  }

  /** Listens on `host`:`port` (`0`: a free port). */
  static async start(metrics: ServerMetrics, host: string, port: number): Promise<MetricsListener> {
    // A scraper asks once every few seconds: a few connections, and headers sent at once.
    // Past these bounds a client holding connections costs the process no more handles.
    const server = createServer({ connectionsCheckingInterval: 1_000, headersTimeout: METRICS_HEADERS_MS, requestTimeout: 10_000 }, (request, response) => {
      if (request.method !== "GET" || request.url !== "/metrics") {
        response.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("Only GET /metrics is served here.\n");
        return;
      }
      metrics.registry
        .metrics()
        .then(
          (text) => response.writeHead(200, { "content-type": metrics.registry.contentType, "cache-control": "no-store" }).end(text),
          (error: unknown) =>
            response.writeHead(500, { "content-type": "text/plain; charset=utf-8" }).end(`The metrics could not be read: ${(error as Error).message}\n`),
        )
        // A scraper gone mid-answer must not become an unhandled rejection, which would end the process.
        .catch(() => response.destroy());
    });
    server.maxConnections = METRICS_MAX_CONNECTIONS;
    server.keepAliveTimeout = 5_000;
    server.listen(port, host);
    await once(server, "listening");
    return new MetricsListener(server);
  }

  /** The URL of `GET /metrics`. */
  get url(): string {
    const { address, port } = this.#server.address() as AddressInfo;
    return `http://${address.includes(":") ? `[${address}]` : address}:${port}/metrics`;
  }

  async close(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
