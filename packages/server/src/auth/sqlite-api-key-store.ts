import type { SqliteDatabase } from "../storage/database.js";
import { newApiKeySecret, newId } from "../storage/ids.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import { type ApiKeyStore, type Credential, type IssuedKey, secretDigest } from "./api-key-store.js";

/** {@link ApiKeyStore} in SQLite. */
export class SqliteApiKeyStore implements Synchronous<ApiKeyStore> {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  insert(orgId: string, projectId: string | null): IssuedKey {
    const secret = newApiKeySecret();
    const keyId = newId("apiKey");
    this.#db.run("INSERT INTO api_keys (id, org_id, project_id, secret_sha256, created_at) VALUES (?, ?, ?, ?, ?)", [
      keyId,
      orgId,
      projectId,
      secretDigest(secret),
      new Date().toISOString(),
    ]);
    return { keyId, orgId, projectId, secret };
  }

  authenticate(secret: string): Credential | undefined {
    // A hash lookup: comparing digests of a secret with ~190 random bits leaks nothing useful through timing.
    // Remembered only until the next write: a key removed or changed is never served from memory.
    const row = this.#db.remembered<{ id: string; org_id: string; project_id: string | null }>(
      "get",
      "SELECT id, org_id, project_id FROM api_keys WHERE secret_sha256 = ?",
      [secretDigest(secret)],
    );
    return row && { keyId: row.id, orgId: row.org_id, projectId: row.project_id };
  }
}
