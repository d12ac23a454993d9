import { NameConflictError } from "../http/api-errors.js";
import { isStorableText, isUniqueViolation, type SqliteDatabase } from "../storage/database.js";
import type { Synchronous } from "../storage/unit-of-work-gate.js";
import type { CredentialPage, CredentialRow, CredentialStore, SealedField } from "./credential-store.js";

const COLUMNS = "id, project_id, name, domain, sso_provider, value_keys, values_sealed, totp_sealed, created_at, updated_at";

type StoredRow = Omit<CredentialRow, "value_keys"> & { value_keys: string };

const fromStored = (row: StoredRow): CredentialRow => ({ ...row, value_keys: JSON.parse(row.value_keys) as string[] });

const nameTaken = (name: string) => new NameConflictError(`A credential named "${name}" already exists in this project; choose another name.`);

/** {@link CredentialStore} in SQLite. */
export class SqliteCredentialStore implements Synchronous<CredentialStore> {
  readonly #db: SqliteDatabase;

  constructor(db: SqliteDatabase) {
    this.#db = db;
  }

  insert(row: CredentialRow): void {
    try {
      this.#db.transaction(() => this.#write("INSERT", row));
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(row.name);
      throw error;
    }
  }

  get(projectId: string, idOrName: string): CredentialRow | undefined {
    if (!isStorableText(idOrName)) return undefined;
    const row =
      this.#db.get<StoredRow>(`SELECT ${COLUMNS} FROM credentials WHERE project_id = ? AND id = ?`, [projectId, idOrName]) ??
      this.#db.get<StoredRow>(`SELECT ${COLUMNS} FROM credentials WHERE project_id = ? AND name = ?`, [projectId, idOrName]);
    return row === undefined ? undefined : fromStored(row);
  }

  list(projectId: string, { offset, limit, domain, query }: CredentialPage): { items: CredentialRow[]; hasMore: boolean } {
    if ((domain !== undefined && !isStorableText(domain)) || (query !== undefined && !isStorableText(query))) return { items: [], hasMore: false };
    const where = ["project_id = ?"];
    const params: (string | number)[] = [projectId];
    if (domain !== undefined) {
      where.push("domain = ?");
      params.push(domain);
    }
    if (query !== undefined) {
      // instr, not LIKE: the text is matched as written, `%` and `_` included.
      where.push("(instr(lower(name), lower(?)) > 0 OR instr(lower(domain), lower(?)) > 0 OR id = ?)");
      params.push(query, query, query);
    }
    const rows = this.#db.all<StoredRow>(`SELECT ${COLUMNS} FROM credentials WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ? OFFSET ?`, [
      ...params,
      limit + 1,
      offset,
    ]);
    return { items: rows.slice(0, limit).map(fromStored), hasMore: rows.length > limit };
  }

  update(projectId: string, id: string, change: (current: CredentialRow) => CredentialRow): CredentialRow | undefined {
    let changed: CredentialRow | undefined;
    try {
      this.#db.transaction(() => {
        const stored = this.#db.get<StoredRow>(`SELECT ${COLUMNS} FROM credentials WHERE project_id = ? AND id = ?`, [projectId, id]);
        if (stored === undefined) return;
        changed = change(fromStored(stored));
        this.#write("UPDATE", changed);
      });
    } catch (error) {
      if (isUniqueViolation(error) && changed !== undefined) throw nameTaken(changed.name);
      throw error;
    }
    return changed;
  }

  delete(projectId: string, id: string): boolean {
    return this.#db.transaction(() => this.#db.run("DELETE FROM credentials WHERE project_id = ? AND id = ?", [projectId, id])) > 0;
  }

  keyCheck(): string | undefined {
    return this.#db.get<{ sealed: string }>("SELECT sealed FROM secrets_check WHERE id = 1")?.sealed;
  }

  initKeyCheck(sealed: string): string {
    return this.#db.transaction(() => {
      this.#db.run("INSERT INTO secrets_check (id, sealed) VALUES (1, ?) ON CONFLICT (id) DO NOTHING", [sealed]);
      return this.keyCheck() ?? sealed;
    });
  }

  setKeyCheck(sealed: string): void {
    this.#db.transaction(() =>
      this.#db.run("INSERT INTO secrets_check (id, sealed) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET sealed = excluded.sealed", [sealed]),
    );
  }

  resealAll(reseal: (field: SealedField) => string): number {
    return this.#db.transaction(() => {
      let count = 0;
      const rows = this.#db.all<{ id: string; project_id: string; domain: string; values_sealed: string; totp_sealed: string | null }>(
        "SELECT id, project_id, domain, values_sealed, totp_sealed FROM credentials",
      );
      for (const row of rows) {
        const values = reseal({ ...row, column: "values_sealed", sealed: row.values_sealed });
        const totp = row.totp_sealed === null ? null : reseal({ ...row, column: "totp_sealed", sealed: row.totp_sealed });
        this.#db.run("UPDATE credentials SET values_sealed = ?, totp_sealed = ? WHERE id = ?", [values, totp, row.id]);
        count += totp === null ? 1 : 2;
      }
      return count;
    });
  }

  #write(verb: "INSERT" | "UPDATE", row: CredentialRow): void {
    const values = [row.name, row.domain, row.sso_provider, JSON.stringify(row.value_keys), row.values_sealed, row.totp_sealed, row.updated_at];
    if (verb === "INSERT") {
      this.#db.run(
        "INSERT INTO credentials (name, domain, sso_provider, value_keys, values_sealed, totp_sealed, updated_at, id, project_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [...values, row.id, row.project_id, row.created_at],
      );
    } else {
      this.#db.run(
        "UPDATE credentials SET name = ?, domain = ?, sso_provider = ?, value_keys = ?, values_sealed = ?, totp_sealed = ?, updated_at = ? WHERE id = ?",
        [...values, row.id],
      );
    }
  }
}
