import type { IncomingMessage, Server } from "node:http";
import type { Socket } from "node:net";
import { RateLimitedError, RequestTimeoutError } from "./api-errors.js";
import { type BrowserOfConnection, clientAddressKey, type TrustedProxy } from "./client-key.js";
import { writeRawError } from "./raw-error-response.js";

/**
 * How long a new connection may stay silent before it is closed. HTTP clients send their
 * request as soon as they connect; Node's own header timeout only starts at the first
 * byte, so a connection that never sends one would otherwise stay open for good.
 */
export const FIRST_REQUEST_TIMEOUT_MS = 10_000;

/** Settings of {@link installConnectionLimits}. */
export interface ConnectionLimitOptions {
  /** Connections each client (address, IPv6 /64, or one of the server's browsers) may hold open at once; `0`: no limit. */
  perClient: number;
  /** Reverse proxies, whose connections carry many clients' requests and are not counted. */
  trustedProxy?: TrustedProxy | undefined;
  /** The server's own browsers: a connection of one counts against that browser, not its address. */
  browserOfConnection?: BrowserOfConnection | undefined;
  /** Milliseconds a connection may stay silent before its first request. Default {@link FIRST_REQUEST_TIMEOUT_MS}. */
  firstRequestTimeoutMs?: number;
}

interface Tracked {
  key: string;
  timer: NodeJS.Timeout | undefined;
  /** Whether the connection closed (its count was given back): it is moved no more. */
  closed?: boolean;
}

/** What {@link installConnectionLimits} gives back: a connection's count moved to the client it turned out to carry. */
export interface ConnectionCounts {
  /**
   * Counts `socket` from now on under `client` (`""`: under none) instead of the address
   * it came from: for a connection another node opened, which carries its clients'
   * requests (its proof checked). Past the cap for `client`, the connection is answered
   * `429 rate_limited` and closed, and `false` returned; `false` too for one that closed.
   */
  countAs(socket: Socket, client: string): boolean;
}

/**
 * Bounds the connections a client holds, so that no one client (or many connections that
 * never send a byte) can take the server's file descriptors from everyone else: past
 * `perClient` open connections a new one is answered `429 rate_limited` and closed, and a
 * connection silent for {@link FIRST_REQUEST_TIMEOUT_MS} is closed. A connection that
 * turns out to be one of the server's browsers' (its first request tells) is moved to that
 * browser's count, so a page cannot spend its address's.
 */
export function installConnectionLimits(server: Server, options: ConnectionLimitOptions): ConnectionCounts {
  const counts = new Map<string, number>();
  const tracked = new WeakMap<Socket, Tracked>();
  const timeoutMs = options.firstRequestTimeoutMs ?? FIRST_REQUEST_TIMEOUT_MS;
  const add = (key: string, delta: number) => {
    const count = (counts.get(key) ?? 0) + delta;
    if (count > 0) counts.set(key, count);
    else counts.delete(key);
  };

  server.on("connection", (socket: Socket) => {
    // Silent: closed. Part of a request head sent (slowly): told why first.
    const timer = setTimeout(() => {
      if (socket.bytesRead > 0 && socket.writable) {
        writeRawError(socket, new RequestTimeoutError("The request's headers did not arrive in time; send it again."));
        socket.end();
        socket.destroySoon();
      } else socket.destroy();
    }, timeoutMs);
    timer.unref();
    socket.once("close", () => clearTimeout(timer));
    const address = socket.remoteAddress;
    if (options.perClient === 0 || address === undefined || options.trustedProxy?.(address, 0)) {
      tracked.set(socket, { key: "", timer });
      return;
    }
    const key = clientAddressKey(address);
    if ((counts.get(key) ?? 0) >= options.perClient) {
      clearTimeout(timer);
      writeRawError(
        socket,
        new RateLimitedError(`This address already holds ${options.perClient} connections to the server, the most it allows; close some first`, 1),
      );
      socket.end();
      socket.destroySoon();
      return;
    }
    add(key, 1);
    const entry: Tracked = { key, timer };
    tracked.set(socket, entry);
    socket.once("close", () => {
      entry.closed = true;
      if (entry.key !== "") add(entry.key, -1);
    });
  });

  const firstRequest = (request: IncomingMessage) => {
    const socket = request.socket;
    const entry = tracked.get(socket);
    if (entry?.timer === undefined) return;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    const browser = entry.key === "" ? undefined : options.browserOfConnection?.(socket.remoteAddress ?? "", socket.remotePort ?? 0);
    if (browser !== undefined) {
      add(entry.key, -1);
      entry.key = `browser:${browser}`;
      add(entry.key, 1);
    }
  };
  // Listeners added before Fastify's, which answer the request: they run first. Not
  // "checkContinue": a listener there would stop Node from answering 100-continue itself
  // (it then emits "request" as usual).
  server.prependListener("request", firstRequest);
  server.prependListener("upgrade", firstRequest);
  server.prependListener("connect", firstRequest);
  server.prependListener("checkExpectation", firstRequest);

  return {
    countAs(socket, client) {
      const entry = tracked.get(socket);
      // A connection that closed while its sender was checked counts nowhere any more.
      if (entry?.closed === true || socket.destroyed) return false;
      if (entry === undefined || entry.key === client || options.perClient === 0) return true;
      if (client !== "" && (counts.get(client) ?? 0) >= options.perClient) {
        writeRawError(
          socket,
          new RateLimitedError(`This client already holds ${options.perClient} connections to the server, the most it allows; close some first`, 1),
        );
        socket.end();
        socket.destroySoon();
        return false;
      }
      if (entry.key !== "") add(entry.key, -1);
      entry.key = client;
      if (client !== "") add(client, 1);
      return true;
    },
  };
}
