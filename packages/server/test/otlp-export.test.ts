import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ExportedEvent, OtlpExport, type OtlpExportOptions } from "../src/telemetry/otlp-export.js";

/** How the receiver answers a POST to /v1/logs. */
type Answer = "ok" | "fail" | "unavailable-once" | "hang";

interface Received {
  headers: IncomingHttpHeaders;
  /** The OTLP JSON request, parsed. */
  body: any;
}

/** A local OTLP/HTTP logs receiver on 127.0.0.1 that records what is POSTed to /v1/logs. */
async function receiver(answer: Answer) {
  const requests: Received[] = [];
  const hanging: ServerResponse[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/v1/logs") {
        res.writeHead(404).end();
        return;
      }
      requests.push({ headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) });
      if (answer === "hang") hanging.push(res);
      else if (answer === "fail") res.writeHead(500, { "content-type": "text/plain" }).end("broken");
      else if (answer === "unavailable-once" && requests.length === 1) res.writeHead(503).end();
      else res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const { port } = server.address() as AddressInfo;
  return { requests, endpoint: `http://127.0.0.1:${port}/v1/logs` };
}

/** An endpoint on a port nothing listens on: one just closed. */
async function closedEndpoint(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return `http://127.0.0.1:${port}/v1/logs`;
}

const servers: Server[] = [];
const opened: OtlpExport[] = [];

