import type { SqliteDatabase } from "./database.js";
import type { PgDatabase, PgValue } from "./pg-database.js";
import type { Programs, SqlProgram, SqlStep } from "./sql-program.js";
import type { SqlValue } from "./sql-values.js";
import { StorageError } from "./storage-error.js";
import { storeMethods } from "./store-methods.js";
import type { Synchronous } from "./unit-of-work-gate.js";

/** Runs `program` to its end on SQLite, synchronously; a step's error is thrown into the program, where its rule may catch it. */
export function runOnSqlite<T>(db: SqliteDatabase, program: SqlProgram<T>): T {
  let next = program.next();
  while (!next.done) {
    let result: unknown;
    try {
      result = sqliteStep(db, next.value);
    } catch (error) {
      next = program.throw(error);
      continue;
    }
    next = program.next(result);
  }
  return next.value;
}

function sqliteStep(db: SqliteDatabase, step: SqlStep): unknown {
  if (step.op === "transaction") return db.transaction(() => runOnSqlite(db, step.body()));
  if (step.op === "files") return step.sync();
  // The write transaction SQLite's rules run in already holds the whole database.
  if (step.op === "lock") return undefined;
  const { text, params } = step.sql.render("sqlite");
  const values = params as SqlValue[];
  switch (step.op) {
    case "get":
      return step.remembered === true ? db.remembered("get", text, values) : db.get(text, values);
    case "all":
      return step.remembered === true ? db.remembered("all", text, values) : db.all(text, values);
    case "jsonRows":
      return db.rememberedJsonRows(text, values);
    case "run":
      return db.run(text, values);
  }
}

/** Runs `program` to its end on PostgreSQL; a step's error is thrown into the program, where its rule may catch it. */
export async function runOnPg<T>(db: PgDatabase, program: SqlProgram<T>): Promise<T> {
  let next = program.next();
  while (!next.done) {
    let result: unknown;
    try {
      result = await pgStep(db, next.value);
    } catch (error) {
      next = program.throw(error);
      continue;
    }
    next = program.next(result);
  }
  return next.value;
}

async function pgStep(db: PgDatabase, step: SqlStep): Promise<unknown> {
  if (step.op === "transaction") return db.transaction(() => runOnPg(db, step.body()));
  if (step.op === "files") return step.async();
  const { text, params } = step.sql.render("postgres");
  const values = params as PgValue[];
  switch (step.op) {
    case "get":
      return db.get(text, values);
    case "all":
      return db.all(text, values);
    case "jsonRows":
      // A page built as one JSON text is SQLite's way round its per-value cost; PostgreSQL reads rows.
      throw new StorageError("storage_misuse", "jsonRows is a SQLite step; read rows with allRows on PostgreSQL.");
    case "run":
    case "lock":
      return db.run(text, values);
  }
}

function isProgram(value: unknown): value is SqlProgram<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { next?: unknown }).next === "function" && Symbol.iterator in value;
}

/** A store written as {@link Programs}, run on SQLite: every method synchronous. */
export function sqliteStore<S extends object>(programs: Programs<S>, db: SqliteDatabase): Synchronous<S> {
  return storeMethods(programs, (method) => (...args) => {
    const result = method(...args);
    return isProgram(result) ? runOnSqlite(db, result) : result;
  }) as Synchronous<S>;
}

/** A store written as {@link Programs}, run on PostgreSQL. */
export function pgStore<S extends object>(programs: Programs<S>, db: PgDatabase): S {
  return storeMethods(programs, (method) => (...args) => {
    const result = method(...args);
    return isProgram(result) ? runOnPg(db, result) : result;
  }) as S;
}

/** Whether `error` is either database refusing a row for a UNIQUE constraint. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  return (error as { code?: unknown }).code === "23505" || (error instanceof Error && /UNIQUE constraint failed/.test(error.message));
}
