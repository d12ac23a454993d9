import type { SqliteDatabase } from "./database.js";
import type { PgDatabase, PgValue } from "./pg-database.js";
import type { Programs, SqlProgram, SqlStep } from "./sql-program.js";
import type { SqlValue } from "./sql-values.js";
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
    case "jsonRows": {
      const row = await db.get<Record<string, unknown>>(text, values);
      const json = row === undefined ? undefined : Object.values(row)[0];
      return typeof json === "string" ? JSON.parse(json) : (json ?? []);
    }
    case "run":
    case "lock":
      return db.run(text, values);
  }
}

// The methods of `store` (its own class's and its ancestors'), each given to `wrap`.
function methodsOf<S extends object>(store: S, wrap: (method: (...args: unknown[]) => unknown) => (...args: unknown[]) => unknown): Record<string, unknown> {
  const methods: Record<string, unknown> = {};
  for (let proto = Object.getPrototypeOf(store); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      const method = (store as Record<string, unknown>)[name];
      if (name === "constructor" || name in methods || typeof method !== "function") continue;
      // Looked up at each call, so that a method replaced later (a test's spy) is the one called.
      methods[name] = wrap((...args) => ((store as Record<string, unknown>)[name] as (...a: unknown[]) => unknown).apply(store, args));
    }
  }
  return methods;
}

function isProgram(value: unknown): value is SqlProgram<unknown> {
  return typeof value === "object" && value !== null && typeof (value as { next?: unknown }).next === "function" && Symbol.iterator in value;
}

/** A store written as {@link Programs}, run on SQLite: every method synchronous. */
export function sqliteStore<S extends object>(programs: Programs<S>, db: SqliteDatabase): Synchronous<S> {
  return methodsOf(programs, (method) => (...args) => {
    const result = method(...args);
    return isProgram(result) ? runOnSqlite(db, result) : result;
  }) as Synchronous<S>;
}

/** A store written as {@link Programs}, run on PostgreSQL. */
export function pgStore<S extends object>(programs: Programs<S>, db: PgDatabase): S {
  return methodsOf(programs, (method) => (...args) => {
    const result = method(...args);
    return isProgram(result) ? runOnPg(db, result) : result;
  }) as S;
}

/** Whether `error` is either database refusing a row for a UNIQUE constraint. */
export function isUniqueViolation(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  return (error as { code?: unknown }).code === "23505" || (error instanceof Error && /UNIQUE constraint failed/.test(error.message));
}
