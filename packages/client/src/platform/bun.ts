// Bun, which also loads the Node build: its own native `fetch`, as in browsers (Bun's
// `undici` module is not the npm package), and file paths read from its file system.
export { transport } from "./browser.js";
export { readFile } from "./files.js";
