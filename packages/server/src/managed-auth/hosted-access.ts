import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { AuthConnectionRow, AuthConnectionStore, ConnectionInternals } from "../auth-connections/auth-connection-store.js";
import { connectionAt } from "../auth-connections/flow-expiry.js";

/** Who a hosted login page acts for: one flow of one connection, until the flow's end. */
export interface HostedGrant {
  projectId: string;
  connectionId: string;
  flowId: string;
  /** Milliseconds since the epoch; the grant reads as gone after it. */
  expiresAt: number;
}

/** What a connection stores of its flow's hosted page: digests only, of the code until it is used, then of the token it gave. */
export type HostedSecrets = NonNullable<ConnectionInternals["hosted"]>;

/** A code or token: the project and connection it reaches (so that any node finds them), then its secret. */
const FORMAT = /^(proj_[a-z2-7]{24})\.(conn_[a-z2-7]{24})\.([A-Za-z0-9_-]{43})$/;
/** The longest code or token: the two ids, the secret and the dots. */
export const HOSTED_SECRET_MAX_CHARS = 5 + 24 + 1 + 5 + 24 + 1 + 43;

const digest = (secret: string) => createHash("sha256").update(secret).digest("base64url");
const sameDigest = (stored: string | undefined, secret: string) =>
  stored !== undefined && stored.length === 43 && timingSafeEqual(Buffer.from(stored), Buffer.from(digest(secret)));

function parse(text: string): { projectId: string; connectionId: string; secret: string } | undefined {
  const match = FORMAT.exec(text);
  return match === null ? undefined : { projectId: match[1] as string, connectionId: match[2] as string, secret: match[3] as string };
}

function grantOf(row: AuthConnectionRow): HostedGrant | undefined {
  const expiresAt = Date.parse(row.record.flow_expires_at ?? "");
  const flowId = row.internals.flowId;
  return flowId === undefined || Number.isNaN(expiresAt) ? undefined : { projectId: row.projectId, connectionId: row.record.id, flowId, expiresAt };
}

/**
 * The access a login flow's `hosted_url` gives: a single-use code (in the URL's fragment,
 * so no request line or log carries it) exchanged once, while the flow runs, for a token that reads that one
 * connection's flow and answers it, nothing else, until the flow's `flow_expires_at`.
 * Kept with the connection in the shared database (digests only), so that any node
 * serves the page and a code is used once across all of them; a new flow replaces its
 * connection's code and token, and a deleted connection takes them along.
 */
export class HostedAccess {
  readonly #connections: AuthConnectionStore;

  constructor(connections: AuthConnectionStore) {
    this.#connections = connections;
  }

  /** A new code for the flow of connection `connectionId` about to start, and what its connection stores of it (with the flow, in one write). */
  static issue(projectId: string, connectionId: string): { code: string; stored: HostedSecrets } {
    const secret = randomBytes(32).toString("base64url");
    return { code: `${projectId}.${connectionId}.${secret}`, stored: { codeSha256: digest(secret) } };
  }

  /** The token for `code`, once across every node: a code used, unknown or past its flow's end gives `undefined`. */
  async exchange(code: string, now = Date.now()): Promise<{ token: string; grant: HostedGrant } | undefined> {
    const parsed = parse(code);
    if (parsed === undefined) return undefined;
    const secret = randomBytes(32).toString("base64url");
    const updated = await this.#connections.update(parsed.projectId, parsed.connectionId, (current) => {
      const grant = grantOf(current);
      // A code opens a flow still under way only (`hosted_url` reads null after it); a token given before reads its end.
      const running = connectionAt(current.record, now).flow_status === "IN_PROGRESS";
      if (grant === undefined || !running || !sameDigest(current.internals.hosted?.codeSha256, parsed.secret)) return undefined;
      return { ...current, internals: { ...current.internals, hosted: { tokenSha256: digest(secret) } } };
    });
    const grant = updated === undefined ? undefined : grantOf(updated);
    return grant === undefined ? undefined : { token: `${parsed.projectId}.${parsed.connectionId}.${secret}`, grant };
  }

  /** What `token` grants and its connection as stored now, or `undefined` when it is unknown or its flow's time is over. */
  async grantOf(token: string, now = Date.now()): Promise<{ grant: HostedGrant; row: AuthConnectionRow } | undefined> {
    const parsed = parse(token);
    if (parsed === undefined) return undefined;
    const row = await this.#connections.find(parsed.projectId, parsed.connectionId);
    if (row === undefined || !sameDigest(row.internals.hosted?.tokenSha256, parsed.secret)) return undefined;
    const grant = grantOf(row);
    return grant === undefined || now >= grant.expiresAt ? undefined : { grant, row };
  }
}
