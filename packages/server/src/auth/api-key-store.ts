import { createHash } from "node:crypto";
import { newApiKeySecret, newId } from "../storage/ids.js";
import type { SqliteDatabase } from "../storage/database.js";

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

function sha256(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** API keys, stored as SHA-256 hashes of their secrets. */
export class ApiKeyStore {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  /**
   * Inserts a new key, org-wide when `projectId` is `null`; must run inside a
   * transaction. Returns the secret, which cannot be recovered later.
   */
  insert(orgId: string, projectId: string | null): IssuedKey {
    const secret = newApiKeySecret();
    const keyId = newId("apiKey");
    this.#db.run("INSERT INTO api_keys (id, org_id, project_id, secret_sha256, created_at) VALUES (?, ?, ?, ?, ?)", [
      keyId,
      orgId,
      projectId,
      sha256(secret),
      new Date().toISOString(),
    ]);
    return { keyId, orgId, projectId, secret };
  }

  /** The credential whose secret this is, or `undefined`. */
  authenticate(secret: string): Credential | undefined {
    // A hash lookup: comparing digests of a secret with ~190 random bits leaks nothing useful through timing.
    // Remembered only until the next write: a key removed or changed is never served from memory.
    const row = this.#db.remembered<{ id: string; org_id: string; project_id: string | null }>("get", "SELECT id, org_id, project_id FROM api_keys WHERE secret_sha256 = ?", [sha256(secret)]);
    return row && { keyId: row.id, orgId: row.org_id, projectId: row.project_id };
  }
}
