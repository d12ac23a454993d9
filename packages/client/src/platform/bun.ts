import { bufferedFetch, type Transport } from "../transport.js";

export { readFile } from "./files.js";

/**
 * Bun, which also loads the Node build: its own native `fetch` (Bun's `undici` module is
 * not the npm package), and file paths read from its file system.
 */
export const transport: Transport = bufferedFetch((input, init) => fetch(input, init));
