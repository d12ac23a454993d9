import type { ToolInvokedEvent, ToolRespondedEvent } from "./cdp-protocol.js";

/** What an invocation waiter is told. */
export interface InvocationHandlers {
  /** `WebMCP.toolInvoked`: the page started the tool (and filled a declarative form). */
  invoked(event: ToolInvokedEvent): void;
  /** `WebMCP.toolResponded`: the invocation ended. */
  responded(event: ToolRespondedEvent): void;
}

/** Events kept for invocations nobody waits on yet; the oldest are dropped past this. */
const UNCLAIMED_MEMORY = 1_000;

function remember<T>(map: Map<string, T>, id: string, event: T): void {
  map.set(id, event);
  if (map.size > UNCLAIMED_MEMORY) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
}

/**
 * Routes `WebMCP.toolInvoked` and `toolResponded` to the invocation they belong to, by
 * invocation id, from whichever session reports them. The browser sends these events
 * right after answering `invokeTool`, so they can arrive before the caller has read the
 * id: events for ids nobody watches yet are kept (a bounded number, since other DevTools
 * clients' invocations are reported too) and replayed to the first watcher.
 */
export class InvocationEvents {
  readonly #invoked = new Map<string, ToolInvokedEvent>();
  readonly #responded = new Map<string, ToolRespondedEvent>();
  readonly #watchers = new Map<string, InvocationHandlers>();

  /** Feeds a `WebMCP.toolInvoked` event. */
  invoked(event: ToolInvokedEvent): void {
    if (typeof event.invocationId !== "string") return;
    const watcher = this.#watchers.get(event.invocationId);
    if (watcher) watcher.invoked(event);
    else remember(this.#invoked, event.invocationId, event);
  }

  /** Feeds a `WebMCP.toolResponded` event. */
  responded(event: ToolRespondedEvent): void {
    if (typeof event.invocationId !== "string") return;
    const watcher = this.#watchers.get(event.invocationId);
    if (watcher) watcher.responded(event);
    else remember(this.#responded, event.invocationId, event);
  }

  /**
   * Watches one invocation: events already received are replayed at once, in order.
   * Returns the function that stops watching.
   */
  watch(invocationId: string, handlers: InvocationHandlers): () => void {
    this.#watchers.set(invocationId, handlers);
    const invoked = this.#invoked.get(invocationId);
    const responded = this.#responded.get(invocationId);
    this.#invoked.delete(invocationId);
    this.#responded.delete(invocationId);
    if (invoked) handlers.invoked(invoked);
    if (responded) handlers.responded(responded);
    return () => {
      if (this.#watchers.get(invocationId) === handlers) this.#watchers.delete(invocationId);
    };
  }
}
