// `npm test` runs every bench once (bench/smoke.mjs), so that none rots unnoticed: a bench
// added to bench/ and forgotten in the smoke list would escape that, and fails here.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const bench = fileURLToPath(new URL("../../../bench", import.meta.url));

describe("the bench smoke run", () => {
  it("lists every bench of bench/, and the bench package's test runs it", () => {
    const smoke = readFileSync(join(bench, "smoke.mjs"), "utf8");
    const listed = [...smoke.matchAll(/^\s*\["([a-z-]+\.mjs)"/gm)].map((match) => match[1]);
    const benches = readdirSync(bench).filter((name) => name.endsWith(".mjs") && name !== "smoke.mjs");
    expect(benches.length).toBeGreaterThan(10);
    expect(listed.sort()).toEqual(benches.sort());
    expect(JSON.parse(readFileSync(join(bench, "package.json"), "utf8")).scripts.test).toBe("node smoke.mjs");
  });
});
