import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket, { WebSocketServer } from "ws";
import { keepAlive } from "../src/http/websocket-heartbeat.js";

// A real WebSocket pair: what the server does with a peer that stops answering.

const servers: WebSocketServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    for (const client of server.clients) client.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function pair(autoPong: boolean): Promise<{ server: WebSocket; client: WebSocket }> {
  const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  servers.push(wss);
  await once(wss, "listening");
  const accepted = once(wss, "connection") as Promise<[WebSocket]>;
  const client = new WebSocket(`ws://127.0.0.1:${(wss.address() as AddressInfo).port}`, { autoPong });
  client.on("error", () => undefined);
  const [server] = await accepted;
  return { server, client };
}

describe("the WebSocket heartbeat", () => {
  it("closes a peer that answers no ping, keeps one that does, and never one this server paused", async () => {
    const silent = await pair(false);
    const answering = await pair(true);
    const paused = await pair(false);
    // Long enough that a loaded machine's peer answers in time, short enough for a test.
    for (const { server } of [silent, answering, paused]) keepAlive(server, 250);
    // Paused by the server (its budgets catching up), the peer's answers wait unread: not its fault.
    paused.server.pause();
    await once(silent.server, "close");
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(answering.server.readyState).toBe(WebSocket.OPEN);
    expect(paused.server.readyState).toBe(WebSocket.OPEN);
    paused.server.resume();
    await once(paused.server, "close");
  });
});
