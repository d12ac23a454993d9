import type { TelemetryEvent } from "@browser-service/types";
import { createNoopMeter, type Meter, type MeterProvider } from "@opentelemetry/api";
import { type Logger, type LogRecord, SeverityNumber } from "@opentelemetry/api-logs";
import { OTLPLogExporter } from "@opentelemetry/exporter-logs-otlp-http";
import { defaultResource, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchLogRecordProcessor, LoggerProvider, type LogRecordExporter, type ReadableLogRecord } from "@opentelemetry/sdk-logs";
import type { ServerLog } from "../observe/server-log.js";

/** An operator-configured OTLP destination. `endpoint` is the full URL logs are POSTed to, e.g. `http://127.0.0.1:4318/v1/logs`. */
export interface OtlpDestination {
  /** The destination's id. */
  id: string;
  /** The destination's name, for the operator's logs. */
  name: string;
  /** The full URL the OTLP/HTTP JSON log requests are POSTed to. */
  endpoint: string;
  /** HTTP headers sent with every request, e.g. `authorization`. */
  headers: Readonly<Record<string, string>>;
}

/** One event to export with where it came from. */
export interface ExportedEvent {
  /** The browser the event happened in. */
  browserId: string;
  /** The browser's project. */
  projectId: string;
  /** The event's sequence number in the browser's telemetry. */
  seq: number;
  /** The event itself. */
  event: TelemetryEvent;
}

/** How an {@link OtlpExport} batches, bounds and reports its work. */
export interface OtlpExportOptions {
  /** Where export failures and drops are reported, at most once a minute. */
  log: Pick<ServerLog, "warn" | "error">;
  /** Events that may wait to be sent; past it new events are dropped. Default 10 000. */
  maxQueued?: number;
  /** Events per OTLP request. Default 512. */
  maxBatch?: number;
  /** How long events wait for a batch to fill before it is sent anyway, in ms. Default 1000. */
  delayMs?: number;
  /** How long one export (its retries included) may take, in ms. Default 10 000. */
  timeoutMs?: number;
}

/** The `resource` every exported record carries. */
export const SERVICE_NAME = "browser-service";

const SCOPE_NAME = "@browser-service/server/telemetry";

// A collector that is down fails every batch; one line a minute says so without flooding the log.
const REPORT_EVERY_MS = 60_000;

// The OTLP exporter runs each batch on its own promise; a batch still retrying when the
// processor's timeout gives up on it keeps running beside the next one. This caps how many
// such batches (and so how much memory beyond the queue) one destination holds.
const MAX_EXPORTS_AT_ONCE = 4;

// The batch processor reports records it turns away on a full queue only through its
// self-observability meter (semantic conventions' otel.sdk.processor.log.processed with
// error.type "queue_full"): there is no other public way to see them.
const PROCESSED_METRIC = "otel.sdk.processor.log.processed";
const QUEUE_FULL = "queue_full";

type ExportResult = Parameters<Parameters<LogRecordExporter["export"]>[1]>[0];

// ExportResultCode.SUCCESS of @opentelemetry/core, which is not a direct dependency.
const EXPORT_SUCCESS = 0;

const ERROR_TYPES = new Set(["console_error", "service_crashed", "system_oom_kill"]);

/**
 * Browser telemetry sent to one OTLP destination as OpenTelemetry log records over
 * OTLP/HTTP (JSON). Events wait in a bounded queue and go out in batches; a collector that
 * fails, cannot be reached or never answers costs dropped events, counted in
 * {@link OtlpExport.dropped}, never an exception, a blocked caller or unbounded memory.
 */
export class OtlpExport {
  readonly #destination: OtlpDestination;
  readonly #log: Pick<ServerLog, "warn" | "error">;
  readonly #provider: LoggerProvider;
  readonly #logger: Logger;
  // A flush can outlast its bound, still sending in the background; later calls wait at most this long.
  readonly #settleMs: number;
  #dropped = 0;
  #unreported = 0;
  #reportedAt = Number.NEGATIVE_INFINITY;
  #closed = false;
  // Flushes run one after another: the processor returns at once from a flush asked for during another.
  #flushes: Promise<void> = Promise.resolve();
  #shutdown: Promise<void> | undefined;

