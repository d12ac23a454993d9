import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

/**
 * The API's test files run a second time with their servers on PostgreSQL
 * (`BROWSER_SERVICE_TEST_DATABASE=postgres`, see test/support/postgres.ts): every rule they
 * check through HTTP must hold on both databases. Left out: files about SQLite itself
 * (storage, data-dir, remembered-reads, integers' caps stored past the bound, which
 * PostgreSQL's INTEGER column cannot hold) and about what no store touches (DevTools,
 * WebMCP pages, the sandbox, HTTP parsing), which would only double the run.
 */
const ON_POSTGRES_TOO = [
  "test/auth.test.ts",
  "test/auth-connections.test.ts",
  "test/auth-flow-attacks.test.ts",
  "test/auth-flow-faults.test.ts",
  "test/auth-flows.test.ts",
  "test/auth-health-checks.test.ts",
  "test/auth-hosted-login.test.ts",
  "test/browsers.test.ts",
  "test/browser-extensions.test.ts",
  "test/credentials.test.ts",
  "test/durability.test.ts",
  "test/extension-records.test.ts",
  "test/extensions.test.ts",
  "test/http.test.ts",
  "test/key-requests.test.ts",
  "test/limits.test.ts",
  "test/names.test.ts",
  "test/profiles.test.ts",
  "test/projects.test.ts",
  "test/rate-limit.test.ts",
  "test/telemetry.test.ts",
  "test/timeouts.test.ts",
  "test/warm-pool.test.ts",
  "test/webmcp-etag.test.ts",
];

export default mergeConfig(
  sharedTestConfig(fileURLToPath(new URL(".", import.meta.url))),
  // Test files each start servers and Chromium; one at a time keeps ports, processes and memory bounded.
  // expect.poll waits up to 15 s (not 1 s): on a shared machine a browser's answer can take seconds; a poll that succeeds returns at once.
  defineConfig({
    test: {
      globalSetup: ["test/support/postgres-global-setup.ts"],
      fileParallelism: false,
      expect: { poll: { timeout: 15_000 } },
      projects: [
        { extends: true, test: { name: "sqlite", include: ["test/**/*.test.ts"] } },
        { extends: true, test: { name: "postgres", include: ON_POSTGRES_TOO, env: { BROWSER_SERVICE_TEST_DATABASE: "postgres" } } },
      ],
    },
  }),
);
