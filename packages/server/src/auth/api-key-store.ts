import { createHash } from "node:crypto";

/** Who a request acts as: the key, its organization and, for a project-scoped key, its project. */
export interface Credential {
  keyId: string;
  orgId: string;
  /** The key's project; `null` for an org-wide key. */
  projectId: string | null;
}

/**
 * Whether a key may act on a project: one of its organization, and the key org-wide or
 * scoped to that very project. The API's requests and the DevTools endpoint's upgrades
 * both ask it; a project it may not reach is answered as a missing one.
 */
export function keyReaches(credential: Credential, project: { org_id: string; id: string }): boolean {
  return credential.orgId === project.org_id && (credential.projectId === null || credential.projectId === project.id);
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
