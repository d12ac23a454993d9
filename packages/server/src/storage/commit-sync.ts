import { StorageError } from "./storage-error.js";

/** The two ways {@link CommitSync} gets the write-ahead log onto the disk. */
export interface CommitSyncOptions {
  /** Syncs the log off the event loop: every commit made before it started is then on disk. */
  sync: () => Promise<void>;
  /** The same sync, blocking the event loop. */
  syncNow: () => void;
}

interface SyncWaiter {
  commits: number;
  resolve: () => void;
  reject: (error: StorageError) => void;
}

function syncFailed(error: unknown): StorageError {
  return new StorageError("storage_sync_failed", `Could not sync the database's write-ahead log to disk: ${(error as Error).message}`, error);
}

/**
 * Gets the commits of one database onto the disk in groups: a commit is counted when it is
 * made, and once the current turn of the event loop is over one sync runs for every commit
 * made before it started, so that creates arriving together share one sync instead of
 * each blocking every request for its own. A commit made while a sync runs waits for the
 * next one, which starts as soon as the running one ends.
 */
export class CommitSync {
  readonly #sync: () => Promise<void>;
  readonly #syncNow: () => void;
  // Commits made, and how many of them are known to be on disk (or, after a refused sync,
  // given up on).
  #commits = 0;
  #synced = 0;
  #running = false;
  #scheduled = false;
  #closed = false;
  readonly #waiters: SyncWaiter[] = [];

  /** Syncs with `options`' functions; a test hands in its own to hold a sync back or make it fail. */
  constructor(options: CommitSyncOptions) {
    this.#sync = options.sync;
    this.#syncNow = options.syncNow;
  }

  /** Counts one commit; a sync for it starts once the current turn of the event loop is over. */
  committed(): void {
    this.#commits++;
    if (this.#scheduled || this.#running) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      void this.#run();
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
    return new Promise((resolve, reject) => this.#waiters.push({ commits: this.#commits, resolve, reject }));
  }

  /**
   * Syncs every commit made so far now, blocking the event loop, and answers whoever waits
   * for them; throws {@link StorageError} `storage_sync_failed` if the disk refused.
   */
  flush(): void {
    if (this.#synced >= this.#commits) return;
    const upTo = this.#commits;
    try {
      this.#syncNow();
    } catch (error) {
      throw syncFailed(error);
    }
    this.#settle(upTo);
  }

  /**
   * The database closed: its last checkpoint synced every commit into the database file,
   * so every waiter is answered, and no sync runs any more (the log may be gone).
   */
  closed(): void {
    this.#closed = true;
    this.#settle(this.#commits);
  }

  async #run(): Promise<void> {
    if (this.#closed) return;
    this.#running = true;
    const upTo = this.#commits;
    let failure: StorageError | undefined;
    try {
      await this.#sync();
    } catch (error) {
      failure = syncFailed(error);
    }
    this.#running = false;
    // After closing (which answered every waiter) there is no one left to tell, and
    // nothing left to sync.
    this.#settle(upTo, failure);
    if (this.#commits > this.#synced) void this.#run();
  }

  /** Marks the commits up to `upTo` as settled and answers everyone who waited for no more than those. */
  #settle(upTo: number, failure?: StorageError): void {
    this.#synced = Math.max(this.#synced, upTo);
    let kept = 0;
    for (const waiter of this.#waiters) {
      if (waiter.commits > this.#synced) this.#waiters[kept++] = waiter;
      else if (failure === undefined) waiter.resolve();
      else waiter.reject(failure);
    }
    this.#waiters.length = kept;
  }
}
