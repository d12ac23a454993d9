import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EgressConnections } from "../src/egress/egress-connections.js";
import { EgressProxy, type HostLookup } from "../src/egress/socks-proxy.js";
import { EgressPolicy } from "../src/index.js";

// The egress policy and proxy on their own, with real sockets: what a browser (Chromium's
// SOCKS5 client, or anything a hostile page or DevTools client gets it to send) can reach.

describe("EgressPolicy", () => {
  const policy = new EgressPolicy({ allowPrivateNetwork: false, hostAddresses: ["203.0.114.7", "2001:4860::7"] });

  it("refuses loopback, private, shared, link-local, unique-local, multicast and special-purpose addresses", () => {
    for (const address of [
      "127.0.0.1",
      "127.255.255.254",
      "0.0.0.0",
      "10.1.2.3",
      "100.64.0.1",
      "100.127.255.255",
      "169.254.169.254",
      "172.16.0.1",
      "172.31.255.255",
      "192.168.1.1",
      "192.0.0.8",
      "192.0.2.1",
      "198.18.0.1",
      "198.51.100.1",
      "203.0.113.1",
      "224.0.0.1",
      "239.255.255.250",
      "240.0.0.1",
      "255.255.255.255",
      "::",
      "::1",
      "fc00::1",
      "fd12:3456::1",
      "fe80::1",
      "fe80::1%eth0",
      "ff02::1",
      "fec0::1",
      // IPv4 carried inside IPv6: mapped, compatible, NAT64, 6to4, Teredo.
      "::ffff:127.0.0.1",
      "::ffff:7f00:1",
      "::ffff:169.254.169.254",
      "::127.0.0.1",
      "64:ff9b::a9fe:a9fe",
      "2002:7f00:1::1",
      "2001:0:4136:e378::1",
    ]) {
      expect({ address, allowed: policy.check(address).allowed }).toEqual({ address, allowed: false });
    }
  });

  it("refuses this host's own addresses, public ones included, so the server's own ports", () => {
    expect(policy.check("203.0.114.7")).toEqual({ allowed: false, reason: "203.0.114.7 is an address of this host" });
    expect(policy.check("2001:4860::7").allowed).toBe(false);
    // By default every interface's address is read, loopback among them.
    expect(new EgressPolicy({ allowPrivateNetwork: false }).check("127.0.0.1").allowed).toBe(false);
  });

  it("lets public addresses through, and refuses what is not an address", () => {
    for (const address of ["8.8.8.8", "1.1.1.1", "100.63.255.255", "100.128.0.0", "172.32.0.1", "2606:4700::1111", "::ffff:8.8.8.8"]) {
      expect({ address, allowed: policy.check(address).allowed }).toEqual({ address, allowed: true });
    }
    for (const notAnAddress of ["localhost", "example.org", "2130706433", "0x7f.1", ""]) expect(policy.check(notAnAddress).allowed).toBe(false);
  });

  it("--allow-private-network lets everything through", () => {
    const open = new EgressPolicy({ allowPrivateNetwork: true });
    for (const address of ["127.0.0.1", "::1", "10.0.0.1", "169.254.169.254"]) expect(open.check(address).allowed).toBe(true);
    expect(open.check("localhost").allowed).toBe(false);
  });
});

/** A target on 127.0.0.1 that answers every connection with "hello" and counts them. */
let target: Server;
let targetPort: number;
let accepted = 0;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "browser-service-egress-test-"));
  target = createServer((socket) => {
    accepted++;
    socket.end("hello");
  });
  await new Promise<void>((resolve) => target.listen(0, "127.0.0.1", resolve));
  targetPort = (target.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => target.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

/** Speaks SOCKS5 to the proxy: greeting, one request; resolves with the reply code and what followed. */
async function socks(
  proxy: { path?: string; port?: number },
  request: Buffer,
  greeting = Buffer.from([5, 1, 0]),
): Promise<{ method: number; reply?: number; data: string }> {
  const socket: Socket = proxy.path !== undefined ? createConnection(proxy.path) : createConnection(proxy.port as number, "127.0.0.1");
  const received: Buffer[] = [];
  socket.on("data", (chunk) => received.push(chunk));
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  socket.write(greeting);
  socket.write(request);
  await new Promise<void>((resolve) => socket.once("close", () => resolve()));
  const all = Buffer.concat(received);
  return { method: all[1] as number, ...(all.length >= 4 ? { reply: all[3] } : {}), data: all.subarray(12).toString() };
}

const byName = (name: string, port: number) =>
  Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), Buffer.from(name, "latin1"), Buffer.from([port >> 8, port & 0xff])]);