  /**
   * Sets up the export to `destination`; nothing is sent until events are pushed.
   *
   * @throws TypeError when `destination.endpoint` is not an http: or https: URL.
   */
  constructor(destination: OtlpDestination, options: OtlpExportOptions) {
    const endpoint = URL.parse(destination.endpoint);
    if (endpoint === null || (endpoint.protocol !== "http:" && endpoint.protocol !== "https:")) {
      throw new TypeError(`The OTLP destination ${destination.id} has no http: or https: endpoint.`);
    }
    this.#destination = destination;
    this.#log = options.log;
    const maxQueued = options.maxQueued ?? 10_000;
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.#settleMs = 2 * timeoutMs;
    // Everything the exporter would otherwise take from the process-wide OTEL_EXPORTER_OTLP_*
    // variables is given here, so that a destination is sent to as its operator configured it.
    // (Those variables' headers are still merged under `headers`: the exporter offers no way out.)
    const exporter = new OTLPLogExporter({
      url: endpoint.href,
      headers: { ...destination.headers },
      timeoutMillis: timeoutMs,
      concurrencyLimit: MAX_EXPORTS_AT_ONCE,
      httpAgentOptions: { keepAlive: true },
    });
    const processor = new BatchLogRecordProcessor({
      exporter: new CountingExporter(exporter, (count, error) => this.#lose(count, "the OTLP destination did not take a batch of telemetry", error)),
      maxQueueSize: maxQueued,
      maxExportBatchSize: Math.min(options.maxBatch ?? 512, maxQueued),
      scheduledDelayMillis: options.delayMs ?? 1000,
      exportTimeoutMillis: timeoutMs,
      selfObsMeterProvider: queueFullListener((count) => this.#lose(count, "the OTLP export queue is full; new telemetry is dropped")),
    });
    this.#provider = new LoggerProvider({
      resource: defaultResource().merge(resourceFromAttributes({ "service.name": SERVICE_NAME })),
      processors: [processor],
    });
    this.#logger = this.#provider.getLogger(SCOPE_NAME);
  }

  /** Queues events; never blocks and never throws. Past `maxQueued` waiting, new events are dropped and counted. */
  push(events: readonly ExportedEvent[]): void {
    if (this.#closed) {
      this.#dropped += events.length;
      return;
    }
    for (const event of events) {
      try {
        this.#logger.emit(logRecord(event));
      } catch (error) {
        // `data` JSON cannot write (a BigInt, a cycle) must not stop the events after it.
        this.#lose(1, "could not turn a telemetry event into an OTLP log record", error, "error");
      }
    }
  }

  /** Events dropped: queue full, given up after the bounded retries, or pushed after shutdown. */
  get dropped(): number {
    return this.#dropped;
  }

  /**
   * Sends what is queued now. Settles within about twice `timeoutMs`; what a failing
   * collector has not taken by then is still sent, or dropped and counted, in the background.
   */
  flush(): Promise<void> {
    if (this.#closed) return this.#shutdown ?? Promise.resolve();
    this.#flushes = this.#flushes.then(() => this.#flushNow());
    return this.#flushes;
  }

  /** Flushes, then stops; later pushes are dropped and counted. Settles like {@link OtlpExport.flush}. */
  shutdown(): Promise<void> {
    if (this.#shutdown !== undefined) return this.#shutdown;
    this.#closed = true;
    this.#shutdown = this.#flushes.then(() => withinMs(this.#provider.shutdown(), this.#settleMs));
    return this.#shutdown;
  }

  async #flushNow(): Promise<void> {
    // Past the bound the processor keeps going on its own; what it gives up on is counted by the exporter.
    await this.#provider.forceFlush({ timeoutMillis: this.#settleMs }).catch(() => undefined);
  }

  #lose(count: number, message: string, error?: unknown, level: "warn" | "error" = "warn"): void {
    this.#dropped += count;
    this.#unreported += count;
    const now = Date.now();
    if (now - this.#reportedAt < REPORT_EVERY_MS) return;
    this.#reportedAt = now;
    const details = {
      destination: this.#destination.id,
      destinationName: this.#destination.name,
      droppedSinceLastReport: this.#unreported,
      dropped: this.#dropped,
      ...(error === undefined ? {} : { reason: describe(error) }),
    };
    this.#unreported = 0;
    this.#log[level](details, `${message} (reported at most once a minute per destination)`);
  }
}

/** The exporter, counting the records of every batch whose export finally failed. */
class CountingExporter implements LogRecordExporter {
  readonly #exporter: LogRecordExporter;
  readonly #onFailed: (count: number, error: unknown) => void;

