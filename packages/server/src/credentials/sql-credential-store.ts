import { NameConflictError } from "../http/api-errors.js";
import { isStorableText } from "../storage/database.js";
import { isUniqueViolation } from "../storage/program-runners.js";
import { allRows, getRow, inTransaction, lockRows, type Programs, runSql, type SqlProgram, type SqlStoreContext } from "../storage/sql-program.js";
import { joinSql, rawSql, type Sql, sql, sqlContains } from "../storage/sql-text.js";
import type { CredentialPage, CredentialRow, CredentialStore, SealedField } from "./credential-store.js";

const COLUMNS = rawSql("id, project_id, name, domain, sso_provider, value_keys, values_sealed, totp_sealed, created_at, updated_at");

type StoredRow = Omit<CredentialRow, "value_keys"> & { value_keys: string };

const fromStored = (row: StoredRow): CredentialRow => ({ ...row, value_keys: JSON.parse(row.value_keys) as string[] });

const nameTaken = (name: string) => new NameConflictError(`A credential named "${name}" already exists in this project; choose another name.`);

/**
 * {@link CredentialStore}'s rules, once for both databases (in PostgreSQL shared by every
 * node). The rules that read before they write lock what they read first in PostgreSQL
 * (SQLite's write transaction holds the whole database).
 */
export class SqlCredentialStore implements Programs<CredentialStore> {
  // Built like every store over the seam; a credential's rules read no dialect of their own.
  // biome-ignore lint/complexity/noUselessConstructor: it takes the context the other stores take.
  constructor(_context: SqlStoreContext) {}

