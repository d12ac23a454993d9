import sqlite3 from "node-sqlite3-wasm";

/** A value SQLite stores or returns. */
export type SqlValue = number | bigint | string | Uint8Array | null;
/** Parameters bound to a statement: positional or named (`:name`). */
export type SqlParams = SqlValue[] | Record<string, SqlValue>;

type Statement = ReturnType<InstanceType<typeof sqlite3.Database>["prepare"]>;

// Every statement of the stores is a constant text (a few dozen); the bound only matters
// if one ever is not.
const MAX_STATEMENTS = 256;

// Remembered reads between two writes: a page of projects, keys, organizations; past it the
// oldest goes (requests with many different wrong keys cannot grow it further).
const MAX_REMEMBERED = 1_000;

// The statements' texts are constants, so which are SELECTs is worked out once each.
const selects = new Map<string, boolean>();

/** Whether `sql` is a plain query: anything else may write, and empties the remembered reads. */
function isSelect(sql: string): boolean {
  let select = selects.get(sql);
  if (select === undefined) {
    select = /^\s*SELECT\s/i.test(sql);
    if (selects.size < MAX_STATEMENTS) selects.set(sql, select);
  }
  return select;
}

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

/** Why a storage operation failed, as a stable code. */
export type StorageErrorCode = "storage_busy" | "storage_misuse";

/** A failure of the storage layer itself (not of a constraint the caller can expect). */
export class StorageError extends Error {
  /** Stable code of the failure. */
  readonly code: StorageErrorCode;

  constructor(code: StorageErrorCode, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "StorageError";
    this.code = code;
  }
}

// node-sqlite3-wasm's VFS has no sleep, so SQLite's busy_timeout cannot wait for a lock.
// The only other holder of the lock is a short-lived process such as `keys create`, so
// a bounded synchronous wait between attempts is enough and keeps transactions atomic.
const BUSY_ATTEMPTS = 400;
const BUSY_WAIT_MS = 5;
const waitCell = new Int32Array(new SharedArrayBuffer(4));

function isBusy(error: unknown): boolean {
  return error instanceof Error && /database is locked|SQLITE_BUSY/i.test(error.message);
}

function retryWhileBusy<T>(action: () => T): T {
  for (let attempt = 1; ; attempt++) {
    try {
      return action();
    } catch (error) {
      if (!isBusy(error)) throw error;
      if (attempt >= BUSY_ATTEMPTS) {
        throw new StorageError("storage_busy", `The database stayed locked by another process for ${BUSY_ATTEMPTS * BUSY_WAIT_MS} ms.`, error);
      }
      Atomics.wait(waitCell, 0, 0, BUSY_WAIT_MS);
    }
  }
}

// node-sqlite3-wasm hands text to SQLite as a C string, which ends at the first NUL: "a\0b"
// would be stored as "a", and a lookup of "Default\0x" would find "Default". Stores keep
// NUL out ({@link isStorableText}); this check makes a store that forgot fail loudly
// instead of reading, writing or deleting the wrong row.
function assertStorable(params: SqlParams): void {
  const values = Array.isArray(params) ? params : Object.values(params);
  for (const value of values) {
    if (typeof value === "string" && !isStorableText(value)) {
      throw new StorageError("storage_misuse", "A statement parameter contains a NUL character, which SQLite's binding would cut the text at; check it before it reaches the database.");
    }
  }
}

/**
 * Whether SQLite can hold `text` as it is: it has no NUL character. A key with a NUL can
 * name no stored row, so a lookup of one finds nothing without asking the database.
 */
export function isStorableText(text: string): boolean {
  return !text.includes("\u0000");
}

/**
 * One SQLite database file, opened for durability: write-ahead log (`WAL`) with
 * `synchronous=FULL`, so every committed transaction is synced and survives a crash or
 * `SIGKILL` of the process; and in `EXCLUSIVE` locking mode, so no other process can open
 * it meanwhile (open it only once the owner stopped or died). Every call is synchronous,
 * which is what makes {@link transaction} atomic with respect to other requests on the
 * event loop.
 */
