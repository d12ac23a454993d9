import type { SqlParams, SqlValue } from "./sql-values.js";
import { isSelect } from "./statement-kind.js";

// Remembered reads between two writes: a page of projects, keys, organizations; past it the
// oldest goes (requests with many different wrong keys cannot grow it further).
const MAX_REMEMBERED = 1_000;

/**
 * The key of a remembered read, or `undefined` for parameters it does not remember
 * (BigInt, bytes). Each value is written with its type and (text) its length, so no two
 * different lists of parameters share a key.
 */
function rememberKey(kind: string, sql: string, params: SqlParams): string | undefined {
  let key = `${kind}\u0000${sql}\u0000`;
  const add = (value: SqlValue): boolean => {
    if (typeof value === "string") key += `s${value.length}:${value}`;
    else if (typeof value === "number") key += `n${value};`;
    else if (value === null) key += "z;";
    else return false;
    return true;
  };
  if (Array.isArray(params)) {
    for (const value of params) if (!add(value)) return undefined;
  } else {
    for (const name in params) if (!add(name) || !add(params[name] as SqlValue)) return undefined;
  }
  return key;
}

function freezeRow<T>(row: T): T {
  return row !== null && typeof row === "object" ? Object.freeze(row) : row;
}

/**
 * Results of the hot reads (a request's key, its organization, a page of projects) since
 * the last write, frozen (rows too) as later calls share them. Only a SELECT whose
 * parameters are numbers, text or null is remembered; any other read runs every time.
 *
 * The database must call {@link forget} before EVERY write of its connection (any
 * statement that is not a SELECT, a script, every transaction's start) and after every
 * transaction's end, commit or rollback (what was read inside may have been rolled back).
 * The database is opened in EXCLUSIVE locking mode by the one server that owns the data
 * directory, so no other process can write while it is open: a remembered result is then
 * always exactly what the query would read now, and a revoked key or a renamed or
 * archived project is never served from here.
 */
export class RememberedReads {
  readonly #results = new Map<string, unknown>();

  /** The row `read` returns for `sql` with `params`, remembered. */
  row<T>(sql: string, params: SqlParams, read: () => T | undefined): T | undefined {
    return this.#remember("get", sql, params, () => freezeRow(read()));
  }

  /** The rows `read` returns for `sql` with `params`, remembered. */
  rows<T>(sql: string, params: SqlParams, read: () => T[]): readonly T[] {
    return this.#remember("all", sql, params, () => Object.freeze(read().map(freezeRow)));
  }

  /**
   * The rows held by the one column of the row `read` returns, a JSON array of row objects
   * (as `json_group_array` builds it: one call into SQLite instead of one per value),
   * parsed and remembered; no row is no rows.
   */
  jsonRows<T>(sql: string, params: SqlParams, read: () => Record<string, unknown> | undefined): readonly T[] {
    return this.#remember("json", sql, params, () => {
      const row = read();
      const text = row === undefined ? "[]" : Object.values(row)[0];
      return Object.freeze((JSON.parse(typeof text === "string" ? text : "[]") as T[]).map(freezeRow));
    });
  }

  /** Forgets every remembered result: the database is about to write, or just ended a transaction. */
  forget(): void {
    this.#results.clear();
  }

  #remember<R>(kind: string, sql: string, params: SqlParams, read: () => R): R {
    const key = rememberKey(kind, sql, params);
    if (key === undefined || !isSelect(sql)) return read();
    if (this.#results.has(key)) return this.#results.get(key) as R;
    const result = read();
    if (this.#results.size >= MAX_REMEMBERED) this.#results.delete(this.#results.keys().next().value as string);
    this.#results.set(key, result);
    return result;
  }
}
