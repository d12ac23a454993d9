import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { listingFrame } from "./listing-frame.js";
import type { ToolCatalog } from "./tool-catalog.js";

/**
 * The SDK's stdio transport (newline-delimited JSON-RPC on standard input and output),
 * except that an answer to `tools/list` carrying the catalog's current listing is written
 * from the listing's bytes made once per snapshot, instead of being
 * serialized and encoded again for every request. Reading, and every other message, is
 * the SDK's.
 */
export class CatalogStdioServerTransport extends StdioServerTransport {
  readonly #catalog: ToolCatalog;
  readonly #output: NodeJS.WritableStream;

  constructor(catalog: ToolCatalog, input: NodeJS.ReadableStream = process.stdin, output: NodeJS.WritableStream = process.stdout) {
    super(input as typeof process.stdin, output as typeof process.stdout);
    this.#catalog = catalog;
    this.#output = output;
  }

  /** Sends one message, as one line. */
  override send(message: JSONRPCMessage): Promise<void> {
    const frame = listingFrame(message, this.#catalog.state);
    if (frame === undefined) return super.send(message);
    return new Promise((resolve) => {
      if (this.#output.write(Buffer.concat(frame))) resolve();
      else this.#output.once("drain", resolve);
    });
  }
}
