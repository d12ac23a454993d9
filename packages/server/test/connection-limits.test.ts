import { createServer, type Server } from "node:http";
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { installConnectionLimits } from "../src/http/connection-limits.js";
import { startTestServer } from "./support/test-server.js";

// An anonymous client (no key at all) holding the server's connections, the way the
// attack that took every file descriptor of the server did: thousands of TCP connections
// from one address that never send a byte.

/** A TCP connection to `port` on 127.0.0.1 that sends nothing; resolves once connected. */
async function idle(port: number): Promise<Socket & { received: () => string; ended: Promise<void> }> {
  const socket = connect(port, "127.0.0.1");
  let received = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
  socket.on("error", () => undefined);
  const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  return Object.assign(socket, { received: () => received, ended: closed });
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function plainServer(options: Parameters<typeof installConnectionLimits>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer((_request, response) => response.end("ok"));
  installConnectionLimits(server, options);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as { port: number }).port };
}

describe("connection limits", () => {
  it("closes a connection that sends nothing once the first-request timeout passes, but not one that made a request", async () => {
    const { port } = await plainServer({ perClient: 0, firstRequestTimeoutMs: 200 });
    const silent = await idle(port);
    const talking = await idle(port);
    talking.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await silent.ended;
    await expect.poll(() => talking.received()).toContain("ok");
    // Well past the timeout, the kept-alive connection still answers.
    await new Promise((resolve) => setTimeout(resolve, 400));
    talking.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    await expect.poll(() => talking.received().split("HTTP/1.1 200").length - 1).toBe(2);
    talking.destroy();
  });

  it("answers 408 with the Error body before closing a connection whose request head did not arrive in time", async () => {
    const { port } = await plainServer({ perClient: 0, firstRequestTimeoutMs: 200 });
    const slow = await idle(port);
    slow.write("GET / HTTP/1.1\r\nHo");
    await slow.ended;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(JSON.parse(slow.received().slice(slow.received().indexOf("\r\n\r\n") + 4))).toMatchObject({ code: "request_timeout" });
  });

  it("counts a connection that turns out to be one of the server's browsers against that browser, not its address", async () => {
    const browserPorts = new Set<number>();
    const { port } = await plainServer({ perClient: 2, browserOfConnection: (_address, remotePort) => (browserPorts.has(remotePort) ? "7" : undefined) });
    const pages = [await idle(port), await idle(port)];
    for (const page of pages) {
      browserPorts.add(page.localPort as number);
      page.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
      await expect.poll(() => page.received()).toContain("ok");
    }
    // The address's own two connections are still free.
    const mine = [await idle(port), await idle(port)];
    const third = await idle(port);
    await third.ended;
    expect(third.received()).toMatch(/^HTTP\/1\.1 429 /);
    for (const socket of [...pages, ...mine]) socket.destroy();
  });

  it("on the server: past --max-client-connections silent connections, the next one from that address is 429 with the Error body; others' are not", async () => {
    const t = await startTestServer({ maxClientConnections: 4 });
    try {
      const port = Number(new URL(t.url).port);
      const held = await Promise.all(Array.from({ length: 4 }, () => idle(port)));
      const refused = await idle(port);
      await refused.ended;
      const [head, body] = refused.received().split("\r\n\r\n");
      expect(head).toMatch(/^HTTP\/1\.1 429 /);
      expect(head).toMatch(/\r\nretry-after: 1\r\n/i);
      expect(JSON.parse(body as string)).toMatchObject({ code: "rate_limited", message: expect.stringContaining("already holds 4 connections") });
      held[0]!.destroy();
      await held[0]!.ended;
      // A slot is free again: an API call with a key goes through.
      await expect
        .poll(
          async () =>
            await t
              .client()
              .limits.get()
              .then(
                () => "ok",
                (error: Error) => error.message,
              ),
        )
        .toBe("ok");
      for (const socket of held) socket.destroy();
      expect(t.mismatches).toEqual([]);
    } finally {
      await t.close();
    }
  });
});

describe("a connection counted anew", () => {
  it("counts under the client it carries from then on, and one that closed first leaves no count behind", async () => {
    const server = createServer((_request, response) => response.end("ok"));
    const counts = installConnectionLimits(server, { perClient: 1 });
    servers.push(server);
    const accepted: Socket[] = [];
    server.on("connection", (socket) => accepted.push(socket));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as { port: number }).port;
    // Moved to another client, it no longer holds 127.0.0.1's one place.
    const first = await idle(port);
    await expect.poll(() => accepted.length).toBe(1);
    expect(counts.countAs(accepted[0] as Socket, "203.0.113.9")).toBe(true);
    const second = await idle(port);
    await expect.poll(() => accepted.length).toBe(2);
    // One that closed while its sender was being checked is moved nowhere, and counts nowhere.
    second.destroy();
    await expect.poll(() => (accepted[1] as Socket).destroyed).toBe(true);
    expect(counts.countAs(accepted[1] as Socket, "198.51.100.1")).toBe(false);
    // So that client's one place is still free for a connection that carries it.
    const third = await idle(port);
    await expect.poll(() => accepted.length).toBe(3);
    expect(counts.countAs(accepted[2] as Socket, "198.51.100.1")).toBe(true);
    expect(third.received()).toBe("");
    first.destroy();
    third.destroy();
  });
});
