import { AsyncLocalStorage } from "node:async_hooks";
import { StorageError } from "./storage-error.js";
import { storeMethods } from "./store-methods.js";

/**
 * The synchronous form of a store interface whose methods return promises: what the
 * SQLite stores implement (every SQLite call is synchronous), before
 * {@link UnitOfWorkGate.wrap} gives them the interface's asynchronous form.
 */
export type Synchronous<S> = {
  [K in keyof S]: S[K] extends (...args: infer A) => Promise<infer R> ? (...args: A) => R : S[K];
};

/** What a unit of work runs around its work: the database's own transaction steps. */
export interface TransactionSteps {
  begin(): void;
  commit(): void;
  rollback(): void;
}

/**
 * Makes one SQLite connection's stores asynchronous without letting requests interleave
 * with a unit of work. A store call made outside any unit of work runs at once, in the
 * caller's turn (so its write is made before the call returns, as the synchronous stores
 * promised); while a unit of work is open, a call from outside it waits until the unit
 * has committed or rolled back, and a call made by the unit's own work (known through
 * `AsyncLocalStorage`) runs at once, inside its transaction. Without this, another
 * request's write made between two awaits of a unit would join the unit's transaction and
 * be rolled back with it.
 */
export class UnitOfWorkGate {
  readonly #inside = new AsyncLocalStorage<true>();
  readonly #steps: TransactionSteps;
  // Settles when the open unit of work ends; undefined when none is open.
  #open: Promise<void> | undefined;

  constructor(steps: TransactionSteps) {
    this.#steps = steps;
  }

  /** Runs a synchronous store call now, or after the open unit of work when it is not part of it. */
  run<T>(call: () => T): Promise<T> {
    if (this.#open !== undefined && this.#inside.getStore() !== true) return this.#open.then(() => this.run(call));
    try {
      return Promise.resolve(call());
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Runs `work` as one transaction: every store call it makes commits together, or (when
   * it rejects) none does, and the error is rethrown. Units of work wait for each other;
   * one started inside another is refused (`storage_misuse`).
   */
  async unitOfWork<T>(work: () => Promise<T>): Promise<T> {
    if (this.#inside.getStore() === true) throw new StorageError("storage_misuse", "Units of work do not nest; call the inner work directly.");
    while (this.#open !== undefined) await this.#open;
    let end!: () => void;
    this.#open = new Promise((resolve) => (end = resolve));
    try {
      this.#steps.begin();
      let result: T;
      try {
        result = await this.#inside.run(true, work);
      } catch (error) {
        this.#steps.rollback();
        throw error;
      }
      this.#steps.commit();
      return result;
    } finally {
      this.#open = undefined;
      end();
    }
  }

  /** `store`'s methods, each returning a promise and passing through this gate. */
  wrap<S extends object>(store: Synchronous<S>): S {
    return storeMethods(
      store,
      (method) =>
        (...args) =>
          this.run(() => method(...args)),
    ) as S;
  }
}