export class SqliteDatabase {
  readonly #db: InstanceType<typeof sqlite3.Database>;
  // Prepared statements by their SQL text. Preparing (parsing and planning, each a call
  // into the WebAssembly module) cost more than running the small queries of a request;
  // a prepared statement holds no data, so what it reads is always what is stored now.
  readonly #statements = new Map<string, Statement>();
  // Results of the hot reads ({@link remembered}) since the last write. Emptied by EVERY
  // write of this connection (any statement that is not a SELECT, every transaction's
  // start and end, commit or rollback), before the write runs. The database is opened in
  // EXCLUSIVE locking mode by the one server that owns the data directory, so no other
  // process can write while it is open: a remembered result is always exactly what the
  // query would read now, and a revoked key or a renamed or archived project is never
  // served from here.
  readonly #remembered = new Map<string, unknown>();

  private constructor(db: InstanceType<typeof sqlite3.Database>) {
    this.#db = db;
  }

  /** Opens (creating if needed) the database file and sets the durability pragmas. */
  static open(file: string): SqliteDatabase {
    const db = retryWhileBusy(() => new sqlite3.Database(file));
    const database = new SqliteDatabase(db);
    // One process owns the data directory, so it keeps the lock for as long as the database
    // is open: without this, node-sqlite3-wasm's VFS creates and removes a lock directory
    // and SQLite re-validates its cache around every statement, about 100 times slower.
    // It must come first: the VFS has no shared memory, and SQLite can open a WAL
    // database without shared memory only if the lock is exclusive before the first read.
    database.#pragma("locking_mode", "EXCLUSIVE", "exclusive");
    // A commit appends to the write-ahead log and syncs it once (synchronous=FULL: every
    // commit, not only checkpoints), where the rollback journal took several fsyncs of
    // two files. A SIGKILL leaves the log, which the next open replays; as the lock is
    // exclusive, no other process reads the file while it is open.
    database.#pragma("journal_mode", "WAL", "wal");
    database.#pragma("synchronous", "FULL", 2);
    database.#pragma("foreign_keys", "ON", 1);
    // SQLite's lower() folds ASCII only; names are Unicode, so filters fold in JavaScript.
    db.function("casefold", (value) => (typeof value === "string" ? value.toLowerCase() : value), { deterministic: true });
    return database;
  }