afterEach(async () => {
  await Promise.all(opened.splice(0).map((e) => e.shutdown()));
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

function fakeLog() {
  return { warn: vi.fn(), error: vi.fn() };
}

function otlpExport(endpoint: string, options: Partial<OtlpExportOptions> = {}, headers: Record<string, string> = {}) {
  const exporter = new OtlpExport({ id: "dest_1", name: "collector", endpoint, headers }, { log: fakeLog(), ...options });
  opened.push(exporter);
  return exporter;
}

function event(seq: number, overrides: Partial<ExportedEvent["event"]> = {}): ExportedEvent {
  return {
    browserId: "br_1",
    projectId: "proj_1",
    seq,
    event: { category: "console", type: "console_log", ts: 1_752_000_000_000_000 + seq, source: { kind: "cdp" }, data: { text: `line ${seq}` }, ...overrides },
  };
}

/** The log records of every request, in arrival order. */
function records(requests: Received[]): any[] {
  return requests.flatMap((r) => r.body.resourceLogs.flatMap((rl: any) => rl.scopeLogs.flatMap((sl: any) => sl.logRecords)));
}

/** A record's attributes as a plain object. */
function attributes(record: any): Record<string, unknown> {
  return Object.fromEntries(record.attributes.map((a: any) => [a.key, Object.values(a.value)[0]]));
}

describe("OtlpExport", () => {
  it("sends each event as an OTLP log record with its time, severity, body, attributes, resource and the destination's headers", async () => {
    const collector = await receiver("ok");
    const exporter = otlpExport(collector.endpoint, { delayMs: 60_000 }, { authorization: "Bearer secret-token" });
    exporter.push([
      {
        browserId: "br_7",
        projectId: "proj_3",
        seq: 41,
        event: {
          category: "console",
          type: "console_log",
          ts: 1_752_000_123_456_789,
          source: { kind: "cdp", event: "Runtime.consoleAPICalled" },
          data: { level: "warning", text: "low disk" },
          truncated: true,
        },
      },
      {
        browserId: "br_7",
        projectId: "proj_3",
        seq: 42,
        event: { category: "console", type: "console_error", ts: 1_752_000_123_456_790, source: { kind: "kernel_api" } },
      },
      event(43),
    ]);
    await exporter.flush();

    expect(collector.requests).toHaveLength(1);
    const [request] = collector.requests;
    expect(request!.headers["authorization"]).toBe("Bearer secret-token");
    expect(request!.headers["content-type"]).toBe("application/json");
    const resource = Object.fromEntries(request!.body.resourceLogs[0].resource.attributes.map((a: any) => [a.key, a.value.stringValue]));
    expect(resource["service.name"]).toBe("browser-service");

    const [warning, error, info] = records(collector.requests);
    // 1 752 000 123 456 789 µs, exactly, in nanoseconds.
    expect(warning.timeUnixNano).toBe("1752000123456789000");
    expect(warning).toMatchObject({ eventName: "console_log", severityNumber: 13, severityText: "WARN" });
    expect(JSON.parse(warning.body.stringValue)).toEqual({ level: "warning", text: "low disk" });
    expect(attributes(warning)).toEqual({
      "event.name": "console_log",
      "browser.id": "br_7",
      "project.id": "proj_3",
      "browser.telemetry.category": "console",
      "browser.telemetry.seq": 41,
      "browser.telemetry.source.kind": "cdp",
      "browser.telemetry.source.event": "Runtime.consoleAPICalled",
      "browser.telemetry.truncated": true,
    });

    expect(error.timeUnixNano).toBe("1752000123456790000");
    expect(error).toMatchObject({ eventName: "console_error", severityNumber: 17, severityText: "ERROR", body: { stringValue: "" } });
    expect(attributes(error)).toEqual({
      "event.name": "console_error",
      "browser.id": "br_7",
      "project.id": "proj_3",
      "browser.telemetry.category": "console",
      "browser.telemetry.seq": 42,
      "browser.telemetry.source.kind": "kernel_api",
    });

    expect(info).toMatchObject({ eventName: "console_log", severityNumber: 9, severityText: "INFO", body: { stringValue: '{"text":"line 43"}' } });
    expect(exporter.dropped).toBe(0);
  });

  it("sends a batch again after the collector answers 503", async () => {
    const collector = await receiver("unavailable-once");
    // The exporter's first retry waits about a second (±20 %), which must fit in the export's time.
    const exporter = otlpExport(collector.endpoint, { delayMs: 60_000, timeoutMs: 3000 });
    exporter.push([event(1), event(2)]);
    await exporter.flush();
    expect(collector.requests).toHaveLength(2);
    expect(records(collector.requests.slice(1)).map((r) => attributes(r)["browser.telemetry.seq"])).toEqual([1, 2]);
    expect(exporter.dropped).toBe(0);
  });

  describe.each([
    ["answers 500", async () => (await receiver("fail")).endpoint],
    ["cannot be reached", closedEndpoint],
    ["never answers", async () => (await receiver("hang")).endpoint],
  ])("when the collector %s", (_, endpoint) => {
    it("never throws, settles flush, bounds the queue and counts every lost event, logging once", async () => {
      const log = fakeLog();
      const maxQueued = 4;
      const maxBatch = 2;
      const timeoutMs = 200;
      const exporter = otlpExport(await endpoint(), { log, maxQueued, maxBatch, delayMs: 20, timeoutMs });
      const events = Array.from({ length: 3 * maxQueued }, (_, i) => event(i));
      expect(() => exporter.push(events)).not.toThrow();
      // At most one batch is out and maxQueued wait; the rest are turned away at once.
      expect(exporter.dropped).toBeGreaterThanOrEqual(events.length - maxQueued - maxBatch);

      const started = performance.now();
      await exporter.flush();
      expect(performance.now() - started).toBeLessThan(2 * timeoutMs + 1000);
      expect(exporter.dropped).toBeGreaterThanOrEqual(2 * maxQueued);
      // Every event is lost in the end, each counted once.
      await expect.poll(() => exporter.dropped, { timeout: 5000 }).toBe(events.length);

      expect(() => exporter.push([event(100), event(101)])).not.toThrow();
      await exporter.flush();
      await expect.poll(() => exporter.dropped, { timeout: 5000 }).toBe(events.length + 2);
      // Many failures, one line: the next may come a minute later.
      expect(log.warn).toHaveBeenCalledTimes(1);
      expect(log.warn.mock.calls[0]![0]).toMatchObject({ destination: "dest_1", destinationName: "collector" });
      expect(log.error).not.toHaveBeenCalled();
    });
  });

  it("stops waiting on a collector that never answers after about twice timeoutMs, however many batches wait", async () => {
    const collector = await receiver("hang");
    const exporter = otlpExport(collector.endpoint, { maxQueued: 20, maxBatch: 2, delayMs: 60_000, timeoutMs: 200 });
    exporter.push(Array.from({ length: 20 }, (_, i) => event(i)));
    // Ten batches one after another would take 2 s.
    const started = performance.now();
    await exporter.flush();
    expect(performance.now() - started).toBeLessThan(1500);
    expect(collector.requests.length).toBeGreaterThan(0);
    await exporter.shutdown();
    expect(performance.now() - started).toBeLessThan(2500);
  });

  it("drops and counts events pushed after shutdown, and sends nothing more", async () => {
    const collector = await receiver("ok");
    const exporter = otlpExport(collector.endpoint, { delayMs: 60_000 });
    exporter.push([event(1)]);
    await exporter.shutdown();
    expect(records(collector.requests)).toHaveLength(1);
    expect(() => exporter.push([event(2), event(3)])).not.toThrow();
    await exporter.flush();
    await exporter.shutdown();
    expect(exporter.dropped).toBe(2);
    expect(records(collector.requests)).toHaveLength(1);
  });

  it("drops and counts an event whose data cannot be written as JSON, and sends the others", async () => {
    const collector = await receiver("ok");
    const log = fakeLog();
    const exporter = otlpExport(collector.endpoint, { log, delayMs: 60_000 });
    expect(() => exporter.push([event(1, { data: { size: 1n } }), event(2)])).not.toThrow();
    await exporter.flush();
    expect(exporter.dropped).toBe(1);
    expect(log.error).toHaveBeenCalledTimes(1);
    expect(records(collector.requests).map((r) => attributes(r)["browser.telemetry.seq"])).toEqual([2]);
  });

  it("refuses an endpoint that is not an http: or https: URL", () => {
    expect(() => otlpExport("ftp://127.0.0.1/v1/logs")).toThrow(TypeError);
    expect(() => otlpExport("not a url")).toThrow(TypeError);
  });
});
