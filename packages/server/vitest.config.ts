import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

export default mergeConfig(
  sharedTestConfig(fileURLToPath(new URL(".", import.meta.url))),
  // Test files each start servers and Chromium; one at a time keeps ports, processes and memory bounded.
  defineConfig({ test: { include: ["test/**/*.test.ts"], fileParallelism: false } }),
);
