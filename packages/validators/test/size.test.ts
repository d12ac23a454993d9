import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { expect, it } from "vitest";

const distIndex = fileURLToPath(new URL("../dist/index.js", import.meta.url));
// A browser app that checks one ManagedAuth record, the largest schema of the spec (nested
// browser settings, exactly-one proxies, conditional flow fields), with its messages and
// hints. It measured 14,413 bytes gzipped when the budget was set; 15 KiB leaves about 6%
// for small spec changes, so that growth from a change in how validators are generated or
// tree-shaken fails here and gets looked at.
const consumer = `import { validateManagedAuth } from ${JSON.stringify(distIndex)};
export const check = (record) => validateManagedAuth(record);`;
const budget = 15 * 1024;

it(`keeps a browser consumer that validates a ManagedAuth within ${budget} bytes gzipped`, async () => {
  const result = await build({
    stdin: { contents: consumer, resolveDir: fileURLToPath(new URL(".", import.meta.url)), loader: "js" },
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    write: false,
    logLevel: "silent",
  });
  const bundle = result.outputFiles[0]!.contents;
  const text = new TextDecoder().decode(bundle);
  // The bundle holds the ManagedAuth validator (its enum values), and not the validators
  // it does not use, such as the WebMCP ones (only WebMcpTool and WebMcpInvokeRequest have a tool_ref).
  expect(text).toContain("NEEDS_AUTH");
  expect(text).not.toContain("tool_ref");
  expect(text).not.toContain("node:");
  expect(gzipSync(bundle, { level: 9 }).length).toBeLessThanOrEqual(budget);
});
