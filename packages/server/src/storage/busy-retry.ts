import { StorageError } from "./storage-error.js";

// node-sqlite3-wasm's VFS has no sleep, so SQLite's busy_timeout cannot wait for a lock.
// The only other holder of the lock is a short-lived process such as `keys create`, so
// a bounded synchronous wait between attempts is enough and keeps transactions atomic.
const BUSY_ATTEMPTS = 400;
const BUSY_WAIT_MS = 5;
const waitCell = new Int32Array(new SharedArrayBuffer(4));

function isBusy(error: unknown): boolean {
  return error instanceof Error && /database is locked|SQLITE_BUSY/i.test(error.message);
}

/**
 * The result of `action`, run again while SQLite finds the database locked by another
 * process, with a short blocking wait between attempts. Any other error is thrown at
 * once; a lock that outlasts every attempt is a {@link StorageError} `storage_busy`.
 */
export function retryWhileBusy<T>(action: () => T): T {
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
