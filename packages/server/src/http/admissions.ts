/**
 * Places per key (a browser) up to a cap, taken from the admission check on, so that a
 * burst of connections still opening cannot pass the cap together: the DevTools
 * endpoint's clients and the live view's viewers each keep one.
 */
export class Admissions {
  readonly #cap: number;
  readonly #taken = new Map<string, number>();

  constructor(cap: number) {
    this.#cap = cap;
  }

  /** Takes a place for `key`, or `undefined` when its places are all taken; the release frees it, once. */
  admit(key: string): (() => void) | undefined {
    const count = this.#taken.get(key) ?? 0;
    if (count >= this.#cap) return undefined;
    this.#taken.set(key, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#taken.get(key) ?? 1) - 1;
      if (left > 0) this.#taken.set(key, left);
      else this.#taken.delete(key);
    };
  }

  /** Whether any place of `key` is taken. */
  has(key: string): boolean {
    return this.#taken.has(key);
  }

  /** The places taken, over every key. */
  total(): number {
    let total = 0;
    for (const count of this.#taken.values()) total += count;
    return total;
  }
}