  #pragma(name: string, value: string, expected: string | number): void {
    retryWhileBusy(() => this.#db.exec(`PRAGMA ${name}=${value}`));
    const row = retryWhileBusy(() => this.#db.get(`PRAGMA ${name}`)) as Record<string, SqlValue> | null;
    if (row?.[name] !== expected) {
      throw new StorageError("storage_misuse", `PRAGMA ${name} is ${String(row?.[name])}; expected ${expected}.`);
    }
  }

  /** The prepared statement of `sql`, prepared on first use; the least recently prepared goes past {@link MAX_STATEMENTS}. */
  #statement(sql: string): Statement {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = retryWhileBusy(() => this.#db.prepare(sql));
      if (this.#statements.size >= MAX_STATEMENTS) {
        const [oldest, old] = this.#statements.entries().next().value as [string, Statement];
        this.#statements.delete(oldest);
        old.finalize();
      }
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /**
   * {@link get} or {@link all} of a SELECT, remembered until the next write of any kind (see
   * `#remembered`): for the reads every request makes (its key, its organization, a page
   * of projects). The result is frozen (rows too), as it is shared by later calls.
   */
  remembered<T>(kind: "get", sql: string, params?: SqlParams): T | undefined;
  remembered<T>(kind: "all", sql: string, params?: SqlParams): readonly T[];
  remembered<T>(kind: "get" | "all", sql: string, params: SqlParams = []): T | undefined | readonly T[] {
    return this.#remember(kind, sql, params, () => (kind === "get" ? freezeRow(this.get<T>(sql, params)) : Object.freeze(this.all<T>(sql, params).map(freezeRow))));
  }

  /**
   * The rows of a SELECT whose one row's one column is a JSON array of row objects (as
   * `json_group_array` builds it: one call into SQLite instead of one per value), parsed
   * and remembered like {@link remembered}.
   */
  rememberedJsonRows<T>(sql: string, params: SqlParams = []): readonly T[] {
    return this.#remember("json", sql, params, () => {
      const row = this.get<Record<string, unknown>>(sql, params);
      const text = row === undefined ? "[]" : Object.values(row)[0];
      return Object.freeze((JSON.parse(typeof text === "string" ? text : "[]") as T[]).map(freezeRow));
    });
  }

  #remember<R>(kind: string, sql: string, params: SqlParams, read: () => R): R {
    const key = rememberKey(kind, sql, params);
    if (key === undefined || !isSelect(sql)) return read();
    if (this.#remembered.has(key)) return this.#remembered.get(key) as R;
    const result = read();
    if (this.#remembered.size >= MAX_REMEMBERED) this.#remembered.delete(this.#remembered.keys().next().value as string);
    this.#remembered.set(key, result);
    return result;
  }

  /**
   * Runs `use` on the prepared statement of `sql` (retrying while busy). A statement whose
   * step failed (a constraint, say) keeps that error and refuses to be bound again, so it
   * is dropped from the cache and finalized, and the next call prepares it anew.
   */
  #using<R>(sql: string, use: (statement: Statement) => R): R {
    return retryWhileBusy(() => {
      const statement = this.#statement(sql);
      try {
        return use(statement);
      } catch (error) {
        this.#statements.delete(sql);
        try {
          statement.finalize();
        } catch {
          // finalize() reports the step's error again; the original is rethrown below.
        }
        throw error;
      }
    });
  }

  /** The first row of a query, or `undefined`. */
  get<T>(sql: string, params: SqlParams = []): T | undefined {
    assertStorable(params);
    if (!isSelect(sql)) this.#remembered.clear();
    const row = this.#using(sql, (statement) => {
      const rows = statement.iterate(params);
      const first = rows.next();
      // Ends the query; the statement is reset when it is next bound.
      rows.return?.(undefined);
      return first.done ? undefined : first.value;
    });
    return (row ?? undefined) as T | undefined;
  }

  /** Every row of a query. */
  all<T>(sql: string, params: SqlParams = []): T[] {
    assertStorable(params);
    if (!isSelect(sql)) this.#remembered.clear();
    return this.#using(sql, (statement) => statement.all(params)) as T[];
  }

  /** Runs one statement and returns how many rows it changed. */
  run(sql: string, params: SqlParams = []): number {
    assertStorable(params);
    this.#remembered.clear();
    return this.#using(sql, (statement) => statement.run(params)).changes;
  }

  /** Runs a script of several statements (migrations). */
  exec(sql: string): void {
    this.#remembered.clear();
    retryWhileBusy(() => this.#db.exec(sql));
  }

  /**
   * Runs `work` inside one write transaction (`BEGIN IMMEDIATE` ... `COMMIT`) and
   * returns its result once the commit is on disk; any exception rolls everything back
   * and is rethrown. `work` must be synchronous: an `await` inside would let other
   * requests interleave with a half-done transaction.
   */
  transaction<T>(work: () => T): T {
    if (this.#db.inTransaction) {
      throw new StorageError("storage_misuse", "Transactions do not nest; call the inner work directly.");
    }
    this.#remembered.clear();
    retryWhileBusy(() => this.#db.exec("BEGIN IMMEDIATE"));
    try {
      const result = work();
      if (result instanceof Promise) {
        throw new StorageError("storage_misuse", "A transaction's work returned a Promise; it must be synchronous.");
      }
      this.#db.exec("COMMIT");
      return result;
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
      throw error;
    } finally {
      // What was read inside the transaction may have been rolled back.
      this.#remembered.clear();
    }
  }

  /** Closes the database; later calls fail. Closing twice is a no-op. */
  close(): void {
    if (!this.#db.isOpen) return;
    this.#remembered.clear();
    for (const statement of this.#statements.values()) statement.finalize();
    this.#statements.clear();
    this.#db.close();
  }
}

/** Whether `error` is SQLite refusing a row for a UNIQUE constraint. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed/.test(error.message);
}
