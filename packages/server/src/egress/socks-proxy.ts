import { lookup as dnsLookup } from "node:dns/promises";
import { chmod, chown, rm } from "node:fs/promises";
import { createConnection, createServer, isIP, type Server, type Socket } from "node:net";
import type { EgressConnections } from "./egress-connections.js";
import type { EgressPolicy } from "./egress-policy.js";

/** Resolves a host name to every address it has, as `dns.lookup(name, { all: true })` does. */
export type HostLookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** Where an {@link EgressProxy} listens: a Unix socket (bound into the browser's sandbox) or a TCP port on 127.0.0.1. */
export type EgressEndpoint = { path: string; owner?: { uid: number; gid: number } } | { port: 0 };

/** Settings of {@link EgressProxy}. */
export interface EgressProxyOptions {
  /** Which addresses the browser may reach. */
  policy: EgressPolicy;
  /** Where open connections are recorded, so requests they carry to this server are told apart. */
  connections: EgressConnections;
  /** The browser, as {@link EgressConnections} names it (its launch's number). */
  label: string;
  /** Name resolution. Default: the system's (`dns.lookup`). */
  lookup?: HostLookup;
  /** Connections open at once; past it a new one is refused. Default {@link DEFAULT_MAX_CONNECTIONS}. */
  maxConnections?: number;
  /** Milliseconds for the SOCKS handshake and for the connection to the destination. Default 15,000. */
  timeoutMs?: number;
  /** Called with every refused destination (logging). */
  onRefused?: (destination: string, reason: string) => void;
}

/** Connections a browser may have open through its proxy at once; Chromium keeps at most 256 sockets in all. */
export const DEFAULT_MAX_CONNECTIONS = 256;

const SOCKS_VERSION = 5;
const NO_AUTHENTICATION = 0;
const NO_ACCEPTABLE_METHOD = 0xff;
const CONNECT = 1;
const ADDRESS_IPV4 = 1;
const ADDRESS_NAME = 3;
const ADDRESS_IPV6 = 4;
// RFC 1928 section 6 replies.
const REPLY = { succeeded: 0, failure: 1, notAllowed: 2, hostUnreachable: 4, refused: 5, commandNotSupported: 7, addressNotSupported: 8 } as const;

/** A SOCKS5 request: where the browser wants to go. */
interface Destination {
  host: string;
  port: number;
}

/**
 * A browser's only way out: a SOCKS5 proxy (RFC 1928, CONNECT only, no authentication)
 * inside the server, reached by Chromium through `--proxy-server=socks5://…`. Chromium
 * sends host names, not addresses, so the proxy resolves each name itself, keeps only the
 * addresses the {@link EgressPolicy} allows and connects to one of them: a name that
 * resolves to 127.0.0.1 is refused, and nothing can rebind between the check and the
 * connection. UDP (`UDP ASSOCIATE`) and `BIND` are refused. In the sandbox the browser has
 * no network but its own loopback, so this is the one path out (WebRTC, QUIC and DNS
 * included, which have no other route).
 */
export class EgressProxy {
  readonly #server: Server;
  readonly #options: EgressProxyOptions;
  readonly #sockets = new Set<Socket>();
  readonly #path: string | undefined;
  #port = 0;

  private constructor(server: Server, options: EgressProxyOptions, path: string | undefined) {
    this.#server = server;
    this.#options = options;
    this.#path = path;
  }

  /** Starts a proxy for one browser. */
  static async listen(endpoint: EgressEndpoint, options: EgressProxyOptions): Promise<EgressProxy> {
    const server = createServer({ pauseOnConnect: false });
    const path = "path" in endpoint ? endpoint.path : undefined;
    const proxy = new EgressProxy(server, options, path);
    server.on("connection", (socket) => proxy.#accept(socket));
    server.maxConnections = options.maxConnections ?? DEFAULT_MAX_CONNECTIONS;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      if (path !== undefined) server.listen(path, resolve);
      else server.listen(0, "127.0.0.1", resolve);
    });
    if ("path" in endpoint) {
      // Only the browser's own account may connect (it needs write permission on the socket).
      if (endpoint.owner) await chown(endpoint.path, endpoint.owner.uid, endpoint.owner.gid);
      await chmod(endpoint.path, 0o600);
    } else {
      const address = server.address();
      proxy.#port = typeof address === "object" && address !== null ? address.port : 0;
    }
    return proxy;
  }

  /** The TCP port on 127.0.0.1 (0 when listening on a Unix socket). */
  get port(): number {
    return this.#port;
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    if (this.#path !== undefined) await rm(this.#path, { force: true });
  }

  #accept(client: Socket): void {
    this.#sockets.add(client);
    client.once("close", () => this.#sockets.delete(client));
    client.on("error", () => client.destroy());
    client.setNoDelay(true);
    const timeoutMs = this.#options.timeoutMs ?? 15_000;
    const timer = setTimeout(() => client.destroy(), timeoutMs);
    let buffered = Buffer.alloc(0);
    let stage: "greeting" | "request" | "connecting" = "greeting";
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (stage === "greeting") {
        const greeting = parseGreeting(buffered);
        if (greeting === "incomplete") return;
        if (greeting === "invalid" || !greeting.methods.includes(NO_AUTHENTICATION)) {
          client.end(Buffer.from([SOCKS_VERSION, NO_ACCEPTABLE_METHOD]));
          return;
        }
        client.write(Buffer.from([SOCKS_VERSION, NO_AUTHENTICATION]));
        buffered = buffered.subarray(greeting.length);
        stage = "request";
      }
      if (stage === "request") {
        const request = parseRequest(buffered);
        if (request === "incomplete") return;
        if ("reply" in request) {
          client.end(reply(request.reply));
          return;
        }
        stage = "connecting";
        client.off("data", onData);
        client.pause();
        const early = buffered.subarray(request.length);
        this.#connect(client, request.destination, early, timeoutMs).then(
          () => clearTimeout(timer),
          () => client.destroy(),
        );
      }
    };
    client.on("data", onData);
  }

  async #connect(client: Socket, destination: Destination, early: Buffer, timeoutMs: number): Promise<void> {
    const { policy, onRefused } = this.#options;
    const named = `${destination.host}:${destination.port}`;
    let candidates: string[];
    if (isIP(destination.host) !== 0) {
      candidates = [destination.host];
    } else {
      try {
        candidates = (await (this.#options.lookup ?? systemLookup)(destination.host)).map((entry) => entry.address);
      } catch {
        client.end(reply(REPLY.hostUnreachable));
        return;
      }
    }
    const allowed: string[] = [];
    let refusal = "";
    for (const address of candidates) {
      const verdict = policy.check(address);
      if (verdict.allowed) allowed.push(address);
      else refusal = verdict.reason;
    }
    if (allowed.length === 0) {
      onRefused?.(named, refusal || "the name has no address");
      client.end(reply(refusal ? REPLY.notAllowed : REPLY.hostUnreachable));
      return;
    }
    if (client.destroyed) return;
    let lastCode: number = REPLY.refused;
    for (const address of allowed) {
      const upstream = await open(address, destination.port, timeoutMs);
      if ("code" in upstream) {
        lastCode = upstream.code;
        if (client.destroyed) return;
        continue;
      }
      this.#relay(client, upstream, early);
      return;
    }
    client.end(reply(lastCode));
  }

  #relay(client: Socket, upstream: Socket, early: Buffer): void {
    if (client.destroyed) {
      upstream.destroy();
      return;
    }
    const { connections, label } = this.#options;
    const localAddress = upstream.localAddress ?? "";
    const localPort = upstream.localPort ?? 0;
    connections.add(localAddress, localPort, label);
    this.#sockets.add(upstream);
    upstream.setNoDelay(true);
    upstream.once("close", () => {
      connections.delete(localAddress, localPort);
      this.#sockets.delete(upstream);
      client.destroy();
    });
    client.once("close", () => upstream.destroy());
    upstream.on("error", () => upstream.destroy());
    client.write(reply(REPLY.succeeded));
    if (early.length > 0) upstream.write(early);
    client.pipe(upstream);
    upstream.pipe(client);
    client.resume();
  }
}

