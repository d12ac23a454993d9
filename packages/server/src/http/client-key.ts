import type { IncomingMessage } from "node:http";
import { isIP, isIPv6 } from "node:net";
import proxyAddr from "@fastify/proxy-addr";

/**
 * Names the server's own browser whose outgoing connection is the peer
 * `remoteAddress:remotePort` of a request, or `undefined` for any other client. The
 * server's browsers send from an address of this host (127.0.0.1 on one machine), which
 * other clients share; what their pages send must not count against those clients.
 */
export type BrowserOfConnection = (remoteAddress: string, remotePort: number) => string | undefined;

/** Whether the peer at `address`, `hop` steps from the server, is a proxy whose `X-Forwarded-For` is believed (Fastify's `trustProxy` function). */
export type TrustedProxy = (address: string, hop: number) => boolean;

/** A `--trust-proxy` entry is not an address, a CIDR range or one of proxy-addr's names. */
export class TrustProxyError extends Error {
  /** Stable code of the failure. */
  readonly code = "invalid_trust_proxy";

  constructor(message: string) {
    super(message);
    this.name = "TrustProxyError";
  }
}

/** The names proxy-addr expands into ranges. */
const RANGE_NAMES = ["loopback", "linklocal", "uniquelocal"];

/**
 * The reverse proxies to believe: IP addresses, CIDR ranges (`10.0.0.0/8`, `fd00::/8`)
 * and the names `loopback`, `linklocal`, `uniquelocal`. Never "every peer" nor a hop
 * count: either would let a client that reaches the server directly write its own
 * `X-Forwarded-For`, and so pick a fresh address for each guess. Throws
 * {@link TrustProxyError} for an empty list or an entry proxy-addr cannot read.
 */
export function trustedProxies(entries: readonly string[]): TrustedProxy {
  if (entries.length === 0) throw new TrustProxyError("The list of trusted proxies is empty; leave the setting out to trust none.");
  for (const entry of entries) {
    if (RANGE_NAMES.includes(entry)) continue;
    const [address = "", prefix, ...rest] = entry.split("/");
    const prefixOk = prefix === undefined || /^\d{1,3}$/.test(prefix) || (!isIPv6(address) && isIP(prefix) === 4);
    if (isIP(address) === 0 || !prefixOk || rest.length > 0) {
      throw new TrustProxyError(`A trusted proxy must be an IP address, a CIDR range or one of ${RANGE_NAMES.join(", ")}; received "${entry}".`);
    }
  }
  try {
    return proxyAddr.compile([...entries]);
  } catch (error) {
    throw new TrustProxyError(`The trusted proxies ${JSON.stringify(entries.join(","))} cannot be used: ${(error as Error).message}.`);
  }
}

/** How {@link clientKey} tells clients apart; both parts are optional. */
export interface ClientKeyOptions {
  /** The reverse proxies whose `X-Forwarded-For` is believed; without it, the TCP peer is the client. */
  trustedProxy?: TrustedProxy | undefined;
  /** The server's own browsers, told apart from other clients on their address. */
  browserOfConnection?: BrowserOfConnection | undefined;
}

/**
 * The key a request's client counts under for the failed-authentication limit:
 * `browser:<name>` for a connection of the server's own browser, else the client's
 * address ({@link clientAddressKey}): the TCP peer's, or behind a trusted proxy the
 * nearest address in `X-Forwarded-For` that no trusted proxy added.
 */
export function clientKey(request: IncomingMessage, options: ClientKeyOptions): string {
  const { remoteAddress, remotePort } = request.socket;
  // The socket first: it cannot be forged, and a browser's request that passed a trusted
  // proxy on this host must still count as the browser's.
  if (options.browserOfConnection && remoteAddress !== undefined && remotePort !== undefined) {
    const browser = options.browserOfConnection(remoteAddress, remotePort);
    if (browser !== undefined) return `browser:${browser}`;
  }
  if (!options.trustedProxy || remoteAddress === undefined) return clientAddressKey(remoteAddress);
  const forwarded = proxyAddr(request, options.trustedProxy);
  // A trusted proxy may pass on a value that is no address (whatever its client wrote);
  // its own address is then the nearest one known, and an arbitrary text never becomes a key.
  return clientAddressKey(isIP(forwarded.split("%")[0] as string) === 0 ? remoteAddress : forwarded);
}

/**
 * The key a client address is counted under: the IPv4 address (also when it arrives
 * IPv4-mapped, `::ffff:a.b.c.d`), or an IPv6 address's /64 prefix, because one subscriber
 * usually holds a whole /64 and could otherwise pick a new address for every request.
 */
export function clientAddressKey(address: string | undefined): string {
  if (!address) return "unknown";
  const plain = address.split("%")[0] as string;
  if (!isIPv6(plain)) return plain;
  // The WHATWG URL parser writes IPv6 in canonical form (lowercase hex groups, one "::"), which is easy to expand.
  const canonical = new URL(`http://[${plain}]/`).hostname.slice(1, -1);
  const [head = "", tail] = canonical.split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === undefined || tail === "" ? [] : tail.split(":");
  const groups = [...headGroups, ...Array<string>(8 - headGroups.length - tailGroups.length).fill("0"), ...tailGroups].map((group) => parseInt(group, 16));
  if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join(".");
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(":")}::/64`;
}
