import sqlite3 from "node-sqlite3-wasm";
import { retryWhileBusy } from "./busy-retry.js";
import { CommitSync } from "./commit-sync.js";
import { LogSync } from "./log-sync.js";
import { RememberedReads } from "./remembered-reads.js";
import type { SqlParams, SqlValue } from "./sql-values.js";
import { StatementCache } from "./statement-cache.js";
import { isSelect } from "./statement-kind.js";
import { assertStorable } from "./storable-text.js";
import { StorageError } from "./storage-error.js";
import type { TransactionSteps } from "./unit-of-work-gate.js";

// Other folders import the storage API from this module alone.
export type { SqlParams, SqlValue } from "./sql-values.js";
export { isStorableText } from "./storable-text.js";
export { StorageError, type StorageErrorCode } from "./storage-error.js";

type Statement = ReturnType<InstanceType<typeof sqlite3.Database>["prepare"]>;

/** Settings of {@link SqliteDatabase.open}. */
export interface SqliteDatabaseOptions {
  /**
   * Syncs the write-ahead log to disk off the event loop. Default: `fdatasync` of the log
   * on Node's thread pool. Tests replace it to hold a sync back or make it fail.
   */
  syncLog?: () => Promise<void>;
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
  readonly #commits: CommitSync;
  readonly #statements: StatementCache<Statement>;
  readonly #reads = new RememberedReads();

