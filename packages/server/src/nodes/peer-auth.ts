import { createHash, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

/** The shared secret of the nodes, sent by a node with each request it forwards to another. */
export const PEER_HEADER = "x-browser-service-peer";
/** The client a forwarded request came from, as the forwarding node counted it (its rate-limit key). */
export const PEER_CLIENT_HEADER = "x-browser-service-client";
/** The scope the forwarding node resolved (credential, organization, project), as base64url JSON. */
export const PEER_SCOPE_HEADER = "x-browser-service-scope";
/** On a create forwarded to the node chosen for it: that node's id, so that it starts the browser itself. */
export const PLACED_HEADER = "x-browser-service-placed";
/** With {@link PLACED_HEADER}: the lease the node was chosen under; the create is refused once it is over. */
export const PLACED_LEASE_HEADER = "x-browser-service-placed-lease";

// What a declared client key may be: an address, an IPv6 /64, or `browser:<id>` (see client-key.ts).
const CLIENT_KEY = /^[A-Za-z0-9_.:/-]{1,128}$/;

/** The shortest node secret accepted: 32 characters. */
export const MIN_NODE_SECRET_LENGTH = 32;

/**
 * Tells requests forwarded by another node (which carry the nodes' shared secret) from
 * everyone else's. Only a verified peer's request is trusted for what the forwarding node
 * already did: counting it against the key's rate limit, checking its `Origin`, and
 * naming its client. Anyone else's `x-browser-service-*` headers are ignored.
 */
export class PeerAuth {
  readonly #secret: string;
  readonly #digest: Buffer;

  constructor(secret: string) {
    if (secret.length < MIN_NODE_SECRET_LENGTH) throw new RangeError(`The node secret must be at least ${MIN_NODE_SECRET_LENGTH} characters.`);
    this.#secret = secret;
    this.#digest = createHash("sha256").update(secret).digest();
  }

  /** Whether these headers carry the nodes' secret (compared in constant time). */
  verify(headers: IncomingHttpHeaders): boolean {
    const given = headers[PEER_HEADER];
    if (typeof given !== "string") return false;
    return timingSafeEqual(createHash("sha256").update(given).digest(), this.#digest);
  }

  /** The client a verified peer declares, or `undefined` (not a peer, or no usable value). */
  declaredClient(headers: IncomingHttpHeaders): string | undefined {
    const client = headers[PEER_CLIENT_HEADER];
    return typeof client === "string" && CLIENT_KEY.test(client) && this.verify(headers) ? client : undefined;
  }

  /** The scope a verified peer resolved for its request, or `undefined` (not a peer, or none sent). */
  declaredScope<T>(headers: IncomingHttpHeaders): T | undefined {
    const scope = headers[PEER_SCOPE_HEADER];
    if (typeof scope !== "string" || !this.verify(headers)) return undefined;
    return JSON.parse(Buffer.from(scope, "base64url").toString("utf8")) as T;
  }

  /** The headers that open a peer channel: the secret alone (each call on it names its own request). */
  channelHeaders(): Record<string, string> {
    return { [PEER_HEADER]: this.#secret };
  }

  /** The headers a forwarded request carries. */
  headers(clientKey: string): Record<string, string> {
    return { [PEER_HEADER]: this.#secret, [PEER_CLIENT_HEADER]: clientKey };
  }
}
