import { retryWhileBusy } from "./busy-retry.js";

// Every statement of the stores is a constant text (a few dozen); the bound only matters
// if one ever is not.
const MAX_STATEMENTS = 256;

/**
 * Prepared statements by their SQL text, prepared on first use; past 256 texts the least
 * recently prepared is finalized. Preparing (parsing and planning, each a call into the
 * WebAssembly module) cost more than running the small queries of a request; a prepared
 * statement holds no data, so what it reads is always what is stored now.
 */
export class StatementCache<S extends { finalize(): void }> {
  readonly #prepare: (sql: string) => S;
  readonly #statements = new Map<string, S>();

  /** `prepare` makes the statement of a text (retried while the database is busy). */
  constructor(prepare: (sql: string) => S) {
    this.#prepare = prepare;
  }

  /**
   * Runs `use` on the prepared statement of `sql` (retrying while busy). A statement whose
   * step failed (a constraint, say) keeps that error and refuses to be bound again, so it
   * is dropped from the cache and finalized, and the next call prepares it anew.
   */
  using<R>(sql: string, use: (statement: S) => R): R {
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

  #statement(sql: string): S {
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = retryWhileBusy(() => this.#prepare(sql));
      if (this.#statements.size >= MAX_STATEMENTS) {
        const [oldest, old] = this.#statements.entries().next().value as [string, S];
        this.#statements.delete(oldest);
        old.finalize();
      }
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Finalizes every statement, which must happen before the database closes. */
  close(): void {
    for (const statement of this.#statements.values()) statement.finalize();
    this.#statements.clear();
  }
}
