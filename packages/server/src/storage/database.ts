import sqlite3 from "node-sqlite3-wasm";

/** A value SQLite stores or returns. */
export type SqlValue = number | bigint | string | Uint8Array | null;
/** Parameters bound to a statement: positional or named (`:name`). */
export type SqlParams = SqlValue[] | Record<string, SqlValue>;

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
 * One SQLite database file, opened for durability: rollback journal (`DELETE`) and
 * `synchronous=FULL`, so a committed transaction survives a crash or `SIGKILL` of the
 * process; and in `EXCLUSIVE` locking mode, so no other process can open it meanwhile. Every call is synchronous, which is what makes {@link transaction} atomic
 * with respect to other requests on the event loop.
 */
export class SqliteDatabase {
  readonly #db: InstanceType<typeof sqlite3.Database>;

  private constructor(db: InstanceType<typeof sqlite3.Database>) {
    this.#db = db;
  }

  /** Opens (creating if needed) the database file and sets the durability pragmas. */
  static open(file: string): SqliteDatabase {
    const db = retryWhileBusy(() => new sqlite3.Database(file));
    const database = new SqliteDatabase(db);
    database.#pragma("journal_mode", "DELETE", "delete");
    database.#pragma("synchronous", "FULL", 2);
    database.#pragma("foreign_keys", "ON", 1);
    // One process owns the data directory, so it keeps the lock for as long as the database
    // is open: without this, node-sqlite3-wasm's VFS creates and removes a lock directory
    // and SQLite re-validates its cache around every statement, about 100 times slower.
    database.#pragma("locking_mode", "EXCLUSIVE", "exclusive");
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

  /** The first row of a query, or `undefined`. */
  get<T>(sql: string, params: SqlParams = []): T | undefined {
    assertStorable(params);
    const row = retryWhileBusy(() => this.#db.get(sql, params));
    return (row ?? undefined) as T | undefined;
  }

  /** Every row of a query. */
  all<T>(sql: string, params: SqlParams = []): T[] {
    assertStorable(params);
    return retryWhileBusy(() => this.#db.all(sql, params)) as T[];
  }

  /** Runs one statement and returns how many rows it changed. */
  run(sql: string, params: SqlParams = []): number {
    assertStorable(params);
    return retryWhileBusy(() => this.#db.run(sql, params)).changes;
  }

  /** Runs a script of several statements (migrations). */
  exec(sql: string): void {
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
    }
  }

  /** Closes the database; later calls fail. Closing twice is a no-op. */
  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }
}

/** Whether `error` is SQLite refusing a row for a UNIQUE constraint. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed/.test(error.message);
}
