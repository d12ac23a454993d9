import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserServiceClient, type ClientOptions, createClient } from "@browser-service/client";
import { afterAll, beforeAll, expect } from "vitest";
import { type BrowserServiceServer, type CreateServerOptions, createServer, type ResponseMismatch } from "../../src/index.js";
import { testDatabaseFor } from "./postgres.js";
import { specByteResponses, specErrorCodes } from "./spec-error-codes.js";

/** A server on 127.0.0.1 with an ephemeral port, its org-wide key, and every spec mismatch it sent. */
export interface TestServer {
  server: BrowserServiceServer;
  url: string;
  dataDir: string;
  /** The PostgreSQL database it runs on; `undefined` on SQLite (the data directory's file). */
  database: string | undefined;
  /** The org-wide key the first start created. */
  orgKey: string;
  /** The id of the project named Default. */
  defaultProjectId: string;
  /** Responses that broke the spec; tests assert it stays empty. */
  mismatches: ResponseMismatch[];
  /** A client of this server (org-wide key unless `apiKey` is given). */
  client(options?: ClientOptions): BrowserServiceClient;
  /** Closes the server; `keepData` leaves the data directory for a restart. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

const errorCodes = specErrorCodes();
const byteResponses = specByteResponses();
/** A rate limit turned off (`rate` 0). */
export const RATE_LIMIT_OFF = { rate: 0, burst: 1 };

/** A fresh temporary data directory. */
export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), "browser-service-test-"));
}

/**
 * Starts a server for a test on a fresh data directory (or `dataDir`), listening on an
 * ephemeral port of 127.0.0.1, with the response check recording every mismatch. Under
 * `ON_POSTGRES` its control plane is a fresh PostgreSQL database (the same one again
 * for a data directory started before), unless `database` is given.
 */
export async function startTestServer(options: Partial<CreateServerOptions> = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
  const database = options.database ?? (await testDatabaseFor(dataDir));
  const mismatches: ResponseMismatch[] = [];
  const server = await createServer({
    // Tests send requests far faster than any client would, so a rate limit would make
    // their outcome depend on the machine's speed; rate-limit.test.ts sets its own.
    rateLimits: { perKey: RATE_LIMIT_OFF, authFailuresPerAddress: RATE_LIMIT_OFF },
    // Likewise: suites race hundreds of requests from 127.0.0.1; connection-limits.test.ts sets its own.
    maxClientConnections: 0,
    // Browsers only when a test asks for them: a pool in every suite would multiply the
    // Chromium processes of a run on a shared machine; warm-pool.test.ts sets its own.
    warmBrowsers: 0,
    // Tests serve their pages on 127.0.0.1, which browsers may not reach by default.
    allowPrivateNetwork: true,
    ...options,
    ...(database === undefined ? {} : { database }),
    dataDir,
    host: "127.0.0.1",
    port: 0,
    responseCheck: { onMismatch: (mismatch) => mismatches.push(mismatch), errorCodes, byteResponses },
  });
  const url = await server.listen();
  const orgKey = server.firstStart?.key.secret ?? (await server.issueApiKey()).secret;
  const defaultProjectId = server.firstStart?.project.id ?? "";
  return {
    server,
    url,
    dataDir,
    database,
    orgKey,
    defaultProjectId,
    mismatches,
    client: (clientOptions = {}) => createClient({ baseUrl: url, apiKey: orgKey, projectId: null, maxRetries: 0, ...clientOptions }),
    async close({ keepData = false } = {}) {
      await server.close();
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The options of {@link startTestServer}, or a function that makes them when the server starts. */
export type TestServerOptions = Partial<CreateServerOptions> | (() => Partial<CreateServerOptions> | Promise<Partial<CreateServerOptions>>);

/**
 * The server of a test file or `describe` block: started in `beforeAll` (by
 * {@link startTestServer}), closed in `afterAll`, where it also asserts that no response
 * broke the spec (`mismatches` is empty).
 *
 * `options` is a value, or a function `beforeAll` calls first, for options that need
 * something made then (a data directory with fixtures, a launcher to keep).
 *
 * The handle stands for the server once `beforeAll` started it; reading it earlier (while
 * vitest collects the file) throws. Vitest runs `afterAll` hooks in reverse order of
 * registration (`sequence.hooks: "stack"`, its default), so register what must outlive the server (a page server) before calling
 * this, and what must end before it closes (a DevTools connection) after:
 *
 * ```ts
 * let pages: PageServer;
 * let launcher: TrackingLauncher;
 * let driven: DrivenBrowser;
 * beforeAll(async () => {
 *   pages = await PageServer.start();
 * });
 * afterAll(async () => {
 *   await pages.close(); // runs after the server closed
 * });
 * const t = useTestServer(() => {
 *   launcher = new TrackingLauncher();
 *   return { launcher };
 * });
 * beforeAll(async () => {
 *   driven = await drive((await t.client().browsers.create()).cdp_ws_url);
 * });
 * afterAll(async () => {
 *   await driven.disconnect(); // runs before the server closes
 * });
 * ```
 *
 * A file that restarts its server, or runs several at once, calls {@link startTestServer}.
 */
export function useTestServer(options: TestServerOptions = {}): TestServer {
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startTestServer(typeof options === "function" ? await options() : options);
  });
  afterAll(async () => {
    // Not started: beforeAll failed, and vitest reports that.
    if (!started) return;
    const t = started;
    try {
      await t.close();
    } finally {
      expect(t.mismatches, "responses that broke the spec").toEqual([]);
    }
  });
  return new Proxy({} as TestServer, {
    get(_target, property) {
      if (started) return Reflect.get(started, property);
      // Not a thenable (an `await` or a `return` from an async function reads `then`).
      if (property === "then" || typeof property === "symbol") return undefined;
      throw new Error(`useTestServer(): the server starts in beforeAll; read its ${String(property)} in a test or a hook, not while the file is collected.`);
    },
  });
}
