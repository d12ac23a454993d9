import { once } from "node:events";
import { createServer, type IncomingMessage, type Server } from "node:http";
import { type AddressInfo, connect, createServer as createNetServer, type Socket } from "node:net";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { bodyDigest, PeerAuth } from "../src/nodes/peer-auth.js";
import { PeerForwarder, peerUrl } from "../src/nodes/peer-forwarder.js";

// Where a node sends what it forwards, from the side of a client who tries to choose it:
// the request target, the Host, the path. Here without the server's edge check (which
// refuses such targets first), so that the forwarder alone is seen to hold.

const SECRET = "f".repeat(32);
const sender = new PeerAuth({ secret: SECRET, nodeId: "sender" });
const ownerAuth = new PeerAuth({ secret: SECRET, nodeId: "owner" });

const closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

interface Received {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

/** A node's stand-in: records each request (and upgrade) it gets, answers 201, and refuses upgrades with a 409. */
async function owner(): Promise<{ url: string; received: Received[] }> {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let body = "";
    request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
    request.on("end", () => {
      received.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body });
      response.writeHead(201, { "content-type": "application/json" }).end('{"ok":true}');
    });
  });
  server.on("upgrade", (request: IncomingMessage, socket: Socket) => {
    received.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers, body: "" });
    socket.end("HTTP/1.1 409 Conflict\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

/** A listener a client would like the node to reach: it counts what connects. */
async function trap(): Promise<{ port: number; connections: () => number }> {
  let connections = 0;
  const server = createNetServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  closers.push(() => new Promise((resolve) => server.close(resolve)));
  return { port: (server.address() as AddressInfo).port, connections: () => connections };
}

/** Sends raw bytes to `port` (asking it to close) and resolves with the answer once the server closes. */
function raw(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let answer = "";
    socket.setEncoding("latin1").on("data", (chunk: string) => (answer += chunk));
    socket.on("error", reject);
    socket.on("close", () => resolve(answer));
    socket.write(text);
  });
}

/** What `received` carries, as the owner's proof check sees it. */
const asArriving = (received: Received) => ({ method: received.method, url: received.url, headers: received.headers }) as unknown as IncomingMessage;

describe("a forwarded request", () => {
  it("goes to the node's origin at the path the route chose, whatever target, Host or path the client wrote", async () => {
    const node = await owner();
    const elsewhere = await trap();
    const forwarder = new PeerForwarder(sender);
    closers.push(async () => forwarder.close());
    const app = Fastify();
    app.post("/browsers", async (request, reply) => {
      await forwarder.forward(request, reply, { url: `${node.url}/ignored/path?x=1`, nodeId: "owner" }, "203.0.113.9", {
        path: "/browsers",
        claims: { placed: "owner", scope: "e30" },
      });
      return reply;
    });
    await app.listen({ port: 0, host: "127.0.0.1" });
    closers.push(() => app.close());
    const port = (app.server.address() as AddressInfo).port;
    const body = '{"name":"x"}';
    const attempt = (line: string, host: string) =>
      raw(
        port,
        `${line}\r\nHost: ${host}\r\nAuthorization: Bearer bsk_client_key\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nx-browser-service-proof: forged\r\nConnection: close\r\n\r\n${body}`,
      );
    // Fastify routes each of these as POST /browsers.
    for (const [line, host] of [
      [`POST http://127.0.0.1:${elsewhere.port}/browsers HTTP/1.1`, `127.0.0.1:${port}`],
      ["POST /browsers HTTP/1.1", `127.0.0.1:${elsewhere.port}`],
    ] as const) {
      expect(await attempt(line, host)).toMatch(/^HTTP\/1\.1 201/);
    }
    expect(elsewhere.connections()).toBe(0);
    expect(node.received.map((each) => [each.method, each.url, each.body])).toEqual([
      ["POST", "/browsers", body],
      ["POST", "/browsers", body],
    ]);
    for (const each of node.received) {
      // The client's credential stays behind (the scope claim replaces it), and so does its forged proof.
      expect(each.headers.authorization).toBeUndefined();
      expect(JSON.stringify(each.headers)).not.toContain(SECRET);
      expect(ownerAuth.verify(asArriving(each))).toEqual({
        from: "sender",
        bodySha256: bodyDigest(body),
        channelKey: expect.any(Buffer),
        client: "203.0.113.9",
        placed: "owner",
        scope: "e30",
      });
    }
  });

  it("relays an upgrade to the node's origin at the path the endpoint built, never the client's target, and never the client's key", async () => {
    const node = await owner();
    const elsewhere = await trap();
    const forwarder = new PeerForwarder(sender);
    closers.push(async () => forwarder.close());
    const server: Server = createServer();
    server.on("upgrade", (request: IncomingMessage, socket: Socket, head: Buffer) => {
      forwarder.upgrade(request, socket, head, { target: { url: node.url, nodeId: "owner" }, path: "/browsers/brw_x/cdp", opens: "brw_x" }, "203.0.113.9", () =>
        socket.destroy(),
      );
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    closers.push(() => new Promise((resolve) => server.close(resolve)));
    const answer = await raw(
      (server.address() as AddressInfo).port,
      `GET http://127.0.0.1:${elsewhere.port}/browsers/brw_x/cdp?token=t HTTP/1.1\r\nHost: 127.0.0.1:${elsewhere.port}\r\nAuthorization: Bearer bsk_client_key\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 409/);
    expect(elsewhere.connections()).toBe(0);
    expect(node.received.map((each) => [each.method, each.url])).toEqual([["GET", "/browsers/brw_x/cdp"]]);
    // The endpoint checked the credential: the owner gets its signed word for it, not the key.
    expect(node.received[0]?.headers.authorization).toBeUndefined();
    expect(ownerAuth.verify(asArriving(node.received[0] as Received))).toMatchObject({ from: "sender", client: "203.0.113.9", opens: "brw_x" });
  });

  it("is never sent to a path that could name another host", () => {
    const target = { url: "http://10.0.0.5:8787", nodeId: "b" };
    expect(peerUrl(target, "/browsers?x=1").href).toBe("http://10.0.0.5:8787/browsers?x=1");
    for (const path of ["//evil.example/browsers", "http://evil.example/browsers", "evil.example:80", "", "@evil.example/x"]) {
      expect(() => peerUrl(target, path), path).toThrow(RangeError);
    }
  });
});
