import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

export default mergeConfig(
  sharedTestConfig(fileURLToPath(new URL(".", import.meta.url))),
  // Test files each start servers and Chromium; one at a time keeps ports, processes and memory bounded.
  // expect.poll waits up to 15 s (not 1 s): on a shared machine a browser's answer can take seconds; a poll that succeeds returns at once.
  defineConfig({ test: { include: ["test/**/*.test.ts"], fileParallelism: false, expect: { poll: { timeout: 15_000 } } } }),
);
