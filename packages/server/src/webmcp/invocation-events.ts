import type { ToolInvokedEvent, ToolRespondedEvent } from "./cdp-protocol.js";

/** What an invocation waiter is told. */
export interface InvocationHandlers {
  /** `WebMCP.toolInvoked`: the page started the tool (and filled a declarative form). */
  invoked(event: ToolInvokedEvent): void;
  /** `WebMCP.toolResponded`: the invocation ended. */
  responded(event: ToolRespondedEvent): void;
}

/** Bounds of the events kept for invocations nobody watches yet; the oldest go first. */
export const UNCLAIMED_EVENT_LIMITS = { count: 256, bytes: 8 * 1024 * 1024 } as const;

interface Kept {
  kind: "invoked" | "responded";
  event: ToolInvokedEvent | ToolRespondedEvent;
  bytes: number;
}

/** Roughly what an event holds in memory: its page-provided input or output, serialized. */
function sizeOf(event: ToolInvokedEvent | ToolRespondedEvent): number {
  const payload = "input" in event ? event.input : (event as ToolRespondedEvent).output;
  return 128 + (payload === undefined ? 0 : (JSON.stringify(payload) ?? "").length);
}

/**
 * Routes `WebMCP.toolInvoked` and `toolResponded` to the invocation they belong to, by
 * invocation id, from whichever session reports them. The browser sends these events
 * right after answering `invokeTool`, so they can arrive before the caller has read the
 * id: while one of the server's own `invokeTool` commands awaits its reply
 * ({@link expect}), events for ids nobody watches are kept, bounded in count and bytes,
 * and replayed to the first watcher. At other times such events belong to other
 * DevTools clients' invocations and are not kept at all.
 */
export class InvocationEvents {
  readonly #kept = new Map<string, Kept[]>();
  readonly #watchers = new Map<string, InvocationHandlers>();
  #expecting = 0;
  #keptCount = 0;
  #keptBytes = 0;

  /** How many events, and roughly how many bytes, are kept for invocations nobody watches yet. */
  get kept(): { count: number; bytes: number } {
    return { count: this.#keptCount, bytes: this.#keptBytes };
  }

  /** An `invokeTool` of the server's is on its way: keep unclaimed events until the returned function is called. */
  expect(): () => void {
    this.#expecting++;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      this.#expecting--;
      if (this.#expecting === 0) this.#dropAll();
    };
  }

  /** Feeds a `WebMCP.toolInvoked` event. */
  invoked(event: ToolInvokedEvent): void {
    if (typeof event.invocationId !== "string") return;
    const watcher = this.#watchers.get(event.invocationId);
    if (watcher) watcher.invoked(event);
    else this.#keep(event.invocationId, { kind: "invoked", event, bytes: 0 });
  }

  /** Feeds a `WebMCP.toolResponded` event. */
  responded(event: ToolRespondedEvent): void {
    if (typeof event.invocationId !== "string") return;
    const watcher = this.#watchers.get(event.invocationId);
    if (watcher) watcher.responded(event);
    else this.#keep(event.invocationId, { kind: "responded", event, bytes: 0 });
  }

  /**
   * Watches one invocation: events already received are replayed at once, in order.
   * Returns the function that stops watching.
   */
  watch(invocationId: string, handlers: InvocationHandlers): () => void {
    this.#watchers.set(invocationId, handlers);
    const kept = this.#forget(invocationId);
    for (const { kind, event } of kept) {
      if (kind === "invoked") handlers.invoked(event as ToolInvokedEvent);
      else handlers.responded(event as ToolRespondedEvent);
    }
    return () => {
      if (this.#watchers.get(invocationId) === handlers) this.#watchers.delete(invocationId);
    };
  }

  #keep(invocationId: string, kept: Kept): void {
    if (this.#expecting === 0) return;
    kept.bytes = sizeOf(kept.event);
    if (kept.bytes > UNCLAIMED_EVENT_LIMITS.bytes) return;
    const list = this.#kept.get(invocationId) ?? [];
    list.push(kept);
    this.#kept.set(invocationId, list);
    this.#keptCount++;
    this.#keptBytes += kept.bytes;
    while (this.#keptCount > UNCLAIMED_EVENT_LIMITS.count || this.#keptBytes > UNCLAIMED_EVENT_LIMITS.bytes) {
      const oldest = this.#kept.keys().next();
      if (oldest.done) break;
      this.#forget(oldest.value);
    }
  }

  #forget(invocationId: string): Kept[] {
    const list = this.#kept.get(invocationId) ?? [];
    this.#kept.delete(invocationId);
    for (const kept of list) {
      this.#keptCount--;
      this.#keptBytes -= kept.bytes;
    }
    return list;
  }

  #dropAll(): void {
    this.#kept.clear();
    this.#keptCount = 0;
    this.#keptBytes = 0;
  }
}