const byIpv4 = (address: string, port: number) => Buffer.from([5, 1, 0, 1, ...address.split(".").map(Number), port >> 8, port & 0xff]);

describe("EgressProxy", () => {
  const names: Record<string, string[]> = {
    "public.test": ["192.0.2.10"],
    "rebound.test": ["127.0.0.1"],
    "mixed.test": ["10.0.0.1", "127.0.0.1"],
    "nowhere.test": [],
  };
  const lookup: HostLookup = async (hostname) => (names[hostname] ?? []).map((address) => ({ address, family: 4 }));

  it("refuses by default a name that resolves to loopback, and an IP literal of it; the target sees no connection", async () => {
    const refusals: string[] = [];
    const proxy = await EgressProxy.listen(
      { path: join(dir, "closed.sock") },
      {
        policy: new EgressPolicy({ allowPrivateNetwork: false }),
        connections: new EgressConnections(),
        label: "browser:1",
        lookup,
        onRefused: (destination, reason) => refusals.push(`${destination}: ${reason}`),
      },
    );
    try {
      const before = accepted;
      expect(await socks({ path: join(dir, "closed.sock") }, byName("rebound.test", targetPort))).toMatchObject({ method: 0, reply: 2 });
      expect(await socks({ path: join(dir, "closed.sock") }, byIpv4("127.0.0.1", targetPort))).toMatchObject({ reply: 2 });
      expect(await socks({ path: join(dir, "closed.sock") }, byName("mixed.test", targetPort))).toMatchObject({ reply: 2 });
      expect(await socks({ path: join(dir, "closed.sock") }, byName("nowhere.test", targetPort))).toMatchObject({ reply: 4 });
      expect(accepted).toBe(before);
      expect(refusals).toEqual([
        `rebound.test:${targetPort}: 127.0.0.1 is an address of this host`,
        `127.0.0.1:${targetPort}: 127.0.0.1 is an address of this host`,
        `mixed.test:${targetPort}: 127.0.0.1 is an address of this host`,
        `nowhere.test:${targetPort}: the name has no address`,
      ]);
    } finally {
      await proxy.close();
    }
  });

  it("with the private network allowed, connects to the very address it resolved and relays both ways", async () => {
    const connections = new EgressConnections();
    const proxy = await EgressProxy.listen(
      { path: join(dir, "open.sock") },
      { policy: new EgressPolicy({ allowPrivateNetwork: true }), connections, label: "browser:2", lookup },
    );
    try {
      expect(await socks({ path: join(dir, "open.sock") }, byName("rebound.test", targetPort))).toEqual({ method: 0, reply: 0, data: "hello" });
      expect(await socks({ path: join(dir, "open.sock") }, byIpv4("127.0.0.1", targetPort))).toMatchObject({ reply: 0, data: "hello" });
    } finally {
      await proxy.close();
    }
  });

  it("holds a bounded amount for a browser that does not read: a fast site waits, the proxy does not buffer it", async () => {
    // A site that sends as fast as it may, 64 MiB in all; it counts what the proxy took from it.
    let taken = 0;
    const flood = createServer((socket) => {
      const chunk = Buffer.alloc(1024 * 1024, 0x61);
      const send = () => {
        while (taken < 64 * 1024 * 1024) {
          taken += chunk.length;
          if (!socket.write(chunk)) {
            socket.once("drain", send);
            return;
          }
        }
        socket.end();
      };
      socket.on("error", () => undefined);
      send();
    });
    await new Promise<void>((resolve) => flood.listen(0, "127.0.0.1", resolve));
    const floodPort = (flood.address() as { port: number }).port;
    const proxy = await EgressProxy.listen(
      { path: join(dir, "flood.sock") },
      { policy: new EgressPolicy({ allowPrivateNetwork: true }), connections: new EgressConnections(), label: "browser:9", lookup },
    );
    const client = createConnection(join(dir, "flood.sock"));
    try {
      await new Promise<void>((resolve) => client.once("connect", () => resolve()));
      // The handshake's answers are read, then the browser stops reading.
      client.write(Buffer.from([5, 1, 0]));
      client.write(byIpv4("127.0.0.1", floodPort));
      await new Promise<void>((resolve) => client.once("data", () => resolve()));
      client.pause();
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      // What is in flight is the sockets' buffers and the relay's high-water marks, a few MiB, not the site's 64.
      expect(taken).toBeLessThan(16 * 1024 * 1024);
    } finally {
      client.destroy();
      await proxy.close();
      await new Promise((resolve) => flood.close(resolve));
    }
  });

  it("records each open connection by its local end, so the server can tell a browser's request to itself apart", async () => {
    const connections = new EgressConnections();
    const seen: (string | undefined)[] = [];
    // Looked up when the first bytes arrive, as the server does when it reads a request: the
    // proxy relays a browser's bytes only once the connection is recorded.
    const server = createServer((socket) => {
      socket.once("data", () => {
        seen.push(connections.browserOf(socket.remoteAddress, socket.remotePort));
        socket.end("ok");
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const proxy = await EgressProxy.listen(
      { path: join(dir, "label.sock") },
      { policy: new EgressPolicy({ allowPrivateNetwork: true }), connections, label: "browser:7", lookup },
    );
    try {
      await socks(
        { path: join(dir, "label.sock") },
        Buffer.concat([byIpv4("127.0.0.1", (server.address() as { port: number }).port), Buffer.from("GET / HTTP/1.1\r\n\r\n")]),
      );
      expect(seen).toEqual(["browser:7"]);
      // A connection that is not the proxy's is nobody's.
      const direct = createConnection((server.address() as { port: number }).port, "127.0.0.1");
      direct.write("GET / HTTP/1.1\r\n\r\n");
      await new Promise((resolve) => direct.once("close", resolve).resume());
      expect(seen).toEqual(["browser:7", undefined]);
      await expect.poll(() => connections.size).toBe(0);
    } finally {
      await proxy.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("refuses UDP ASSOCIATE and BIND, other versions, authentication-only greetings, port 0 and names no host has", async () => {
    const proxy = await EgressProxy.listen(
      { port: 0 },
      { policy: new EgressPolicy({ allowPrivateNetwork: true }), connections: new EgressConnections(), label: "browser:3", lookup },
    );
    try {
      const at = { port: proxy.port };
      expect(await socks(at, Buffer.from([5, 3, 0, 1, 127, 0, 0, 1, 0, 53]))).toMatchObject({ reply: 7 });
      expect(await socks(at, Buffer.from([5, 2, 0, 1, 127, 0, 0, 1, 0, 80]))).toMatchObject({ reply: 7 });
      expect(await socks(at, byIpv4("127.0.0.1", 0))).toMatchObject({ reply: 2 });
      expect(await socks(at, byName("evil\u0000.test", targetPort))).toMatchObject({ reply: 4 });
      expect(await socks(at, byName("a b", targetPort))).toMatchObject({ reply: 4 });
      expect(await socks(at, Buffer.from([5, 1, 0, 9, 0, 0]))).toMatchObject({ reply: 8 });
      // Only "no authentication" is offered by Chromium; a greeting without it is refused.
      expect((await socks(at, Buffer.alloc(0), Buffer.from([5, 1, 2]))).method).toBe(0xff);
      expect((await socks(at, Buffer.alloc(0), Buffer.from([4, 1, 0]))).method).toBe(0xff);
    } finally {
      await proxy.close();
    }
  });

  it("a client that never finishes its handshake is dropped after the timeout, and close() ends every connection", async () => {
    const proxy = await EgressProxy.listen(
      { port: 0 },
      { policy: new EgressPolicy({ allowPrivateNetwork: true }), connections: new EgressConnections(), label: "browser:4", lookup, timeoutMs: 200 },
    );
    const idle = createConnection(proxy.port, "127.0.0.1");
    idle.write(Buffer.from([5]));
    await new Promise((resolve) => idle.once("close", resolve).resume());
    const held = createConnection(proxy.port, "127.0.0.1");
    held.write(Buffer.from([5, 1, 0]));
    const closed = new Promise((resolve) => held.once("close", resolve).resume());
    await new Promise((resolve) => setTimeout(resolve, 50));
    await proxy.close();
    await closed;
  });
});
