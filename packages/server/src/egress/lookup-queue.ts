import type { HostLookup } from "./socks-proxy.js";

/** At most this many name lookups of all browsers run at once; the rest wait their turn. */
export const MAX_LOOKUPS_AT_ONCE = 2;

/** Lookups one browser may have waiting; past it a new one fails at once. */
export const MAX_WAITING_LOOKUPS = 64;

/** A browser asked for more lookups than may wait. */
export class LookupQueueFullError extends Error {
  /** Stable code of the failure. */
  readonly code = "lookup_queue_full";

  constructor() {
    super(`This browser already has ${MAX_WAITING_LOOKUPS} name lookups waiting.`);
    this.name = "LookupQueueFullError";
  }
}

interface Waiting {
  hostname: string;
  resolve(addresses: { address: string; family: number }[]): void;
  reject(error: unknown): void;
}

/**
 * Name lookups of every browser's egress proxy, run fairly and few at a time. The system
 * resolver (`dns.lookup`) runs on libuv's thread pool, which the server's own disk work
 * (syncing commits, profiles) shares: a page asking for thousands of names that never
 * answer would otherwise take every thread. So at most {@link MAX_LOOKUPS_AT_ONCE} run at
 * once, each browser has at most one running, and browsers with lookups waiting take
 * turns, so one page's flood delays its own lookups, not another browser's.
 */
export class LookupQueue {
  readonly #lookup: HostLookup;
  readonly #waiting = new Map<string, Waiting[]>();
  // Browsers with lookups waiting, in turn order; each appears once.
  readonly #turns: string[] = [];
  readonly #running = new Set<string>();

  constructor(lookup: HostLookup) {
    this.#lookup = lookup;
  }

  /** Looks `hostname` up for `browser` when its turn comes. */
  lookup(browser: string, hostname: string): Promise<{ address: string; family: number }[]> {
    const queue = this.#waiting.get(browser) ?? [];
    if (queue.length >= MAX_WAITING_LOOKUPS) return Promise.reject(new LookupQueueFullError());
    return new Promise((resolve, reject) => {
      queue.push({ hostname, resolve, reject });
      if (!this.#waiting.has(browser)) {
        this.#waiting.set(browser, queue);
        this.#turns.push(browser);
      }
      this.#next();
    });
  }

  #next(): void {
    for (let scanned = 0; this.#running.size < MAX_LOOKUPS_AT_ONCE && scanned < this.#turns.length; ) {
      const browser = this.#turns.shift() as string;
      if (this.#running.has(browser)) {
        this.#turns.push(browser);
        scanned++;
        continue;
      }
      scanned = 0;
      const queue = this.#waiting.get(browser) as Waiting[];
      const job = queue.shift() as Waiting;
      if (queue.length > 0) this.#turns.push(browser);
      else this.#waiting.delete(browser);
      this.#running.add(browser);
      this.#lookup(job.hostname)
        .then(job.resolve, job.reject)
        .finally(() => {
          this.#running.delete(browser);
          this.#next();
        });
    }
  }
}
