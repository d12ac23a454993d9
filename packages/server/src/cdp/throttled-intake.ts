import type { MessageBudget } from "./message-budget.js";

/** What a {@link ThrottledIntake} acts on: its budgets and its connection. */
export interface ThrottledIntakeOptions {
  /** Every budget a message is charged to (the connection's own, its project's); it waits while any is in debt. */
  budgets: MessageBudget[];
  /** Bytes of waiting messages held at most (each counted with {@link QUEUED_MESSAGE_OVERHEAD}); past it {@link ThrottledIntakeOptions.overflow} is called. */
  maxQueuedBytes: number;
  /** Stops reading the connection: the sender is then held back by TCP. */
  pause(): void;
  /** Reads the connection again. */
  resume(): void;
  /**
   * Handles a message once it is within budget, in the order messages arrived; returns
   * what it cost beyond its size, in bytes of the budgets (charged after it was handled).
   */
  handle(data: Buffer): number;
  /** The waiting messages passed `maxQueuedBytes`; the connection should close. Nothing more is handled. */
  overflow(): void;
}

/**
 * What a waiting message is counted as beyond its own bytes, so that a flood of empty
 * messages is bounded too (a WebSocket frame takes at least 6 bytes of a client).
 */
export const QUEUED_MESSAGE_OVERHEAD = 64;

/**
 * The messages of one connection, let through as its budgets allow. A message that
 * arrives while a budget is in debt waits, and the connection stops being read until
 * every waiting message is through: a client sending too fast is slowed by TCP
 * backpressure, costs nothing while it waits (not even parsing), and loses nothing. Only
 * the messages already read when reading stopped can wait (the rest of one socket read,
 * completing at most one message of the size cap), which `maxQueuedBytes` bounds.
 */
export class ThrottledIntake {
  readonly #options: ThrottledIntakeOptions;
  #queue: Buffer[] = [];
  #queuedBytes = 0;
  #paused = false;
  #timer: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(options: ThrottledIntakeOptions) {
    this.#options = options;
  }

  /** How many messages wait for their budget now. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** Takes a message of the connection: handled now if within budget, else queued. */
  receive(data: Buffer): void {
    if (this.#closed) return;
    if (this.#queue.length === 0 && this.#msUntilReady() === 0) {
      this.#admit(data);
      return;
    }
    this.#queue.push(data);
    this.#queuedBytes += data.length + QUEUED_MESSAGE_OVERHEAD;
    if (this.#queuedBytes > this.#options.maxQueuedBytes) {
      this.close();
      this.#options.overflow();
      return;
    }
    if (!this.#paused) {
      this.#paused = true;
      this.#options.pause();
    }
    this.#schedule();
  }

  /** Drops whatever waits; nothing more is handled. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#queue = [];
    this.#queuedBytes = 0;
  }

  #msUntilReady(): number {
    let wait = 0;
    for (const budget of this.#options.budgets) wait = Math.max(wait, budget.msUntilReady());
    return wait;
  }

  #admit(data: Buffer): void {
    for (const budget of this.#options.budgets) budget.charge(data.length);
    const extra = this.#options.handle(data);
    if (extra > 0) for (const budget of this.#options.budgets) budget.surcharge(extra);
  }

  #schedule(): void {
    if (this.#timer !== undefined || this.#closed) return;
    const wait = this.#msUntilReady();
    this.#timer = setTimeout(() => this.#drain(), Math.max(1, Math.ceil(wait)));
  }

  #drain(): void {
    this.#timer = undefined;
    while (!this.#closed && this.#queue.length > 0 && this.#msUntilReady() === 0) {
      const data = this.#queue.shift() as Buffer;
      this.#queuedBytes -= data.length + QUEUED_MESSAGE_OVERHEAD;
      this.#admit(data);
    }
    if (this.#closed) return;
    if (this.#queue.length > 0) {
      this.#schedule();
      return;
    }
    this.#paused = false;
    this.#options.resume();
  }
}
