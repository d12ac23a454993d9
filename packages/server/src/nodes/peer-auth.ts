import { createHash, createHmac, hkdfSync, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { ServerLog } from "../observe/server-log.js";

/**
 * A node's proof that it sent the request it travels in (see {@link PeerAuth}):
 * `v1;from=<node>;to=<node>;t=<ms>;n=<nonce>;b=<body sha256>;m=<mac>`.
 */
export const PEER_PROOF_HEADER = "x-browser-service-proof";
/** The client a forwarded request came from, as the forwarding node counted it (its rate-limit key). */
export const PEER_CLIENT_HEADER = "x-browser-service-client";
/** The scope the forwarding node resolved (credential, organization, project), as base64url JSON. */
export const PEER_SCOPE_HEADER = "x-browser-service-scope";
/** On a create forwarded to the node chosen for it: that node's id, so that it starts the browser itself. */
export const PLACED_HEADER = "x-browser-service-placed";
/** With {@link PLACED_HEADER}: the lease the node was chosen under; the create is refused once it is over. */
export const PLACED_LEASE_HEADER = "x-browser-service-placed-lease";
/** On a relayed DevTools upgrade: the browser the forwarding node checked the client's credential for. */
export const OPENS_HEADER = "x-browser-service-opens";

/** The shortest node secret accepted: 32 characters. */
export const MIN_NODE_SECRET_LENGTH = 32;

/**
 * How far a proof's time may be from the receiver's clock, either way: 30 s. Nodes keep
 * their clocks within it (NTP); a proof is accepted once within it, never again.
 */
export const PROOF_WINDOW_MS = 30_000;

/** Proofs remembered at once against replay: past this many within one window, proofs are refused until old ones expire. */
const MAX_REMEMBERED_PROOFS = 200_000;

// What a declared client key may be: an address, an IPv6 /64, or `browser:<id>` (see client-key.ts).
const CLIENT_KEY = /^[A-Za-z0-9_.:/-]{1,128}$/;
const PROOF = /^v1;from=([A-Za-z0-9._-]{1,64});to=([A-Za-z0-9._-]{1,64});t=(\d{1,15});n=([A-Za-z0-9_-]{22});b=([A-Za-z0-9_-]{43});m=([A-Za-z0-9_-]{43})$/;

/** The SHA-256 of `body` (nothing: the empty body), base64url: what a proof says of a request's body. */
export function bodyDigest(body: string | Buffer | undefined): string {
  return createHash("sha256")
    .update(body ?? "")
    .digest("base64url");
}

/** What a node says of a request it forwards, each covered by its proof. */
export interface PeerClaims {
  /** The client the request counts as ({@link PEER_CLIENT_HEADER}). */
  client?: string;
  /** The scope resolved for it ({@link PEER_SCOPE_HEADER}). */
  scope?: string;
  /** The node chosen for a create ({@link PLACED_HEADER}). */
  placed?: string;
  /** The lease that node was chosen under ({@link PLACED_LEASE_HEADER}). */
  placedLease?: string;
  /**
   * The browser whose DevTools the forwarding node let the client open, having checked
   * its credential ({@link OPENS_HEADER}): the credential itself stays on that node.
   */
  opens?: string;
}

/** A request whose proof checked: who sent it, and what it says, all of it signed. */
export interface VerifiedPeer extends PeerClaims {
  /** The node that sent it. */
  from: string;
  /** The SHA-256 (base64url) of the body it was sent with: a request whose body differs is not the one signed. */
  bodySha256: string;
  /**
   * The key of a peer channel this request opens (see {@link PeerAuth.opening}): derived
   * from the secret the proof was made with and the proof's nonce, so only the node that
   * made the proof holds it, and no two channels share one.
   */
  channelKey: Buffer;
}

/** What opens a peer channel: the headers of the upgrade, and the key its frames are sealed with. */
export interface ChannelOpening {
  headers: Record<string, string>;
  key: Buffer;
}

/** What a proof is made over: the request as the forwarding node sends it. */
export interface SignedRequest {
  method: string;
  /** The path and query, exactly as on the request line. */
  path: string;
  /** The node it is sent to. */
  to: string;
  body?: string | Buffer | undefined;
  claims?: PeerClaims;
}

/** Settings of {@link PeerAuth}. */
export interface PeerAuthOptions {
  /** The nodes' shared secret: proofs are made with it, and checked with it. */
  secret: string;
  /** Secrets whose proofs are accepted too, never made with: the old or the new one while the secret is rotated. */
  acceptedSecrets?: readonly string[];
  /** This node's id: a proof is accepted only when it was made for this node. */
  nodeId: string;
  /** Milliseconds since the epoch; default `Date.now`. */
  clock?: () => number;
  /**
   * Told why a proof made with an accepted secret (so by a node, or replayed from one)
   * was refused all the same: a node whose clock is off, or one configured for another
   * node id, shows here and nowhere else.
   */
  onRefused?: (refusal: ProofRefusal) => void;
}

/** Why a proof made with an accepted secret was refused. */
export interface ProofRefusal {
  reason: "other_node" | "outside_window" | "seen_already";
  /** The node the proof names as its sender. */
  from: string;
  /** How far the proof's time is from this node's clock, in ms (positive: ahead). */
  skewMs: number;
}

const channelKeyOf = (key: Buffer, nonce: string, from: string, to: string): Buffer =>
  Buffer.from(hkdfSync("sha256", key, nonce, `browser-service peer channel v1|${from}|${to}`, 32));

const keyOf = (secret: string): Buffer => Buffer.from(hkdfSync("sha256", secret, "", "browser-service node proof v1", 32));

function checkedSecret(secret: string): string {
  if (secret.length < MIN_NODE_SECRET_LENGTH) throw new RangeError(`The node secret must be at least ${MIN_NODE_SECRET_LENGTH} characters.`);
  return secret;
}

const single = (value: string | string[] | undefined): string | undefined => (typeof value === "string" ? value : undefined);

/**
 * How the nodes tell each other's requests from everyone else's, without the secret ever
 * leaving a node: each request a node sends another carries a proof, an HMAC-SHA256 keyed
 * by the shared secret over the method, the path and query, the body's SHA-256, what the
 * node says of the request ({@link PeerClaims}), the sending and receiving nodes' ids, a
 * time and a random nonce. A node accepts a proof made for it, within
 * {@link PROOF_WINDOW_MS} of its clock, once; anything else (no proof, a wrong one, one
 * for another node, an old one, one seen already, a request changed since) is a plain
 * client's request, and its `x-browser-service-*` headers mean nothing. A captured request
 * authorises nothing beyond itself, once, and reveals no key.
 */
export class PeerAuth {
  readonly #signing: Buffer;
  readonly #accepted: Buffer[];
  readonly #nodeId: string;
  readonly #clock: () => number;
  readonly #onRefused: ((refusal: ProofRefusal) => void) | undefined;
  // Nonces of the proofs accepted, with when each may be forgotten, in order of arrival.
  readonly #seen = new Map<string, number>();

  constructor(options: PeerAuthOptions) {
    this.#signing = keyOf(checkedSecret(options.secret));
    this.#accepted = [this.#signing, ...(options.acceptedSecrets ?? []).map((secret) => keyOf(checkedSecret(secret)))];
    this.#nodeId = options.nodeId;
    this.#clock = options.clock ?? Date.now;
    this.#onRefused = options.onRefused;
  }

  /** The headers that carry `request`'s claims and the proof of them, to be sent with it. */
  sign(request: SignedRequest): Record<string, string> {
    return this.#signed(request, randomBytes(16).toString("base64url"));
  }

  /**
   * The headers of an upgrade to `path` on node `to` that opens a peer channel, and the
   * key that node derives from them when their proof checks ({@link VerifiedPeer.channelKey}).
   */
  opening(to: string, path: string): ChannelOpening {
    const nonce = randomBytes(16).toString("base64url");
    return { headers: this.#signed({ method: "GET", path, to }, nonce), key: channelKeyOf(this.#signing, nonce, this.#nodeId, to) };
  }

  #signed(request: SignedRequest, nonce: string): Record<string, string> {
    const claims = request.claims ?? {};
    const time = String(this.#clock());
    const body = bodyDigest(request.body);
    const mac = this.#mac(this.#signing, request.method, request.path, this.#nodeId, request.to, time, nonce, body, claims);
    const headers: Record<string, string> = {
      [PEER_PROOF_HEADER]: `v1;from=${this.#nodeId};to=${request.to};t=${time};n=${nonce};b=${body};m=${mac}`,
    };
    if (claims.client !== undefined) headers[PEER_CLIENT_HEADER] = claims.client;
    if (claims.scope !== undefined) headers[PEER_SCOPE_HEADER] = claims.scope;
    if (claims.placed !== undefined) headers[PLACED_HEADER] = claims.placed;
    if (claims.placedLease !== undefined) headers[PLACED_LEASE_HEADER] = claims.placedLease;
    if (claims.opens !== undefined) headers[OPENS_HEADER] = claims.opens;
    return headers;
  }

  /**
   * The sender and claims of `request` when it carries a proof made for this node, with a
   * secret this node accepts, over this very method, path and claims, within the window,
   * and seen for the first time (it is remembered from now on); else `undefined`. The
   * body is the caller's to compare with {@link VerifiedPeer.bodySha256}, once read.
   */
  verify(request: IncomingMessage): VerifiedPeer | undefined {
    const proof = single(request.headers[PEER_PROOF_HEADER]);
    const match = proof === undefined ? null : PROOF.exec(proof);
    if (match === null) return undefined;
    const [, from, to, time, nonce, body, mac] = match as unknown as [string, string, string, string, string, string, string];
    const claims: PeerClaims = {};
    const client = single(request.headers[PEER_CLIENT_HEADER]);
    const scope = single(request.headers[PEER_SCOPE_HEADER]);
    const placed = single(request.headers[PLACED_HEADER]);
    const placedLease = single(request.headers[PLACED_LEASE_HEADER]);
    const opens = single(request.headers[OPENS_HEADER]);
    if (client !== undefined) claims.client = client;
    if (scope !== undefined) claims.scope = scope;
    if (placed !== undefined) claims.placed = placed;
    if (placedLease !== undefined) claims.placedLease = placedLease;
    if (opens !== undefined) claims.opens = opens;
    const given = Buffer.from(mac, "base64url");
    const method = request.method ?? "";
    const path = request.url ?? "";
    // Every accepted key is tried, so the time taken does not tell which one matched.
    let matched: Buffer | undefined;
    for (const key of this.#accepted) {
      if (timingSafeEqual(given, Buffer.from(this.#mac(key, method, path, from, to, time, nonce, body, claims), "base64url"))) matched = key;
    }
    if (matched === undefined) return undefined;
    const now = this.#clock();
    const skewMs = Number(time) - now;
    const refused = (reason: ProofRefusal["reason"]) => {
      this.#onRefused?.({ reason, from, skewMs });
      return undefined;
    };
    if (to !== this.#nodeId) return refused("other_node");
    if (Math.abs(skewMs) > PROOF_WINDOW_MS) return refused("outside_window");
    if (!this.#remember(nonce, Number(time) + PROOF_WINDOW_MS, now)) return refused("seen_already");
    if (claims.client !== undefined && !CLIENT_KEY.test(claims.client)) delete claims.client;
    return { from, bodySha256: body, channelKey: channelKeyOf(matched, nonce, from, to), ...claims };
  }

  // Each field is one JSON string of the array, so no two requests sign the same text.
  #mac(key: Buffer, method: string, path: string, from: string, to: string, time: string, nonce: string, body: string, claims: PeerClaims): string {
    const text = JSON.stringify([
      "browser-service node proof v1",
      method,
      path,
      from,
      to,
      time,
      nonce,
      body,
      claims.client ?? null,
      claims.scope ?? null,
      claims.placed ?? null,
      claims.placedLease ?? null,
      claims.opens ?? null,
    ]);
    return createHmac("sha256", key).update(text).digest("base64url");
  }

  /** Records a nonce until `expires`; `false` when it was seen already, or too many are remembered to take one more. */
  #remember(nonce: string, expires: number, now: number): boolean {
    for (const [old, until] of this.#seen) {
      if (until > now) break;
      this.#seen.delete(old);
    }
    if (this.#seen.has(nonce) || this.#seen.size >= MAX_REMEMBERED_PROOFS) return false;
    // Past the window the proof's time refuses it, so the nonce need not be kept longer.
    this.#seen.set(nonce, Math.max(expires, now + 1));
    return true;
  }
}

const REFUSAL_MESSAGES: Record<ProofRefusal["reason"], string> = {
  other_node: "a request carried a node's proof made for another node id: check that each node's --advertise-url names that node",
  outside_window: `a request carried a node's proof more than ${PROOF_WINDOW_MS / 1000} s from this node's clock: keep the nodes' clocks synchronised`,
  seen_already: "a node's proof arrived a second time: a request captured between the nodes may be being replayed",
};

/**
 * A {@link PeerAuthOptions.onRefused} that warns in `log`, at most once a minute for each
 * reason: anyone who captured the nodes' traffic can send its proofs again, and must not
 * fill the log with them.
 */
export function logProofRefusals(log: Pick<ServerLog, "warn">, clock: () => number = Date.now): (refusal: ProofRefusal) => void {
  const lastLogged = new Map<ProofRefusal["reason"], number>();
  return (refusal) => {
    const now = clock();
    const last = lastLogged.get(refusal.reason);
    if (last !== undefined && now - last < 60_000) return;
    lastLogged.set(refusal.reason, now);
    log.warn({ node: refusal.from, reason: refusal.reason, skewMs: refusal.skewMs }, REFUSAL_MESSAGES[refusal.reason]);
  };
}
