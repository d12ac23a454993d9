import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type AnySetting, SETTINGS } from "../src/app/settings.js";
import { createServer } from "../src/index.js";
import { tempDataDir } from "./support/test-server.js";

// An embedder's options are the command line's settings under other names: each is
// checked by its setting's own rule (the table in src/app/settings.ts), so no value the
// command line refuses reaches the server through createServer either.

/** `options` with `value` at `path` (`cdpLimits.maxClients`). */
function at(path: string, value: unknown): Record<string, unknown> {
  const parts = path.split(".");
  let nested: unknown = value;
  for (const part of parts.reverse()) nested = { [part]: nested };
  return nested as Record<string, unknown>;
}

const NUMERIC = (SETTINGS as readonly AnySetting[]).filter((each) => each.option !== undefined && each.parse.range !== undefined);

describe("createServer's options", () => {
  it("names where each setting is taken, for every setting of the API's limits", () => {
    expect(NUMERIC.map((each) => each.option)).toEqual(
      expect.arrayContaining([
        "planLimit",
        "warmBrowsers",
        "cdpLimits.maxClients",
        "cdpLimits.maxMessageBytes",
        "liveView.maxViewers",
        "rateLimits.perKey.burst",
        "metrics.port",
      ]),
    );
  });

  it.each(NUMERIC.map((each) => [each.option as string, each] as const))(
    "refuses %s past its setting's range, or not a whole number, before anything is opened",
    async (option, each) => {
      const unit = (each.parse as { unit?: number }).unit ?? 1;
      const most = Number((each.parse.range as string).split(" to ")[1]) * unit;
      // A rate may be a fraction (0.5: one every two seconds); every other setting counts whole units.
      const rate = /Rate$|^rateLimits\.[^.]+\.rate$/.test(option);
      for (const bad of [most + 1, -1, Number.NaN, "5", ...(rate ? [] : [1.5])]) {
        const dataDir = join(tempDataDir(), "never");
        await expect(createServer({ dataDir, ...at(option, bad) } as never), `${option} = ${String(bad)}`).rejects.toThrow(
          new RegExp(`^${option.replaceAll(".", "\\.")} must be an? (integer|number) from \\d+ to ${most}; received`),
        );
        // Refused before the data directory was claimed or made.
        expect(existsSync(dataDir)).toBe(false);
      }
    },
  );

  it("takes sizes in bytes below the command line's whole MiB, and refuses a node id or database the command line refuses", async () => {
    const dataDir = tempDataDir();
    await expect(createServer({ dataDir, cdpLimits: { maxMessageBytes: 0 } })).rejects.toThrow(/cdpLimits\.maxMessageBytes must be an integer from 1 to/);
    await expect(createServer({ dataDir, nodeId: "a/b" })).rejects.toThrow(RangeError);
    await expect(createServer({ dataDir, database: "mysql://db/x" })).rejects.toThrow(/database must be a postgres/);
    expect(readdirSync(dataDir)).toEqual([]);
  });
});
