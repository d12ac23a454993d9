import type { Dialect, Sql } from "./sql-text.js";

/**
 * One step a store's rule asks of its database. `lock` takes a row lock that only
 * PostgreSQL needs (SQLite's write transaction already holds the whole database);
 * `remembered` reads may be answered from SQLite's reads remembered since the last write;
 * `jsonRows` reads a one-row, one-column JSON array of rows (SQLite builds a page that way
 * in one call).
 */
export type SqlStep =
  | { readonly op: "get" | "all" | "run" | "lock" | "jsonRows"; readonly sql: Sql; readonly remembered?: boolean }
  | { readonly op: "transaction"; readonly body: () => SqlProgram<unknown> }
  | { readonly op: "files"; readonly sync: () => unknown; readonly async: () => Promise<unknown> };

/**
 * A store's rule written once for both databases: a generator that yields each
 * {@link SqlStep} and is resumed with its result. SQLite's runner drives it synchronously
 * and PostgreSQL's with `await`, so the rule (its reads, checks, errors and writes, in
 * order) is the same code on both, and the SQLite stores stay synchronous.
 */
export type SqlProgram<T> = Generator<SqlStep, T, unknown>;

/** The first row of `statement`, or `undefined`. */
export function* getRow<T>(statement: Sql, options: { remembered?: boolean } = {}): SqlProgram<T | undefined> {
  return (yield { op: "get", sql: statement, remembered: options.remembered === true }) as T | undefined;
}

/** Every row of `statement`. */
export function* allRows<T>(statement: Sql, options: { remembered?: boolean } = {}): SqlProgram<readonly T[]> {
  return (yield { op: "all", sql: statement, remembered: options.remembered === true }) as readonly T[];
}

/** The rows of a statement whose one row's one column is a JSON array of row objects, remembered (SQLite only). */
export function* jsonRows<T>(statement: Sql): SqlProgram<readonly T[]> {
  return (yield { op: "jsonRows", sql: statement }) as readonly T[];
}

/** Runs `statement`; how many rows it changed. */
export function* runSql(statement: Sql): SqlProgram<number> {
  return (yield { op: "run", sql: statement }) as number;
}

/** Takes the row lock of `statement` (a `SELECT ... FOR UPDATE`) in PostgreSQL; nothing in SQLite. */
export function* lockRows(statement: Sql): SqlProgram<void> {
  yield { op: "lock", sql: statement };
}

/**
 * Runs `body` as one transaction: all of its writes commit or none do. In SQLite one does
 * not nest in another (nor in a unit of work); in PostgreSQL one inside another joins it.
 */
export function* inTransaction<T>(body: () => SqlProgram<T>): SqlProgram<T> {
  return (yield { op: "transaction", body }) as T;
}

/**
 * File work between a rule's statements, in both forms: SQLite's runner (where every call
 * is synchronous, inside its transaction) runs `sync`; PostgreSQL's awaits `async`, so a
 * large file does not hold the event loop.
 */
export function* fileWork<T>(sync: () => T, async: () => Promise<T>): SqlProgram<T> {
  return (yield { op: "files", sync, async }) as T;
}

/** What a store written as programs is given: the database it runs on. */
export interface SqlStoreContext {
  readonly dialect: Dialect;
}

/**
 * A store interface (whose methods return promises) as programs: each method returns a
 * {@link SqlProgram} of the value the interface's promise resolves to.
 */
export type Programs<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => SqlProgram<R> : S[K];
};
