import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

export default mergeConfig(
  sharedTestConfig(fileURLToPath(new URL(".", import.meta.url))),
  // End-to-end files each start a server, Chromium and bridge processes; one at a time keeps them bounded.
  defineConfig({ test: { include: ["test/**/*.test.ts"], fileParallelism: false } }),
);
