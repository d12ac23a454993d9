import { basename } from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

const resultsDir = fileURLToPath(new URL("./test-results/vitest/", import.meta.url));

/**
 * Settings every package's vitest config starts from. Besides the console report, each
 * run writes a JSON report that `npm test` sums into one closing line for CI.
 */
export function sharedTestConfig(packageDir: string) {
  return defineConfig({
    test: {
      reporters: ["default", ["json", { outputFile: `${resultsDir}${basename(packageDir)}.json` }]],
      testTimeout: 60_000,
      hookTimeout: 60_000,
    },
  });
}
