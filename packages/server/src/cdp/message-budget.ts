/**
 * How many bytes of a budget one character of JSON structure (anything outside strings)
 * costs in all: parsing a command costs by its structure far more than by its string data
 * (here about 1.3 ns a byte of string, and up to 0.25 µs a character of structure for an
 * object of tiny keys), so a byte budget alone would let a client sending dense structure
 * take the server's thread.
 */
export const STRUCTURE_COST = 256;

/** A sending budget: how many messages and bytes per second, sustained. */
export interface MessageBudgetLimits {
  /** Messages per second; `0`: no limit. */
  messageRate: number;
  /** Bytes per second; `0`: no limit. */
  byteRate: number;
}

/**
 * A token bucket that may go into debt: it holds one second of its rate, an event is let
 * through while the bucket is not in debt and takes what it costs even past zero, and the
 * next waits until the debt is paid back. So no single event is ever too large to pass
 * (a 16 MiB message under a 1 MiB/s budget passes, and the sender then waits 16 s), and
 * over time exactly the rate gets through.
 */
class DebtBucket {
  readonly #rate: number;
  #tokens: number;
  #at: number;

  constructor(rate: number, now: number) {
    this.#rate = rate;
    this.#tokens = rate;
    this.#at = now;
  }

  #refill(now: number): void {
    if (now > this.#at) this.#tokens = Math.min(this.#rate, this.#tokens + ((now - this.#at) / 1000) * this.#rate);
    this.#at = Math.max(this.#at, now);
  }

  /** Milliseconds until the bucket is out of debt; 0 when it is not in debt. */
  msUntilClear(now: number): number {
    if (this.#rate === 0) return 0;
    this.#refill(now);
    return this.#tokens >= 0 ? 0 : (-this.#tokens / this.#rate) * 1000;
  }

  /** Milliseconds until the bucket is full again. */
  msUntilFull(now: number): number {
    if (this.#rate === 0) return 0;
    this.#refill(now);
    return ((this.#rate - this.#tokens) / this.#rate) * 1000;
  }

  take(amount: number, now: number): void {
    if (this.#rate === 0) return;
    this.#refill(now);
    this.#tokens -= amount;
  }
}

/**
 * What one sender (a DevTools connection, or every connection of a project together) may
 * send: a message rate and a byte rate, each a {@link DebtBucket}. A message may be
 * handled while neither is in debt; it is charged when it is.
 */
export class MessageBudget {
  readonly limits: MessageBudgetLimits;
  readonly #clock: () => number;
  readonly #messages: DebtBucket;
  readonly #bytes: DebtBucket;

  /** `clock`: milliseconds on a monotonic clock (default `performance.now`). */
  constructor(limits: MessageBudgetLimits, clock: () => number = () => performance.now()) {
    if (!(limits.messageRate >= 0) || !(limits.byteRate >= 0))
      throw new RangeError(`A message budget needs rates >= 0; received ${limits.messageRate} messages/s, ${limits.byteRate} bytes/s.`);
    this.limits = limits;
    this.#clock = clock;
    const now = clock();
    this.#messages = new DebtBucket(limits.messageRate, now);
    this.#bytes = new DebtBucket(limits.byteRate, now);
  }

  /** Milliseconds until a message may be handled; 0 when one may now. */
  msUntilReady(): number {
    const now = this.#clock();
    return Math.max(this.#messages.msUntilClear(now), this.#bytes.msUntilClear(now));
  }

  /** Milliseconds until both buckets are full: until then the budget remembers what was spent. */
  msUntilFull(): number {
    const now = this.#clock();
    return Math.max(this.#messages.msUntilFull(now), this.#bytes.msUntilFull(now));
  }

  /** Charges one message of `bytes` bytes, past zero if need be. */
  charge(bytes: number): void {
    const now = this.#clock();
    this.#messages.take(1, now);
    this.#bytes.take(bytes, now);
  }

  /** Charges `bytes` more to the byte budget, for a message that turned out to cost more than its size. */
  surcharge(bytes: number): void {
    this.#bytes.take(bytes, this.#clock());
  }
}

/**
 * The budgets of every project with a DevTools connection, shared by all the
 * connections of all its browsers. A project's budget outlives its last connection until
 * it has recovered, so reconnecting does not reset what a project has spent.
 */
export class ProjectBudgets {
  readonly #limits: MessageBudgetLimits;
  readonly #clock: (() => number) | undefined;
  readonly #budgets = new Map<string, { budget: MessageBudget; users: number; forget: NodeJS.Timeout | undefined }>();

  constructor(limits: MessageBudgetLimits, clock?: () => number) {
    this.#limits = limits;
    this.#clock = clock;
  }

  /** How many projects have a budget now. */
  get size(): number {
    return this.#budgets.size;
  }

  /** The budget of `projectId`, for one more connection; give it back with {@link release}. */
  acquire(projectId: string): MessageBudget {
    let entry = this.#budgets.get(projectId);
    if (entry === undefined) {
      entry = { budget: new MessageBudget(this.#limits, this.#clock), users: 0, forget: undefined };
      this.#budgets.set(projectId, entry);
    }
    clearTimeout(entry.forget);
    entry.forget = undefined;
    entry.users++;
    return entry.budget;
  }

  /** One connection of `projectId` ended. */
  release(projectId: string): void {
    const entry = this.#budgets.get(projectId);
    if (entry === undefined || --entry.users > 0) return;
    const forget = (): void => {
      if (entry.users > 0) return;
      const wait = entry.budget.msUntilFull();
      if (wait === 0) this.#budgets.delete(projectId);
      else entry.forget = setTimeout(forget, Math.max(1, Math.ceil(wait))).unref();
    };
    forget();
  }
}
