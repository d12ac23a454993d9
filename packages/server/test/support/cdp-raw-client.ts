import WebSocket from "ws";

/** A DevTools message as the server sent it to a client. */
export type CdpMessage = Record<string, unknown> & {
  id?: number;
  method?: string;
  error?: { code: number; message: string };
  result?: Record<string, unknown>;
};

/** How a connection ended: its close code and reason. */
export interface CdpClose {
  code: number;
  reason: string;
}

/**
 * A DevTools client at the level of frames: commands by id, raw text or bytes when a test
 * needs to send what no driver would, every message it received kept in order.
 */
export class CdpRawClient {
  readonly received: CdpMessage[] = [];
  /** Resolves when the connection ends, with its close code and reason. */
  readonly closed: Promise<CdpClose>;
  readonly #waiting = new Map<number, ((message: CdpMessage) => void)[]>();
  // Answers that came before anyone asked for them, by id, oldest first.
  readonly #unclaimed = new Map<number, CdpMessage[]>();
  #nextId = 1;

  private constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })));
    ws.on("message", (data) => {
      const message = JSON.parse(data.toString()) as CdpMessage;
      this.received.push(message);
      if (typeof message.id !== "number") return;
      const waiting = this.#waiting.get(message.id)?.shift();
      if (waiting) waiting(message);
      else this.#unclaimed.set(message.id, [...(this.#unclaimed.get(message.id) ?? []), message]);
    });
    ws.on("error", () => undefined);
  }

  /** Opens a connection to `url` (a `cdp_ws_url`), with extra handshake headers. */
  static async open(url: string, headers: Record<string, string> = {}): Promise<CdpRawClient> {
    const ws = new WebSocket(url, { headers, maxPayload: 256 * 1024 * 1024 });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    return new CdpRawClient(ws);
  }

  /** Whether the connection is still open. */
  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** The next answer with this id not yet taken (such as 0, for what the server could not read), also one that came already. */
  answer(id: number): Promise<CdpMessage> {
    const early = this.#unclaimed.get(id)?.shift();
    if (early) return Promise.resolve(early);
    return new Promise((resolve) => {
      const list = this.#waiting.get(id) ?? [];
      list.push(resolve);
      this.#waiting.set(id, list);
    });
  }

  /** Sends a command with the next id and resolves with its answer. */
  send(method: string, params: object = {}, sessionId?: string): Promise<CdpMessage> {
    const id = this.#nextId++;
    const answered = this.answer(id);
    this.ws.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }));
    return answered;
  }

  /** Sends a command without waiting for its answer; returns its id. */
  post(method: string, params: object = {}, sessionId?: string): number {
    const id = this.#nextId++;
    this.ws.send(JSON.stringify({ id, method, params, ...(sessionId === undefined ? {} : { sessionId }) }));
    return id;
  }

  /** Sends `data` as it is: a text frame for a string (or for bytes with `binary: false`), else a binary frame. */
  sendRaw(data: string | Buffer, options: { binary?: boolean } = {}): void {
    this.ws.send(data, { binary: options.binary ?? typeof data !== "string" });
  }

  /** Attaches (flat) to the first page target and returns the session id. */
  async attachToPage(): Promise<string> {
    const { targetInfos } = (await this.send("Target.getTargets")).result as { targetInfos: { targetId: string; type: string }[] };
    const page = targetInfos.find((info) => info.type === "page");
    if (!page) throw new Error("The browser has no page target.");
    const attached = await this.send("Target.attachToTarget", { targetId: page.targetId, flatten: true });
    return (attached.result as { sessionId: string }).sessionId;
  }

  /** Evaluates `expression` in the first page and returns its value. */
  async evaluate(expression: string): Promise<unknown> {
    const sessionId = await this.attachToPage();
    const answer = await this.send("Runtime.evaluate", { expression, returnByValue: true, awaitPromise: true }, sessionId);
    if (answer.error) throw new Error(`Runtime.evaluate failed: ${answer.error.message}`);
    return (answer.result as { result: { value: unknown } }).result.value;
  }

  /** Closes the connection and waits until it has closed. */
  async close(): Promise<void> {
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.close();
    await this.closed;
  }
}
