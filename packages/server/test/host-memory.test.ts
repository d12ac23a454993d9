import { totalmem } from "node:os";
import { describe, expect, it } from "vitest";
import { availableMemoryBytes } from "../src/browsers/host-memory.js";
import { ConfigError, DEFAULT_CONFIG, parseCommand } from "../src/index.js";
import { startTestServer } from "./support/test-server.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";

// Below a floor of available memory the server starts no browser: a create is refused
// with a clear code and a time to retry, instead of leaving the kernel's OOM killer to
// choose which process (another tenant's browser, the server) ends.

describe("the host's memory floor", () => {
  it("refuses creates below it (503 host_memory_low, Retry-After), starting nothing and holding no slot, and takes them again above it", async () => {
    let available = 300 * 1024 * 1024;
    const launcher = new TrackingLauncher();
    const server = await startTestServer({ launcher, minFreeMemoryMib: 512, availableMemory: () => available });
    try {
      const response = await fetch(`${server.url}/browsers`, { method: "POST", headers: { authorization: `Bearer ${server.orgKey}` } });
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toBe("5");
      expect(await response.json()).toMatchObject({
        code: "host_memory_low",
        message: expect.stringContaining("300 MiB of memory available, below the 512 MiB"),
      });
      expect(launcher.launched).toHaveLength(0);
      expect(await server.client().browsers.list()).toEqual([]);
      available = 2 * 1024 * 1024 * 1024;
      const browser = await server.client().browsers.create();
      expect(browser.status).toBe("running");
      expect(launcher.launched).toHaveLength(1);
    } finally {
      await server.close();
    }
  });

  it("is read from what the host can give: a positive amount, no more than its memory", () => {
    const available = availableMemoryBytes();
    expect(available).toBeGreaterThan(0);
    expect(available).toBeLessThanOrEqual(totalmem());
  });

  it("is 512 MiB by default on the command line, set by flag or environment, and 0 turns it off", () => {
    expect(DEFAULT_CONFIG.minFreeMemoryMib).toBe(512);
    expect(parseCommand([], {})).toMatchObject({ config: { minFreeMemoryMib: 512 } });
    expect(parseCommand([], { BROWSER_SERVICE_MIN_FREE_MEMORY_MIB: "2048" })).toMatchObject({ config: { minFreeMemoryMib: 2048 } });
    expect(parseCommand(["--min-free-memory-mib", "0"], { BROWSER_SERVICE_MIN_FREE_MEMORY_MIB: "2048" })).toMatchObject({ config: { minFreeMemoryMib: 0 } });
    for (const bad of ["-1", "1.5", "lots", "1048577"]) expect(() => parseCommand(["--min-free-memory-mib", bad], {}), bad).toThrow(ConfigError);
  });
});
