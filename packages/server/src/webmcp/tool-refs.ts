import { randomBytes } from "node:crypto";

/** What a `tool_ref` names now. */
export type ToolRefLookup<T> = { state: "live"; target: T } | { state: "stale" } | { state: "unknown" };

const PREFIX = "wmt_";
// 16 random bytes in unpadded base64url.
const SHAPE = /^wmt_[A-Za-z0-9_-]{22}$/;
/** How many retired refs one browser remembers, so that they answer "stale" rather than "unknown". */
export const STALE_REF_MEMORY = 10_000;

/**
 * The `tool_ref`s of one browser. A ref is 128 random bits, so it cannot be guessed or
 * built from what it names; the table maps it to one exact registration while that
 * lives. Retired refs are remembered (the last {@link STALE_REF_MEMORY}) so that they
 * answer 409 `tool_ref_stale`; anything else, including a ref another browser issued,
 * is unknown (404 `tool_not_found`).
 */
export class ToolRefTable<T> {
  readonly #live = new Map<string, T>();
  // Insertion-ordered, so the oldest retired ref is forgotten first.
  readonly #stale = new Set<string>();
  readonly #staleMemory: number;

  constructor(staleMemory = STALE_REF_MEMORY) {
    this.#staleMemory = staleMemory;
  }

  /** Issues a new ref for `target`. */
  issue(target: T): string {
    const ref = PREFIX + randomBytes(16).toString("base64url");
    this.#live.set(ref, target);
    return ref;
  }

  /** What `ref` names: a live target, a retired registration, or nothing this table issued. */
  lookup(ref: string): ToolRefLookup<T> {
    if (!SHAPE.test(ref)) return { state: "unknown" };
    const target = this.#live.get(ref);
    if (target !== undefined) return { state: "live", target };
    return this.#stale.has(ref) ? { state: "stale" } : { state: "unknown" };
  }

  /** Retires a ref: its registration is gone for good. */
  retire(ref: string): void {
    if (!this.#live.delete(ref)) return;
    this.#stale.add(ref);
    if (this.#stale.size > this.#staleMemory) {
      const oldest = this.#stale.values().next();
      if (!oldest.done) this.#stale.delete(oldest.value);
    }
  }

  /** Retires every live ref (the browser process or the connection to it is gone). */
  retireAll(): void {
    for (const ref of [...this.#live.keys()]) this.retire(ref);
  }
}
