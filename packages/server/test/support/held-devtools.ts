import type { CdpChannel, ChannelMessage, LaunchedBrowser, LaunchOptions } from "../../src/index.js";
import { TrackingLauncher } from "./tracking-launcher.js";

/** An answer or an event the browser sent the server that a test holds back. */
export interface HeldMessage {
  kind: "answer" | "event";
  /** The command's method (for an answer) or the event's. */
  method: string;
  /** For an answer: 1 for the answer to the first command of its method the server sent on the channel, and so on. */
  ordinal: number;
}

/**
 * The server's WebMCP connection to a real browser (the channel that auto-attaches to
 * tabs only; the hand-over's and DevTools clients' channels pass untouched), with chosen
 * answers and events held back until the test releases them, so that a test can order
 * what the server sees as a race would, without timing.
 */
export class HeldDevTools {
  readonly #answersTo = new Set<string>();
  readonly #events = new Set<string>();
  readonly #commands = new Map<number, { method: string; ordinal: number }>();
  readonly #sent = new Map<string, number>();
  readonly #held: { message: HeldMessage; deliver: () => void }[] = [];
  readonly #changed = new Set<() => void>();

  /** Wraps `channel`'s sending and delivery, right after it opens; only the WebMCP connection's are counted and held. */
  attach(channel: CdpChannel): void {
    let webmcp = false;
    const send = channel.send.bind(channel);
    channel.send = (message: unknown) => {
      const { id, method, params, sessionId } = message as { id?: unknown; method?: unknown; params?: { filter?: unknown }; sessionId?: unknown };
      // The WebMCP connection's first command (BrowserAttachment.open): auto-attach to tabs.
      if (method === "Target.setAutoAttach" && sessionId === undefined && JSON.stringify(params?.filter) === '[{"type":"page"}]') webmcp = true;
      if (webmcp && typeof id === "number" && typeof method === "string") {
        const ordinal = (this.#sent.get(method) ?? 0) + 1;
        this.#sent.set(method, ordinal);
        this.#commands.set(id, { method, ordinal });
        this.#notify();
      }
      send(message);
    };
    const onMessage = channel.onMessage.bind(channel);
    channel.onMessage = (listener: (message: ChannelMessage) => void) =>
      onMessage((message) => {
        // The router relays most of what the browser sends as text, unparsed: read it here to classify it.
        const read = typeof message === "string" ? (JSON.parse(message) as { id?: number; method?: string }) : (message as { id?: number; method?: string });
        const held = webmcp ? this.#toHold(read) : undefined;
        if (!held) {
          listener(message);
          return;
        }
        this.#held.push({ message: held, deliver: () => listener(message) });
        this.#notify();
      });
  }

  /** From now on, holds the answers to commands of `answersTo` and the events named in `events`. */
  hold({ answersTo = [], events = [] }: { answersTo?: string[]; events?: string[] }): void {
    for (const method of answersTo) this.#answersTo.add(method);
    for (const method of events) this.#events.add(method);
  }

  /** How many commands of `method` the server sent on the channel so far. */
  sent(method: string): number {
    return this.#sent.get(method) ?? 0;
  }

  /** What is held now, in the order it arrived. */
  held(): HeldMessage[] {
    return this.#held.map(({ message }) => message);
  }

  /** Resolves once `ready()` holds (checked after every command sent and message held). */
  async until(ready: () => boolean): Promise<void> {
    while (!ready()) await new Promise<void>((resolve) => this.#changed.add(resolve));
  }

  /** Delivers the held messages `which` accepts, in the order they arrived, all in this turn; returns how many. */
  release(which: (message: HeldMessage) => boolean = () => true): number {
    const due = this.#held.filter(({ message }) => which(message));
    for (const entry of due) this.#held.splice(this.#held.indexOf(entry), 1);
    for (const { deliver } of due) deliver();
    return due.length;
  }

  /** Stops holding and delivers everything held. */
  stop(): void {
    this.#answersTo.clear();
    this.#events.clear();
    this.release();
  }

  #toHold(message: { id?: number; method?: string }): HeldMessage | undefined {
    if (typeof message.id === "number") {
      const command = this.#commands.get(message.id);
      return command && this.#answersTo.has(command.method) ? { kind: "answer", ...command } : undefined;
    }
    return message.method !== undefined && this.#events.has(message.method) ? { kind: "event", method: message.method, ordinal: 0 } : undefined;
  }

  #notify(): void {
    const waiting = [...this.#changed];
    this.#changed.clear();
    for (const resolve of waiting) resolve();
  }
}

/** Real Chromium whose browsers each get a {@link HeldDevTools} on the server's own channel. */
export class HoldingLauncher extends TrackingLauncher {
  readonly #devtools = new Map<LaunchedBrowser, HeldDevTools>();

  override async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
    const browser = await super.launch(options);
    const devtools = new HeldDevTools();
    this.#devtools.set(browser, devtools);
    const router = browser.cdp;
    const open = router.openChannel.bind(router);
    router.openChannel = async (...args: Parameters<typeof router.openChannel>) => {
      const channel = await open(...args);
      devtools.attach(channel);
      return channel;
    };
    return browser;
  }

  /** The held channel of the browser launched last. */
  devtools(): HeldDevTools {
    const devtools = this.#devtools.get(this.latest());
    if (!devtools) throw new Error("No browser was launched yet.");
    return devtools;
  }
}
