import { BufferedResponse } from "./buffered-response.js";

// Statuses whose response may not carry a body (the Response constructor refuses one).
const nullBodyStatuses = new Set([101, 204, 205, 304]);

/** Response headers by lowercase name; a repeated header has the list of its values. */
export type ReceivedHeaders = Record<string, string | string[] | undefined>;

/** The `Headers` of headers as undici gives them. */
export function toHeaders(received: ReceivedHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(received)) {
    if (typeof value === "string") headers.append(name, value);
    else for (const each of value ?? []) headers.append(name, each);
  }
  return headers;
}

/**
 * What the Node transport hands the client's request loop: the status, the headers and
 * the body bytes, with the `Response` itself built only when something asks for it
 * ({@link toResponse}, called for every response handed to the caller, or a body read
 * other than text and JSON). Building undici's `Response` and `Headers` for every call
 * cost about as much as the rest of the client's work on a local call, and a facade call
 * (`client.projects.list()`) reads only the status and the JSON.
 */
export class ReceivedResponse {
  /** The HTTP status. */
  readonly status: number;
  /** The HTTP status text. */
  readonly statusText: string;
  readonly #receivedHeaders: ReceivedHeaders;
  readonly #bytes: Uint8Array<ArrayBuffer>;
  #headers: Headers | undefined;
  #response: Response | undefined;
  #used = false;

  /** @param headers - by lowercase name, a list for a repeated one (as undici gives them); @param bytes - the whole body. */
  constructor(status: number, statusText: string, headers: ReceivedHeaders, bytes: Uint8Array<ArrayBuffer>) {
    this.status = status;
    this.statusText = statusText;
    this.#receivedHeaders = headers;
    this.#bytes = bytes;
  }

  /** Whether the status is 2xx. */
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** The headers, built on first use. */
  get headers(): Headers {
    this.#headers ??= toHeaders(this.#receivedHeaders);
    return this.#headers;
  }

  /** Whether the body has been read. */
  get bodyUsed(): boolean {
    return this.#used;
  }

  /** The body as text; once. */
  async text(): Promise<string> {
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    this.#used = true;
    // Node's own UTF-8 decoding of a Buffer is quicker than TextDecoder's for small bodies.
    return Buffer.from(this.#bytes.buffer, this.#bytes.byteOffset, this.#bytes.byteLength).toString("utf8");
  }

  /** The body parsed as JSON; once. */
  async json(): Promise<unknown> {
    return JSON.parse(await this.text());
  }

  /** The body as an `ArrayBuffer`; once. */
  arrayBuffer(): Promise<ArrayBuffer> {
    return this.#read().arrayBuffer();
  }

  /** The body as a `Blob`; once. */
  blob(): Promise<Blob> {
    return this.#read().blob();
  }

  /** The body as form data; once. */
  formData(): Promise<FormData> {
    return this.#read().formData();
  }

  /** The body as a stream; taking it uses the body up. */
  get body(): ReadableStream<Uint8Array> | null {
    return this.#read().body;
  }

  /**
   * The `Response` of these bytes (the same one every time), its body used if this one's
   * was: what the caller gets as `response`.
   */
  toResponse(): Response {
    if (this.#response === undefined) {
      const init = { status: this.status, statusText: this.statusText, headers: this.headers };
      this.#response = nullBodyStatuses.has(this.status) ? new Response(null, init) : new BufferedResponse(this.#bytes, init);
      // BufferedResponse takes its bytes synchronously, so this marks it used at once.
      if (this.#used) void this.#response.text().catch(() => undefined);
    }
    return this.#response;
  }

  #read(): Response {
    if (this.#used) throw new TypeError("Body is unusable: Body has already been read");
    const response = this.toResponse();
    this.#used = true;
    return response;
  }
}
