import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

export default mergeConfig(sharedTestConfig(fileURLToPath(new URL(".", import.meta.url))), defineConfig({ test: { include: ["test/**/*.test.ts"] } }));
