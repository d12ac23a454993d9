import { createHash, randomBytes } from "node:crypto";

/** Who a hosted login page acts for: one flow of one connection, until the flow's end. */
export interface HostedGrant {
  projectId: string;
  connectionId: string;
  flowId: string;
  /** Milliseconds since the epoch; the grant reads as gone after it. */
  expiresAt: number;
}

const digest = (secret: string) => createHash("sha256").update(secret).digest("base64url");
const secret = () => randomBytes(32).toString("base64url");

/**
 * The access a login flow's `hosted_url` gives: a single-use code (in the URL's fragment,
 * so no request line or log carries it) exchanged once for a token that reads that one
 * connection's flow and answers it, nothing else, until the flow's `flow_expires_at`.
 * Only digests are kept; one code and at most one token per flow this node runs.
 */
export class HostedAccess {
  readonly #codes = new Map<string, HostedGrant>();
  readonly #tokens = new Map<string, HostedGrant>();

  /** A new code for `grant`, replacing whatever the connection's earlier flow had. */
  issue(grant: HostedGrant, now = Date.now()): string {
    this.revoke(grant.connectionId);
    // Grants past their time are dropped here: the maps hold at most the flows not yet over.
    for (const map of [this.#codes, this.#tokens]) {
      for (const [key, held] of map) if (now >= held.expiresAt) map.delete(key);
    }
    const code = secret();
    this.#codes.set(digest(code), grant);
    return code;
  }

  /** The token for `code`, once: a code used, unknown or past its flow's end gives `undefined`. */
  exchange(code: string, now = Date.now()): { token: string; grant: HostedGrant } | undefined {
    const key = digest(code);
    const grant = this.#codes.get(key);
    this.#codes.delete(key);
    if (grant === undefined || now >= grant.expiresAt) return undefined;
    const token = secret();
    this.#tokens.set(digest(token), grant);
    return { token, grant };
  }

  /** What `token` grants, or `undefined` when it is unknown or its flow's time is over. */
  grantOf(token: string, now = Date.now()): HostedGrant | undefined {
    const grant = this.#tokens.get(digest(token));
    return grant === undefined || now >= grant.expiresAt ? undefined : grant;
  }

  /** Ends every code and token of connection `connectionId` (its flow was superseded, or it was deleted). */
  revoke(connectionId: string): void {
    for (const map of [this.#codes, this.#tokens]) {
      for (const [key, grant] of map) if (grant.connectionId === connectionId) map.delete(key);
    }
  }
}