  constructor(exporter: LogRecordExporter, onFailed: (count: number, error: unknown) => void) {
    this.#exporter = exporter;
    this.#onFailed = onFailed;
  }

  export(logs: ReadableLogRecord[], resultCallback: (result: ExportResult) => void): void {
    try {
      this.#exporter.export(logs, (result) => {
        if (result.code !== EXPORT_SUCCESS) this.#onFailed(logs.length, result.error);
        resultCallback(result);
      });
    } catch (error) {
      this.#onFailed(logs.length, error);
      throw error;
    }
  }

  forceFlush(): Promise<void> {
    return this.#exporter.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.#exporter.shutdown();
  }
}

/** A meter provider whose meters do nothing but pass on the processor's count of records turned away on a full queue. */
function queueFullListener(onQueueFull: (count: number) => void): MeterProvider {
  const noop = createNoopMeter();
  const meter: Meter = Object.create(noop);
  meter.createCounter = (name, options) => {
    if (name !== PROCESSED_METRIC) return noop.createCounter(name, options);
    return {
      add(value, attributes) {
        if (attributes?.["error.type"] === QUEUE_FULL) onQueueFull(value);
      },
    };
  };
  return { getMeter: () => meter };
}

function logRecord({ browserId, projectId, seq, event }: ExportedEvent): LogRecord {
  const [severityNumber, severityText] = severity(event);
  return {
    eventName: event.type,
    timestamp: hrTime(event.ts),
    severityNumber,
    severityText,
    body: event.data === undefined ? "" : JSON.stringify(event.data),
    attributes: {
      "event.name": event.type,
      "browser.id": browserId,
      "project.id": projectId,
      "browser.telemetry.category": event.category,
      "browser.telemetry.seq": seq,
      "browser.telemetry.source.kind": event.source.kind,
      ...(event.source.event === undefined ? {} : { "browser.telemetry.source.event": event.source.event }),
      ...(event.truncated === true ? { "browser.telemetry.truncated": true } : {}),
    },
  };
}

function severity(event: TelemetryEvent): [SeverityNumber, string] {
  if (ERROR_TYPES.has(event.type)) return [SeverityNumber.ERROR, "ERROR"];
  if (event.type === "console_log" && event.data?.["level"] === "warning") return [SeverityNumber.WARN, "WARN"];
  return [SeverityNumber.INFO, "INFO"];
}

// A timestamp in milliseconds would be a float losing the microseconds; [seconds, nanoseconds] keeps them exact.
function hrTime(micros: number): [number, number] {
  const seconds = Math.floor(micros / 1_000_000);
  return [seconds, Math.round((micros - seconds * 1_000_000) * 1000)];
}

function describe(error: unknown): string {
  // OTLPExporterError carries the collector's whole response body; the status and message say enough.
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return `${code === undefined ? "" : `${String(code)} `}${message}`.slice(0, 300);
}

function withinMs(work: Promise<void>, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    timer.unref();
    work.then(
      () => (clearTimeout(timer), resolve()),
      () => (clearTimeout(timer), resolve()),
    );
  });
}
