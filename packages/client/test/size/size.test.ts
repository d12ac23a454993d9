import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { expect, it } from "vitest";

// The same consumer as bench/client-bundle.mjs: create a client and list projects.
const consumer = fileURLToPath(new URL("../../../../bench/fixtures/bundle-consumer.mjs", import.meta.url));
// 5.5 KiB: the client with its table of every operation (41 rows since the auth
// connections, profiles, credentials and the rest of extensions), which the facade needs
// whatever is called.
const budget = 5.5 * 1024;

it(`keeps a browser consumer that lists projects within ${budget} bytes gzipped, dependencies included`, async () => {
  const result = await build({ entryPoints: [consumer], bundle: true, minify: true, format: "esm", platform: "browser", write: false, logLevel: "silent" });
  const bundle = result.outputFiles[0]!.contents;
  const gzipped = gzipSync(bundle, { level: 9 }).length;
  // The bundle is the client's browser build, not something that lost the client on the way.
  const text = new TextDecoder().decode(bundle);
  expect(text).toContain("/org/projects");
  expect(text).not.toContain("node:");
  expect(gzipped).toBeLessThanOrEqual(budget);
});
