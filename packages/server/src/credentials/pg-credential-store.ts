import { NameConflictError } from "../http/api-errors.js";
import { isStorableText } from "../storage/database.js";
import { isPgUniqueViolation, type PgDatabase, type PgValue } from "../storage/pg-database.js";
import type { CredentialPage, CredentialRow, CredentialStore, SealedField } from "./credential-store.js";

const COLUMNS = "id, project_id, name, domain, sso_provider, value_keys, values_sealed, totp_sealed, created_at, updated_at";

type StoredRow = Omit<CredentialRow, "value_keys"> & { value_keys: string };

const fromStored = (row: StoredRow): CredentialRow => ({ ...row, value_keys: JSON.parse(row.value_keys) as string[] });

const nameTaken = (name: string) => new NameConflictError(`A credential named "${name}" already exists in this project; choose another name.`);

/** {@link CredentialStore} in PostgreSQL, shared by every node. */
export class PgCredentialStore implements CredentialStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async insert(row: CredentialRow): Promise<void> {
    try {
      await this.#db.transaction(() => this.#write("INSERT", row));
    } catch (error) {
      if (isPgUniqueViolation(error)) throw nameTaken(row.name);
      throw error;
    }
  }

  async get(projectId: string, idOrName: string): Promise<CredentialRow | undefined> {
    if (!isStorableText(idOrName)) return undefined;
    const row =
      (await this.#db.get<StoredRow>(`SELECT ${COLUMNS} FROM credentials WHERE project_id = $1 AND id = $2`, [projectId, idOrName])) ??
      (await this.#db.get<StoredRow>(`SELECT ${COLUMNS} FROM credentials WHERE project_id = $1 AND name = $2`, [projectId, idOrName]));
    return row === undefined ? undefined : fromStored(row);
  }

  async list(projectId: string, { offset, limit, domain, query }: CredentialPage): Promise<{ items: CredentialRow[]; hasMore: boolean }> {
    if ((domain !== undefined && !isStorableText(domain)) || (query !== undefined && !isStorableText(query))) return { items: [], hasMore: false };
    const where = ["project_id = $1"];
    const params: PgValue[] = [projectId];
    if (domain !== undefined) {
      params.push(domain);
      where.push(`domain = $${params.length}`);
    }
    if (query !== undefined) {
      params.push(query);
      // strpos, not LIKE: the text is matched as written, `%` and `_` included.
      const at = `$${params.length}`;
      where.push(`(strpos(lower(name), lower(${at})) > 0 OR strpos(lower(domain), lower(${at})) > 0 OR id = ${at})`);
    }
    params.push(limit + 1, offset);
    const rows = await this.#db.all<StoredRow>(
      `SELECT ${COLUMNS} FROM credentials WHERE ${where.join(" AND ")} ORDER BY seq LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return { items: rows.slice(0, limit).map(fromStored), hasMore: rows.length > limit };
  }

  async update(projectId: string, id: string, change: (current: CredentialRow) => CredentialRow): Promise<CredentialRow | undefined> {
    let changed: CredentialRow | undefined;
    try {
      await this.#db.transaction(async () => {
        const stored = await this.#db.get<StoredRow>(`SELECT ${COLUMNS} FROM credentials WHERE project_id = $1 AND id = $2 FOR UPDATE`, [projectId, id]);
        if (stored === undefined) return;
        changed = change(fromStored(stored));
        await this.#write("UPDATE", changed);
      });
    } catch (error) {
      if (isPgUniqueViolation(error) && changed !== undefined) throw nameTaken(changed.name);
      throw error;
    }
    return changed;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return (await this.#db.transaction(() => this.#db.run("DELETE FROM credentials WHERE project_id = $1 AND id = $2", [projectId, id]))) > 0;
  }

  async keyCheck(): Promise<string | undefined> {
    return (await this.#db.get<{ sealed: string }>("SELECT sealed FROM secrets_check WHERE id = 1"))?.sealed;
  }

  async initKeyCheck(sealed: string): Promise<string> {
    return this.#db.transaction(async () => {
      await this.#db.run("INSERT INTO secrets_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO NOTHING", [sealed]);
      return (await this.keyCheck()) ?? sealed;
    });
  }

  async setKeyCheck(sealed: string): Promise<void> {
    await this.#db.transaction(() =>
      this.#db.run("INSERT INTO secrets_check (id, sealed) VALUES (1, $1) ON CONFLICT (id) DO UPDATE SET sealed = excluded.sealed", [sealed]),
    );
  }

  async resealAll(reseal: (field: SealedField) => string): Promise<number> {
    return this.#db.transaction(async () => {
      // Locked first: a node writing a credential meanwhile waits, then seals with the new key.
      await this.#db.run("LOCK TABLE credentials IN EXCLUSIVE MODE");
      let count = 0;
      const rows = await this.#db.all<{ id: string; project_id: string; domain: string; values_sealed: string; totp_sealed: string | null }>(
        "SELECT id, project_id, domain, values_sealed, totp_sealed FROM credentials",
      );
      for (const row of rows) {
        const values = reseal({ ...row, column: "values_sealed", sealed: row.values_sealed });
        const totp = row.totp_sealed === null ? null : reseal({ ...row, column: "totp_sealed", sealed: row.totp_sealed });
        await this.#db.run("UPDATE credentials SET values_sealed = $1, totp_sealed = $2 WHERE id = $3", [values, totp, row.id]);
        count += totp === null ? 1 : 2;
      }
      return count;
    });
  }

  async #write(verb: "INSERT" | "UPDATE", row: CredentialRow): Promise<void> {
    const values: PgValue[] = [row.name, row.domain, row.sso_provider, JSON.stringify(row.value_keys), row.values_sealed, row.totp_sealed, row.updated_at];
    if (verb === "INSERT") {
      await this.#db.run(
        "INSERT INTO credentials (name, domain, sso_provider, value_keys, values_sealed, totp_sealed, updated_at, id, project_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
        [...values, row.id, row.project_id, row.created_at],
      );
    } else {
      await this.#db.run(
        "UPDATE credentials SET name = $1, domain = $2, sso_provider = $3, value_keys = $4, values_sealed = $5, totp_sealed = $6, updated_at = $7 WHERE id = $8",
        [...values, row.id],
      );
    }
  }
}
