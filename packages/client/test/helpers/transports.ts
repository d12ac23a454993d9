import type { ClientOptions } from "../../src/index.js";

/**
 * The two ways a client sends requests in Node: its default transport (undici's `dispatch`), and
 * an injected `fetch` (here the real global one), which is also the browser's path.
 * Tests of transport behaviour run under both.
 */
export const transports: [name: string, options: ClientOptions][] = [
  ["Node transport", {}],
  ["injected fetch", { fetch: (url, init) => fetch(url, init) }],
];

/** Options for a test client of `server`, with retry delays of a millisecond. */
export const testOptions = (baseUrl: string, extra: ClientOptions = {}): ClientOptions => ({
  apiKey: "test-key",
  baseUrl,
  retryDelayMs: 1,
  maxRetryDelayMs: 5,
  ...extra,
});
