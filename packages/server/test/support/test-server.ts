import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type BrowserServiceClient, type ClientOptions } from "@browser-service/client";
import { createServer, type BrowserServiceServer, type CreateServerOptions, type ResponseMismatch } from "../../src/index.js";
import { specErrorCodes } from "./spec-error-codes.js";

/** A server on 127.0.0.1 with an ephemeral port, its org-wide key, and every spec mismatch it sent. */
export interface TestServer {
  server: BrowserServiceServer;
  url: string;
  dataDir: string;
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
/** A rate limit turned off (`rate` 0). */
export const RATE_LIMIT_OFF = { rate: 0, burst: 1 };

/** A fresh temporary data directory. */
export function tempDataDir(): string {
  return mkdtempSync(join(tmpdir(), "browser-service-test-"));
}

/**
 * Starts a server for a test on a fresh data directory (or `dataDir`), listening on an
 * ephemeral port of 127.0.0.1, with the response check recording every mismatch.
 */
export async function startTestServer(options: Partial<CreateServerOptions> = {}): Promise<TestServer> {
  const dataDir = options.dataDir ?? tempDataDir();
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
    dataDir,
    host: "127.0.0.1",
    port: 0,
    responseCheck: { onMismatch: (mismatch) => mismatches.push(mismatch), errorCodes },
  });
  const url = await server.listen();
  const orgKey = server.firstStart?.key.secret ?? server.issueApiKey().secret;
  const defaultProjectId = server.firstStart?.project.id ?? "";
  return {
    server,
    url,
    dataDir,
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
