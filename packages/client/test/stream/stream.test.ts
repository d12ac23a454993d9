import type { ServerResponse } from "node:http";
import type { ManagedAuthEvent } from "@browser-service/types";
import { afterEach, describe, expect, it } from "vitest";
import { APITimeoutError, APIUserAbortError, ConflictError, createClient } from "../../src/index.js";
import { type SeenRequest, useTestServer } from "../helpers/test-server.js";
import { testOptions, transports } from "../helpers/transports.js";

const server = useTestServer();

const state = (flow_status: string): ManagedAuthEvent =>
  ({ event: "managed_auth_state", flow_status, flow_step: "COMPLETED", timestamp: "2026-11-02T10:02:41Z" }) as ManagedAuthEvent;
const frame = (event: ManagedAuthEvent) => `data: ${JSON.stringify(event)}\n\n`;

/** The events of a stream, read up to `count` of them (the stream may stay open). */
async function readEvents(stream: ReadableStream<Uint8Array<ArrayBuffer>>, count: number): Promise<ManagedAuthEvent[]> {
  const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const events: ManagedAuthEvent[] = [];
  while (events.length < count) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    for (let end = text.indexOf("\n\n"); end >= 0; end = text.indexOf("\n\n")) {
      events.push(JSON.parse(text.slice("data: ".length, end)) as ManagedAuthEvent);
      text = text.slice(end + 2);
    }
  }
  reader.releaseLock();
  return events;
}

// Responses the tests left open, ended after each test.
const open: ServerResponse[] = [];
afterEach(() => {
  for (const response of open.splice(0)) response.end();
});

/** A route that sends the headers and the first event at once, and keeps the stream open. */
const openStream = (onOpen?: (response: ServerResponse) => void) => (_: SeenRequest, response: ServerResponse) => {
  response.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  response.write(frame(state("IN_PROGRESS")));
  open.push(response);
  onOpen?.(response);
};

describe.each(transports)("an event stream over the %s", (_, transport) => {
  const client = (extra = {}) => createClient(testOptions(server.url, { ...transport, ...extra }));

  it("resolves at the headers and hands over each event as it arrives", async () => {
    let sendMore: (() => void) | undefined;
    server.route(
      "GET",
      "/auth/connections/conn_1/events",
      openStream((response) => (sendMore = () => response.end(frame(state("SUCCESS"))))),
    );
    const stream = await client().authConnections.follow("conn_1");
    expect(stream).toBeInstanceOf(ReadableStream);
    const reader = stream.pipeThrough(new TextDecoderStream()).getReader();
    // The first event arrives while the server still holds the stream open.
    expect((await reader.read()).value).toBe(frame(state("IN_PROGRESS")));
    sendMore!();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) rest += chunk.value;
    expect(rest).toBe(frame(state("SUCCESS")));
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual(["GET /auth/connections/conn_1/events"]);
  });

  it("reads a whole stream that the server ends", async () => {
    server.route("GET", "/auth/connections/conn_1/events", {
      headers: { "content-type": "text/event-stream" },
      body: frame(state("IN_PROGRESS")) + frame({ event: "sse_heartbeat", timestamp: "2026-11-02T10:01:27Z" }) + frame(state("FAILED")),
    });
    const events = await readEvents(await client().authConnections.follow("conn_1"), 10);
    expect(events.map((e) => e.event)).toEqual(["managed_auth_state", "sse_heartbeat", "managed_auth_state"]);
  });

  it("delivers every byte of a long stream to a slow reader", async () => {
    const events = Array.from({ length: 2000 }, (_, i) => frame({ event: "sse_heartbeat", timestamp: `2026-11-02T10:01:27.${i}Z` }));
    server.route("GET", "/auth/connections/conn_1/events", (_request, response) => {
      response.writeHead(200, { "Content-Type": "text/event-stream" });
      let i = 0;
      const write = () => {
        while (i < events.length) if (!response.write(events[i++]!.repeat(20))) return void response.once("drain", write);
        response.end();
      };
      write();
    });
    const reader = (await client().authConnections.follow("conn_1")).pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      text += chunk.value;
      if (text.length % 7 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(text).toBe(events.map((event) => event.repeat(20)).join(""));
  });

  it("times out only until the headers: an open stream outlives timeoutMs", async () => {
    server.route("GET", "/auth/connections/conn_1/events", openStream());
    const stream = await client({ timeoutMs: 30 }).authConnections.follow("conn_1");
    await new Promise((resolve) => setTimeout(resolve, 80));
    await expect(readEvents(stream, 1)).resolves.toEqual([state("IN_PROGRESS")]);
    server.route("GET", "/auth/connections/conn_2/events", { hang: true });
    await expect(client({ timeoutMs: 30 }).authConnections.follow("conn_2")).rejects.toBeInstanceOf(APITimeoutError);
  });

  it("rejects an error status with its typed error, read whole", async () => {
    server.route("GET", "/auth/connections/conn_1/events", { status: 409, body: { code: "no_flow", message: "No flow to follow." } });
    await expect(client().authConnections.follow("conn_1")).rejects.toSatisfy((error) => error instanceof ConflictError && error.code === "no_flow");
  });

  it("stops the stream when the caller's signal aborts", async () => {
    let closed: Promise<void> | undefined;
    server.route(
      "GET",
      "/auth/connections/conn_1/events",
      openStream((response) => (closed = new Promise((resolve) => response.on("close", () => resolve())))),
    );
    const controller = new AbortController();
    const stream = await client().authConnections.follow("conn_1", { signal: controller.signal });
    const reader = stream.getReader();
    await reader.read();
    controller.abort();
    await expect(reader.read()).rejects.toBeDefined();
    await closed;
  });

  it("closes the request when the reader cancels the stream", async () => {
    let closed: Promise<void> | undefined;
    server.route(
      "GET",
      "/auth/connections/conn_1/events",
      openStream((response) => (closed = new Promise((resolve) => response.on("close", () => resolve())))),
    );
    const stream = await client().authConnections.follow("conn_1");
    await stream.cancel();
    await closed;
  });

  it("refuses a signal aborted before the call", async () => {
    server.route("GET", "/auth/connections/conn_1/events", openStream());
    await expect(client().authConnections.follow("conn_1", { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(APIUserAbortError);
  });

  it("streams a raw call that asks for parseAs: stream", async () => {
    server.route("GET", "/auth/connections/conn_1/events", openStream());
    const { data, response } = await client({ timeoutMs: 30 }).GET("/auth/connections/{id}/events", {
      params: { path: { id: "conn_1" } },
      parseAs: "stream",
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    await new Promise((resolve) => setTimeout(resolve, 60));
    await expect(readEvents(data as unknown as ReadableStream<Uint8Array<ArrayBuffer>>, 1)).resolves.toEqual([state("IN_PROGRESS")]);
  });
});
