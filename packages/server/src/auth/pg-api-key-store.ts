import { newApiKeySecret, newId } from "../storage/ids.js";
import type { PgDatabase } from "../storage/pg-database.js";
import { type ApiKeyStore, type Credential, type IssuedKey, secretDigest } from "./api-key-store.js";

/** {@link ApiKeyStore} in PostgreSQL. */
export class PgApiKeyStore implements ApiKeyStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async insert(orgId: string, projectId: string | null): Promise<IssuedKey> {
    const secret = newApiKeySecret();
    const keyId = newId("apiKey");
    await this.#db.run("INSERT INTO api_keys (id, org_id, project_id, secret_sha256, created_at) VALUES ($1, $2, $3, $4, $5)", [
      keyId,
      orgId,
      projectId,
      secretDigest(secret),
      new Date().toISOString(),
    ]);
    return { keyId, orgId, projectId, secret };
  }

  async authenticate(secret: string): Promise<Credential | undefined> {
    // Read every time: another server on the database may have added a key (never kept in memory).
    const row = await this.#db.get<{ id: string; org_id: string; project_id: string | null }>(
      "SELECT id, org_id, project_id FROM api_keys WHERE secret_sha256 = $1",
      [secretDigest(secret)],
    );
    return row && { keyId: row.id, orgId: row.org_id, projectId: row.project_id };
  }
}