/** The system's resolver (`/etc/hosts`, DNS), every address of a name in the resolver's order. */
export const systemLookup: HostLookup = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Connects to an address the policy allowed; resolves with the socket or the SOCKS reply code of the failure. */
function open(address: string, port: number, timeoutMs: number): Promise<Socket | { code: number }> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: address, port });
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ code: REPLY.hostUnreachable });
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      resolve(socket);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({
        code:
          error.code === "ECONNREFUSED" ? REPLY.refused : error.code === "EHOSTUNREACH" || error.code === "ENETUNREACH" ? REPLY.hostUnreachable : REPLY.failure,
      });
    });
  });
}

/** A reply without a bound address (all zeros), which is all Chromium reads. */
function reply(code: number): Buffer {
  return Buffer.from([SOCKS_VERSION, code, 0, ADDRESS_IPV4, 0, 0, 0, 0, 0, 0]);
}

/** RFC 1928 section 3: VER, NMETHODS, METHODS. */
function parseGreeting(data: Buffer): "incomplete" | "invalid" | { methods: number[]; length: number } {
  if (data.length < 2) return "incomplete";
  if (data[0] !== SOCKS_VERSION) return "invalid";
  const count = data[1] as number;
  if (data.length < 2 + count) return "incomplete";
  return { methods: [...data.subarray(2, 2 + count)], length: 2 + count };
}

/** RFC 1928 section 4: VER, CMD, RSV, ATYP, DST.ADDR, DST.PORT. */
function parseRequest(data: Buffer): "incomplete" | { reply: number } | { destination: Destination; length: number } {
  if (data.length < 5) return "incomplete";
  if (data[0] !== SOCKS_VERSION) return { reply: REPLY.failure };
  if (data[1] !== CONNECT) return { reply: REPLY.commandNotSupported };
  const type = data[3];
  let host: string;
  let end: number;
  if (type === ADDRESS_IPV4) {
    end = 4 + 4;
    if (data.length < end + 2) return "incomplete";
    host = [...data.subarray(4, end)].join(".");
  } else if (type === ADDRESS_IPV6) {
    end = 4 + 16;
    if (data.length < end + 2) return "incomplete";
    const groups: string[] = [];
    for (let i = 4; i < end; i += 2) groups.push(data.readUInt16BE(i).toString(16));
    host = groups.join(":");
  } else if (type === ADDRESS_NAME) {
    const length = data[4] as number;
    end = 5 + length;
    if (data.length < end + 2) return "incomplete";
    host = data.subarray(5, end).toString("latin1");
    // A name with a NUL or a character no host name has is refused, not resolved.
    if (length === 0 || (!/^[A-Za-z0-9._-]+$/.test(host) && !/^\[[0-9A-Fa-f:.]+\]$/.test(host))) return { reply: REPLY.hostUnreachable };
    if (host.startsWith("[")) host = host.slice(1, -1);
  } else {
    return { reply: REPLY.addressNotSupported };
  }
  const port = data.readUInt16BE(end);
  if (port === 0) return { reply: REPLY.notAllowed };
  return { destination: { host, port }, length: end + 2 };
}
