import { newApiKeySecret, newId } from "../storage/ids.js";
import { getRow, type Programs, runSql, type SqlProgram, type SqlStoreContext } from "../storage/sql-program.js";
import { type Dialect, sql } from "../storage/sql-text.js";
import { type ApiKeyStore, type Credential, type IssuedKey, secretDigest } from "./api-key-store.js";

/** {@link ApiKeyStore}'s rules, once for both databases. */
export class SqlApiKeyStore implements Programs<ApiKeyStore> {
  /** The database the store runs on (its rules are the same on both). */
  readonly dialect: Dialect;

  constructor(context: SqlStoreContext) {
    this.dialect = context.dialect;
  }

  *insert(orgId: string, projectId: string | null): SqlProgram<IssuedKey> {
    const secret = newApiKeySecret();
    const keyId = newId("apiKey");
    yield* runSql(
      sql`INSERT INTO api_keys (id, org_id, project_id, secret_sha256, created_at) VALUES (${keyId}, ${orgId}, ${projectId}, ${secretDigest(secret)}, ${new Date().toISOString()})`,
    );
    return { keyId, orgId, projectId, secret };
  }

  *authenticate(secret: string): SqlProgram<Credential | undefined> {
    // A hash lookup: comparing digests of a secret with ~190 random bits leaks nothing useful through timing.
    // Remembered in SQLite only until the next write: a key removed or changed is never served from memory.
    // PostgreSQL reads it every time: another server on the database may have added a key (never kept in memory).
    const row = yield* getRow<{ id: string; org_id: string; project_id: string | null }>(
      sql`SELECT id, org_id, project_id FROM api_keys WHERE secret_sha256 = ${secretDigest(secret)}`,
      { remembered: true },
    );
    return row && { keyId: row.id, orgId: row.org_id, projectId: row.project_id };
  }
}
