import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { createClient } from "@browser-service/client";
import { afterAll, describe, expect, it } from "vitest";
import { spawnServer } from "./support/child-server.js";
import { ON_POSTGRES } from "./support/postgres.js";
import { tempDataDir } from "./support/test-server.js";
import { drive } from "./support/webmcp-driver.js";

// A profile's state is replaced whole or not at all: the server is killed (SIGKILL, no
// clean-up of any kind) at moments spread over a save, and each time the next start
// finds either the previous state or the new one, never a mix or nothing.

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Writes `mark`, and 2 MiB beside it so that a save takes a while, into the local storage of `origin`. */
async function writeMark(cdpWsUrl: string, origin: string, mark: string): Promise<void> {
  const driver = await drive(cdpWsUrl);
  try {
    const page = await driver.open(origin);
    await page.evaluate((value) => {
      localStorage.setItem("mark", value);
      localStorage.setItem("padding", "p".repeat(2 * 1024 * 1024));
    }, mark);
    // A page's write reaches Chromium's storage asynchronously; a browser closed in that
    // instant never had it (README). A second tab seeing the mark proves it arrived.
    const witness = await driver.open(origin);
    await expect.poll(() => witness.evaluate(() => localStorage.getItem("mark"))).toBe(mark);
  } finally {
    await driver.disconnect();
  }
}

async function readMark(cdpWsUrl: string, origin: string): Promise<string | null> {
  const driver = await drive(cdpWsUrl);
  try {
    const page = await driver.open(origin);
    return await page.evaluate(() => localStorage.getItem("mark"));
  } finally {
    await driver.disconnect();
  }
}

describe("a server killed while it saves a profile", () => {
  it("starts again with the previous state or the new one, whole", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const { createServer } = await import("node:http");
    const site = createServer((_request, response) => response.end("<!doctype html><title>Site</title>")).listen(0, "127.0.0.1");
    await new Promise((resolve) => site.once("listening", resolve));
    const origin = `http://127.0.0.1:${(site.address() as { port: number }).port}/`;
    let server = await spawnServer(dataDir);
    const key = server.printedKey as string;
    try {
      let client = createClient({ baseUrl: server.url, apiKey: key, projectId: null, maxRetries: 0 });
      const profile = await client.profiles.create({ name: "durable" });
      const first = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
      await writeMark(first.cdp_ws_url, origin, "old");
      await client.browsers.delete(first.id);
      let previous = "old";
      for (const delayMs of [0, 40, 120, 300, 700]) {
        const saving = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
        await writeMark(saving.cdp_ws_url, origin, `new-${delayMs}`);
        const deleting = client.browsers.delete(saving.id).catch(() => undefined);
        await sleep(delayMs);
        await server.kill();
        await deleting;
        server = await spawnServer(dataDir);
        client = createClient({ baseUrl: server.url, apiKey: key, projectId: null, maxRetries: 0 });
        const reader = await client.browsers.create({ profile: { id: profile.id } });
        const found = await readMark(reader.cdp_ws_url, origin);
        expect([previous, `new-${delayMs}`]).toContain(found);
        previous = found as string;
        await client.browsers.delete(reader.id);
      }
      await server.stop();
      // What a killed save wrote and never pointed at is gone after the next start.
      if (!ON_POSTGRES) expect(readdirSync(join(dataDir, "profiles"))).toHaveLength(1);
    } finally {
      await server.stop().catch(() => undefined);
      site.close();
    }
  });
});
