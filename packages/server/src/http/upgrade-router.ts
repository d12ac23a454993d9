import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { FastifyInstance } from "fastify";
import { type ApiError, BadRequestError, InternalError } from "./api-errors.js";
import { hostHeaderError } from "./host-header.js";
import { serveIgnoringUpgrade } from "./ignored-upgrade.js";
import { writeRawError } from "./raw-error-response.js";
import { requestTargetError } from "./request-target.js";

/** One endpoint reached by an upgrade (a WebSocket, the nodes' peer channel). */
export interface UpgradeRoute {
  /** What it is, for the log. */
  name: string;
  /**
   * Whether this upgrade is the route's, from its method, path and protocol alone (and
   * the peer proof checked before, see {@link UpgradeRouterOptions.identify}): the
   * routes never claim the same upgrade, whatever order they were given in.
   */
  claims(request: IncomingMessage, path: string): boolean;
  /** Takes a claimed upgrade; every answer (the switch, or a refusal) is the route's own. */
  take(request: IncomingMessage, socket: Duplex, head: Buffer): void | Promise<void>;
}

/** What {@link installUpgradeRouter} needs besides its routes. */
export interface UpgradeRouterOptions {
  routes: readonly UpgradeRoute[];
  /**
   * Runs first, once per upgrade (another node's proof, the connection counted under its
   * client); `false`: the upgrade was answered or dropped there.
   */
  identify?: (request: IncomingMessage, socket: Duplex) => Promise<boolean>;
}

/** What the server keeps of its upgrade router. */
export interface UpgradeRouter {
  /**
   * Ends the connections of the upgrades served as plain requests: Node no longer counts
   * them as the server's (it handed their sockets over), so closing the server's
   * connections at shutdown would not reach one whose client never finishes its body.
   */
  closePlainConnections(): void;
}

/**
 * The one listener of the server's `upgrade` event. Every upgrade is checked as every
 * request is (a request target naming a host, a missing or malformed Host, is 400), then goes to the one route that
 * claims it; one no route claims is served as the plain request it also is (the API
 * ignores `Upgrade`, RFC 9110 7.8: `curl --http2` asks for h2c on every request). Two
 * routes claiming one upgrade is a fault of the server (500), never an order to rely on.
 */
export function installUpgradeRouter(app: FastifyInstance, options: UpgradeRouterOptions): UpgradeRouter {
  const { routes, identify } = options;
  const plain = new Set<Duplex>();
  const route = async (request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> => {
    socket.on("error", () => socket.destroy());
    // A route takes its upgrade before Fastify's hooks could check its Host, so both are checked here.
    const targetError = requestTargetError(request) ?? hostHeaderError(request);
    if (targetError) {
      refuseUpgrade(socket, targetError);
      return;
    }
    if (identify !== undefined && !(await identify(request, socket))) return;
    const path = (request.url ?? "").split("?")[0] ?? "";
    const claimed = routes.filter((each) => each.claims(request, path));
    if (claimed.length > 1) throw new Error(`The upgrade routes ${claimed.map((each) => each.name).join(" and ")} both claim ${request.method} ${path}.`);
    const [taker] = claimed;
    if (taker === undefined) {
      // Served as a plain request, its body is read by its Content-Length only: a chunked one
      // would reach the operation as no body at all.
      if (request.headers["transfer-encoding"] !== undefined) {
        refuseUpgrade(
          socket,
          new BadRequestError("A request that asks to upgrade is served as a plain one here, and its body must then have a Content-Length, not be chunked."),
        );
        return;
      }
      plain.add(socket);
      socket.once("close", () => plain.delete(socket));
      serveIgnoringUpgrade(app.server, request, socket, head);
    } else await taker.take(request, socket, head);
  };
  app.server.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    route(request, socket, head).catch((error: unknown) => {
      app.log.error({ err: error }, "an upgrade could not be taken");
      refuseUpgrade(socket, new InternalError());
    });
  });
  return {
    closePlainConnections: () => {
      for (const socket of plain) socket.destroy();
    },
  };
}

/** How long a refused upgrade's client may take to close its side before the connection is cut. */
const REFUSAL_GRACE_MS = 5_000;

/**
 * Answers a request that will not be upgraded with an HTTP error and the spec's Error
 * body, and closes the connection; a client that never closes its side is cut off after
 * {@link REFUSAL_GRACE_MS}, so that refusals hold no connection of its address.
 */
export function refuseUpgrade(socket: Duplex, error: ApiError): void {
  if (socket.destroyed) return;
  writeRawError(socket, error);
  socket.end();
  setTimeout(() => socket.destroy(), REFUSAL_GRACE_MS).unref();
}