  *insert(row: CredentialRow): SqlProgram<void> {
    try {
      yield* inTransaction(() => this.#write("INSERT", row));
    } catch (error) {
      if (isUniqueViolation(error)) throw nameTaken(row.name);
      throw error;
    }
  }

  *get(projectId: string, idOrName: string): SqlProgram<CredentialRow | undefined> {
    // No id or name holds a NUL, which SQLite's binding would cut the text at.
    if (!isStorableText(idOrName)) return undefined;
    const row =
      (yield* getRow<StoredRow>(sql`SELECT ${COLUMNS} FROM credentials WHERE project_id = ${projectId} AND id = ${idOrName}`)) ??
      (yield* getRow<StoredRow>(sql`SELECT ${COLUMNS} FROM credentials WHERE project_id = ${projectId} AND name = ${idOrName}`));
    return row === undefined ? undefined : fromStored(row);
  }

  *list(projectId: string, { offset, limit, domain, query }: CredentialPage): SqlProgram<{ items: CredentialRow[]; hasMore: boolean }> {
    if ((domain !== undefined && !isStorableText(domain)) || (query !== undefined && !isStorableText(query))) return { items: [], hasMore: false };
    const where: Sql[] = [sql`project_id = ${projectId}`];
    if (domain !== undefined) where.push(sql`domain = ${domain}`);
    if (query !== undefined) {
      where.push(sql`(${sqlContains(rawSql("name"), query)} OR ${sqlContains(rawSql("domain"), query)} OR id = ${query})`);
    }
    const rows = yield* allRows<StoredRow>(
      sql`SELECT ${COLUMNS} FROM credentials WHERE ${joinSql(where, " AND ")} ORDER BY seq LIMIT ${limit + 1} OFFSET ${offset}`,
    );
    return { items: rows.slice(0, limit).map(fromStored), hasMore: rows.length > limit };
  }

  *update(projectId: string, id: string, change: (current: CredentialRow) => CredentialRow): SqlProgram<CredentialRow | undefined> {
    let changed: CredentialRow | undefined;
    try {
      yield* inTransaction(() =>
        this.#update(projectId, id, (current) => {
          changed = change(current);
          return changed;
        }),
      );
    } catch (error) {
      if (isUniqueViolation(error) && changed !== undefined) throw nameTaken(changed.name);
      throw error;
    }
    return changed;
  }

  *#update(projectId: string, id: string, change: (current: CredentialRow) => CredentialRow): SqlProgram<void> {
    yield* lockRows(sql`SELECT 1 FROM credentials WHERE project_id = ${projectId} AND id = ${id} FOR UPDATE`);
    const stored = yield* getRow<StoredRow>(sql`SELECT ${COLUMNS} FROM credentials WHERE project_id = ${projectId} AND id = ${id}`);
    if (stored === undefined) return;
    yield* this.#write("UPDATE", change(fromStored(stored)));
  }

  *delete(projectId: string, id: string): SqlProgram<boolean> {
    return (yield* inTransaction(() => runSql(sql`DELETE FROM credentials WHERE project_id = ${projectId} AND id = ${id}`))) > 0;
  }

  *keyCheck(): SqlProgram<string | undefined> {
    return (yield* getRow<{ sealed: string }>(sql`SELECT sealed FROM secrets_check WHERE id = 1`))?.sealed;
  }

  *initKeyCheck(sealed: string): SqlProgram<string> {
    return yield* inTransaction(() => this.#initKeyCheck(sealed));
  }

  *#initKeyCheck(sealed: string): SqlProgram<string> {
    yield* runSql(sql`INSERT INTO secrets_check (id, sealed) VALUES (1, ${sealed}) ON CONFLICT (id) DO NOTHING`);
    return (yield* this.keyCheck()) ?? sealed;
  }

  *setKeyCheck(sealed: string): SqlProgram<void> {
    yield* inTransaction(() =>
      runSql(sql`INSERT INTO secrets_check (id, sealed) VALUES (1, ${sealed}) ON CONFLICT (id) DO UPDATE SET sealed = excluded.sealed`),
    );
  }

  *resealAll(reseal: (field: SealedField) => string): SqlProgram<number> {
    return yield* inTransaction(() => this.#resealAll(reseal));
  }

  *#resealAll(reseal: (field: SealedField) => string): SqlProgram<number> {
    // Locked first in PostgreSQL: a node writing a credential meanwhile waits, then seals with the new key.
    yield* lockRows(sql`LOCK TABLE credentials IN EXCLUSIVE MODE`);
    let count = 0;
    const rows = yield* allRows<{ id: string; project_id: string; domain: string; values_sealed: string; totp_sealed: string | null }>(
      sql`SELECT id, project_id, domain, values_sealed, totp_sealed FROM credentials`,
    );
    for (const row of rows) {
      const values = reseal({ ...row, column: "values_sealed", sealed: row.values_sealed });
      const totp = row.totp_sealed === null ? null : reseal({ ...row, column: "totp_sealed", sealed: row.totp_sealed });
      yield* runSql(sql`UPDATE credentials SET values_sealed = ${values}, totp_sealed = ${totp} WHERE id = ${row.id}`);
      count += totp === null ? 1 : 2;
    }
    return count;
  }

  *#write(verb: "INSERT" | "UPDATE", row: CredentialRow): SqlProgram<void> {
    const valueKeys = JSON.stringify(row.value_keys);
    if (verb === "INSERT") {
      yield* runSql(
        sql`INSERT INTO credentials (name, domain, sso_provider, value_keys, values_sealed, totp_sealed, updated_at, id, project_id, created_at) VALUES (${row.name}, ${row.domain}, ${row.sso_provider}, ${valueKeys}, ${row.values_sealed}, ${row.totp_sealed}, ${row.updated_at}, ${row.id}, ${row.project_id}, ${row.created_at})`,
      );
    } else {
      yield* runSql(
        sql`UPDATE credentials SET name = ${row.name}, domain = ${row.domain}, sso_provider = ${row.sso_provider}, value_keys = ${valueKeys}, values_sealed = ${row.values_sealed}, totp_sealed = ${row.totp_sealed}, updated_at = ${row.updated_at} WHERE id = ${row.id}`,
      );
    }
  }
}
