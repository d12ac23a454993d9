import { createHash } from "node:crypto";

/** Who a request acts as: the key, its organization and, for a project-scoped key, its project. */
export interface Credential {
  keyId: string;
  orgId: string;
  /** The key's project; `null` for an org-wide key. */
  projectId: string | null;
}

/** A key just issued: the only moment its secret exists outside the caller's hands. */
export interface IssuedKey extends Credential {
  /** The bearer token, `bsk_` and 32 characters. Stored nowhere; only its SHA-256 is kept. */
  secret: string;
}

/** The digest of a secret, the only form in which a key is stored. */
export function secretDigest(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** API keys, stored as SHA-256 hashes of their secrets ({@link secretDigest}). */
export interface ApiKeyStore {
  /**
   * Inserts a new key, org-wide when `projectId` is `null`; must run inside a unit of
   * work. Returns the secret, which cannot be recovered later.
   */
  insert(orgId: string, projectId: string | null): Promise<IssuedKey>;
  /** The credential whose secret this is, or `undefined`. */
  authenticate(secret: string): Promise<Credential | undefined>;
}
