import { closeSync, fdatasyncSync, openSync } from "node:fs";
import { type FileHandle, open as openFile } from "node:fs/promises";
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
export type StorageErrorCode = "storage_busy" | "storage_misuse" | "storage_sync_failed";

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

/** Settings of {@link SqliteDatabase.open}. */
export interface SqliteDatabaseOptions {
  /**
   * Syncs the write-ahead log to disk off the event loop. Default: `fdatasync` of the log
   * on Node's thread pool. Tests replace it to hold a sync back or make it fail.
   */
  syncLog?: () => Promise<void>;
}

/**
 * `fdatasync` of the write-ahead log, as SQLite itself syncs on Linux: the log's content
 * (and its size when it grew) without its timestamps, so that once the log has reached
 * its working size a sync does not wait for the file system's journal, which Chromium's
 * profile writes keep busy. The file is opened once and kept: SQLite keeps the same log
 * file for as long as the database is open (a checkpoint rewinds it, closing removes it).
 */
class LogSync {
  readonly #path: string;
  #handle: Promise<FileHandle> | undefined;

  constructor(path: string) {
    this.#path = path;
  }

  readonly sync = async (): Promise<void> => {
    this.#handle ??= openFile(this.#path, "r");
    const handle = await this.#handle.catch((error: unknown) => {
      this.#handle = undefined;
      throw error;
    });
    await handle.datasync();
  };

  /** The same sync, blocking (see {@link SqliteDatabase.flush}). */
  syncNow(): void {
    const fd = openSync(this.#path, "r");
    try {
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  close(): void {
    void this.#handle?.then((handle) => handle.close()).catch(() => undefined);
    this.#handle = undefined;
  }
}

interface SyncWaiter {
  commits: number;
  resolve: () => void;
  reject: (error: StorageError) => void;
}

/**
 * One SQLite database file, opened for durability: write-ahead log (`WAL`), in
 * `EXCLUSIVE` locking mode, so no other process can open it meanwhile (open it only once
 * the owner stopped or died). Every call is synchronous, which is what makes
 * {@link transaction} atomic with respect to other requests on the event loop.
 *
 * A commit is on disk in two steps. SQLite writes it to the log (`synchronous=NORMAL`),
 * straight into the operating system's cache, so it survives a crash or `SIGKILL` of the
 * process at once; then the log is synced to the disk ({@link durable}) off the event
 * loop, one sync for every commit made before it started, so that creates arriving
 * together share one sync instead of each blocking every request for its own. Whoever
 * tells a client that a write happened waits for {@link durable} first (the server does
 * it for every response), and whoever tells anyone else calls {@link flush}: nothing is
 * acknowledged before it would survive a power loss. SQLite syncs the log and the
 * database itself around each checkpoint.
 */
export class SqliteDatabase {
  readonly #db: InstanceType<typeof sqlite3.Database>;
  readonly #log: LogSync;
  readonly #syncLog: () => Promise<void>;
  // Commits made, and how many of them are known to be on disk.
  #commits = 0;
  #synced = 0;
  #syncRunning = false;
  #syncScheduled = false;
  readonly #syncWaiters: SyncWaiter[] = [];
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

  private constructor(db: InstanceType<typeof sqlite3.Database>, file: string, options: SqliteDatabaseOptions) {
    this.#db = db;
    this.#log = new LogSync(`${file}-wal`);
    this.#syncLog = options.syncLog ?? this.#log.sync;
  }

  /** Opens (creating if needed) the database file and sets the durability pragmas. */
  static open(file: string, options: SqliteDatabaseOptions = {}): SqliteDatabase {
    const db = retryWhileBusy(() => new sqlite3.Database(file));
    const database = new SqliteDatabase(db, file, options);
    // One process owns the data directory, so it keeps the lock for as long as the database
    // is open: without this, node-sqlite3-wasm's VFS creates and removes a lock directory
    // and SQLite re-validates its cache around every statement, about 100 times slower.
    // It must come first: the VFS has no shared memory, and SQLite can open a WAL
    // database without shared memory only if the lock is exclusive before the first read.
    database.#pragma("locking_mode", "EXCLUSIVE", "exclusive");
    // A commit appends to the write-ahead log, where the rollback journal took several
    // fsyncs of two files. A SIGKILL leaves the log, which the next open replays; as the
    // lock is exclusive, no other process reads the file while it is open. NORMAL: SQLite
    // syncs the log only around checkpoints; every commit's sync is #sync's, off the
    // event loop (see the class).
    database.#pragma("journal_mode", "WAL", "wal");
    database.#pragma("synchronous", "NORMAL", 1);
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
    const select = isSelect(sql);
    if (!select) this.#remembered.clear();
    const row = this.#using(sql, (statement) => {
      const rows = statement.iterate(params);
      const first = rows.next();
      // Ends the query; the statement is reset when it is next bound.
      rows.return?.(undefined);
      return first.done ? undefined : first.value;
    });
    if (!select) this.#wrote();
    return (row ?? undefined) as T | undefined;
  }

  /** Every row of a query. */
  all<T>(sql: string, params: SqlParams = []): T[] {
    assertStorable(params);
    const select = isSelect(sql);
    if (!select) this.#remembered.clear();
    const rows = this.#using(sql, (statement) => statement.all(params)) as T[];
    if (!select) this.#wrote();
    return rows;
  }

  /** Runs one statement and returns how many rows it changed. */
  run(sql: string, params: SqlParams = []): number {
    assertStorable(params);
    this.#remembered.clear();
    const { changes } = this.#using(sql, (statement) => statement.run(params));
    this.#wrote();
    return changes;
  }

  /** Runs a script of several statements (migrations). */
  exec(sql: string): void {
    this.#remembered.clear();
    retryWhileBusy(() => this.#db.exec(sql));
    this.#wrote();
  }

  /**
   * Runs `work` inside one write transaction (`BEGIN IMMEDIATE` ... `COMMIT`) and
   * returns its result once committed (on disk after {@link durable}); any exception
   * rolls everything back and is rethrown. `work` must be synchronous: an `await` inside would let other
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
      this.#committed();
      return result;
    } catch (error) {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
      throw error;
    } finally {
      // What was read inside the transaction may have been rolled back.
      this.#remembered.clear();
    }
  }

  /**
   * A statement outside a transaction that may have written committed on its own; one
   * inside a transaction commits with it ({@link transaction} calls {@link #committed}).
   */
  #wrote(): void {
    if (!this.#db.inTransaction) this.#committed();
  }

  #committed(): void {
    this.#commits++;
    if (this.#syncScheduled || this.#syncRunning) return;
    // Once the current turn of the event loop is over: the commits of the requests that
    // arrived together share the sync.
    this.#syncScheduled = true;
    setImmediate(() => {
      this.#syncScheduled = false;
      void this.#sync();
    });
  }

  /**
   * `undefined` when every commit made so far is on disk; otherwise a promise that
   * resolves once they all are, or rejects with {@link StorageError} `storage_sync_failed`
   * if the disk refused the sync (those commits are then in the operating system's cache
   * only, and no later sync can vouch for them: they are not waited for again).
   */
  durable(): Promise<void> | undefined {
    if (this.#synced >= this.#commits) return undefined;
    return new Promise((resolve, reject) => this.#syncWaiters.push({ commits: this.#commits, resolve, reject }));
  }

  async #sync(): Promise<void> {
    // Closing synced everything (and settled every waiter); the log may be gone.
    if (!this.#db.isOpen) return;
    this.#syncRunning = true;
    const upTo = this.#commits;
    let failure: StorageError | undefined;
    try {
      await this.#syncLog();
    } catch (error) {
      // Closing checkpoints the log into the database, syncs both and removes the log.
      if (this.#db.isOpen) failure = new StorageError("storage_sync_failed", `Could not sync the database's write-ahead log to disk: ${(error as Error).message}`, error);
    }
    this.#syncRunning = false;
    this.#settle(upTo, failure);
    if (this.#commits > this.#synced && this.#db.isOpen) void this.#sync();
  }

  /** Marks the commits up to `upTo` as settled and answers everyone who waited for no more than those. */
  #settle(upTo: number, failure?: StorageError): void {
    this.#synced = Math.max(this.#synced, upTo);
    let kept = 0;
    for (const waiter of this.#syncWaiters) {
      if (waiter.commits > this.#synced) this.#syncWaiters[kept++] = waiter;
      else if (failure === undefined) waiter.resolve();
      else waiter.reject(failure);
    }
    this.#syncWaiters.length = kept;
  }

  /**
   * Syncs every commit made so far to disk now, blocking the event loop for it: for writes
   * reported to someone outside a response (a key printed at the first start or handed
   * to `keys create`), where {@link durable} is not waited for.
   */
  flush(): void {
    if (this.#synced >= this.#commits) return;
    const upTo = this.#commits;
    try {
      this.#log.syncNow();
    } catch (error) {
      throw new StorageError("storage_sync_failed", `Could not sync the database's write-ahead log to disk: ${(error as Error).message}`, error);
    }
    this.#settle(upTo);
  }

  /** Closes the database (its log checkpointed and synced); later calls fail. Closing twice is a no-op. */
  close(): void {
    if (!this.#db.isOpen) return;
    this.#remembered.clear();
    for (const statement of this.#statements.values()) statement.finalize();
    this.#statements.clear();
    this.#db.close();
    this.#log.close();
    // SQLite's last checkpoint on close synced the log's content into the database file.
    this.#settle(this.#commits);
  }
}

/** Whether `error` is SQLite refusing a row for a UNIQUE constraint. */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Error && /UNIQUE constraint failed/.test(error.message);
}