  private constructor(db: InstanceType<typeof sqlite3.Database>, file: string, options: SqliteDatabaseOptions) {
    this.#db = db;
    this.#log = new LogSync(`${file}-wal`);
    this.#commits = new CommitSync({ sync: options.syncLog ?? this.#log.sync, syncNow: () => this.#log.syncNow() });
    this.#statements = new StatementCache((sql) => db.prepare(sql));
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
    // syncs the log only around checkpoints; every commit's sync is CommitSync's, off the
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

  /**
   * {@link get} or {@link all} of a SELECT, remembered until the next write of any kind
   * (see {@link RememberedReads}): for the reads every request makes (its key, its
   * organization, a page of projects). The result is frozen (rows too), as it is shared by
   * later calls.
   */
  remembered<T>(kind: "get", sql: string, params?: SqlParams): T | undefined;
  remembered<T>(kind: "all", sql: string, params?: SqlParams): readonly T[];
  remembered<T>(kind: "get" | "all", sql: string, params: SqlParams = []): T | undefined | readonly T[] {
    return kind === "get" ? this.#reads.row(sql, params, () => this.get<T>(sql, params)) : this.#reads.rows(sql, params, () => this.all<T>(sql, params));
  }

  /**
   * The rows of a SELECT whose one row's one column is a JSON array of row objects (as
   * `json_group_array` builds it: one call into SQLite instead of one per value), parsed
   * and remembered like {@link remembered}.
   */
  rememberedJsonRows<T>(sql: string, params: SqlParams = []): readonly T[] {
    return this.#reads.jsonRows<T>(sql, params, () => this.get<Record<string, unknown>>(sql, params));
  }

  /** The first row of a query, or `undefined`. */
  get<T>(sql: string, params: SqlParams = []): T | undefined {
    assertStorable(params);
    const select = isSelect(sql);
    if (!select) this.#reads.forget();
    const row = this.#statements.using(sql, (statement) => {
      // A write's RETURNING rows are all read: a statement with rows left unread stays in
      // progress, and the transaction around it could not commit.
      if (!select) return statement.all(params)[0];
      const rows = statement.iterate(params);
      const first = rows.next();
      rows.return?.(undefined);
      // Reset now, not when next bound: a statement left inside its query holds its read
      // of the log open, and SQLite's automatic checkpoint cannot pass an open read, so the
      // log (and the memory that maps it) would grow with every write for as long as the
      // statement waits in the cache.
      endQuery(statement);
      return first.done ? undefined : first.value;
    });
    if (!select) this.#wrote();
    return (row ?? undefined) as T | undefined;
  }

  /** Every row of a query. */
  all<T>(sql: string, params: SqlParams = []): T[] {
    assertStorable(params);
    const select = isSelect(sql);
    if (!select) this.#reads.forget();
    const rows = this.#statements.using(sql, (statement) => statement.all(params)) as T[];
    if (!select) this.#wrote();
    return rows;
  }

  /** Runs one statement and returns how many rows it changed. */
  run(sql: string, params: SqlParams = []): number {
    assertStorable(params);
    this.#reads.forget();
    const { changes } = this.#statements.using(sql, (statement) => statement.run(params));
    this.#wrote();
    return changes;
  }

  /** Runs a script of several statements (migrations). */
  exec(sql: string): void {
    this.#reads.forget();
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
    const steps = this.transactionSteps;
    steps.begin();
    let result: T;
    try {
      result = work();
      if (result instanceof Promise) {
        throw new StorageError("storage_misuse", "A transaction's work returned a Promise; it must be synchronous.");
      }
    } catch (error) {
      steps.rollback();
      throw error;
    }
    steps.commit();
    return result;
  }

  /**
   * The steps of {@link transaction}, for a caller that keeps other work out of the
   * transaction itself while it is open (`UnitOfWorkGate`): `begin` refuses to nest.
   */
  readonly transactionSteps: TransactionSteps = {
    begin: () => {
      if (this.#db.inTransaction) {
        throw new StorageError("storage_misuse", "Transactions do not nest; call the inner work directly.");
      }
      this.#reads.forget();
      retryWhileBusy(() => this.#db.exec("BEGIN IMMEDIATE"));
    },
    commit: () => {
      try {
        this.#db.exec("COMMIT");
      } catch (error) {
        if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
        this.#reads.forget();
        throw error;
      }
      this.#commits.committed();
      this.#reads.forget();
    },
    rollback: () => {
      if (this.#db.inTransaction) this.#db.exec("ROLLBACK");
      // What was read inside the transaction may have been rolled back.
      this.#reads.forget();
    },
  };

  /**
   * A statement outside a transaction that may have written committed on its own; one
   * inside a transaction commits with it ({@link transaction} counts the commit).
   */
  #wrote(): void {
    if (!this.#db.inTransaction) this.#commits.committed();
  }

  /**
   * `undefined` when every commit made so far is on disk; otherwise a promise that
   * resolves once they all are, or rejects with {@link StorageError} `storage_sync_failed`
   * if the disk refused the sync (those commits are then in the operating system's cache
   * only, and no later sync can vouch for them: they are not waited for again).
   */
  durable(): Promise<void> | undefined {
    return this.#commits.durable();
  }

  /**
   * Syncs every commit made so far to disk now, blocking the event loop for it: for writes
   * reported to someone outside a response (a key printed at the first start or handed
   * to `keys create`), where {@link durable} is not waited for.
   */
  flush(): void {
    this.#commits.flush();
  }

  /** Closes the database (its log checkpointed and synced); later calls fail. Closing twice is a no-op. */
  close(): void {
    if (!this.#db.isOpen) return;
    this.#reads.forget();
    this.#statements.close();
    this.#db.close();
    this.#log.close();
    // SQLite's last checkpoint on close synced the log's content into the database file.
    this.#commits.closed();
  }
}

/**
 * Resets a prepared statement, ending the query it is inside. node-sqlite3-wasm (0.8.60)
 * resets only when a statement is bound again; its `_reset` (sqlite3_reset and clearing
 * the bindings) is what that does, called here at once. `test/sqlite-checkpoint.test.ts`
 * fails if a later version drops it, rather than letting the log grow again.
 */
function endQuery(statement: object): void {
  const reset = (statement as { _reset?: () => boolean })._reset;
  if (typeof reset !== "function" || reset.call(statement) !== true)
    throw new Error("node-sqlite3-wasm could not reset a statement; its query would hold the log open.");
}
