import { fileURLToPath } from "node:url";
import { defineConfig, mergeConfig } from "vitest/config";
import { sharedTestConfig } from "../../vitest.shared.js";

export default mergeConfig(
  sharedTestConfig(fileURLToPath(new URL(".", import.meta.url))),
  defineConfig({
    // package.json maps #platform to the built file; tests run the source.
    resolve: { alias: { "#platform": fileURLToPath(new URL("./src/platform/node.ts", import.meta.url)) } },
    test: { typecheck: { enabled: true, tsconfig: "./tsconfig.json", include: ["test/**/*.test-d.ts"] } },
  }),
);
