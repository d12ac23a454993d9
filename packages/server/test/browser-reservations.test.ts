import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { initializeOrganization } from "../src/app/first-start.js";
import { openSqliteStores } from "../src/app/stores.js";
import { BrowserLaunchError, type BrowserLauncher } from "../src/browsers/browser-launcher.js";
import { BrowserService } from "../src/browsers/browser-service.js";
import type { BrowserStore } from "../src/browsers/browser-store.js";
import type { Stores } from "../src/routes/api-deps.js";
import { dataDirLayout } from "../src/storage/data-dir.js";
import { StorageError } from "../src/storage/storage-error.js";
import { WebMcpService } from "../src/webmcp/webmcp-service.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";

// A reservation of a browser that is not kept is hidden from every read, so no client can
// free its slot: the service must, even when the database refuses the delete a moment.

const opened: { stores: Stores; dir: string; service?: BrowserService }[] = [];
afterEach(async () => {
  for (const { stores, dir, service } of opened.splice(0)) {
    await service?.closeAll();
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

const refusingLauncher: BrowserLauncher = {
  launch: () => Promise.reject(new BrowserLaunchError("No browser in this test.")),
};

/** `store`, whose next `refusals` deletes fail as they do while the database is down. */
function refusingDeletes(store: BrowserStore, refusals: { left: number }): BrowserStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === "remove" && refusals.left > 0) {
        return async () => {
          refusals.left -= 1;
          throw new StorageError("storage_unavailable", "The database did not answer: connection refused");
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Stores in a data directory of their own, with a first organization; the service is the caller's to set on `entry`. */
async function openService() {
  const dir = mkdtempSync(join(tmpdir(), "browser-service-reservations-"));
  const stores = openSqliteStores(dataDirLayout(dir));
  const entry: (typeof opened)[number] = { stores, dir };
  opened.push(entry);
  const first = await initializeOrganization(stores);
  if (first === undefined) throw new Error("no first start");
  return { stores, entry, first, log: Fastify().log };
}

describe("the reservation of a browser that is not kept", () => {
  it("is freed once the database takes the delete again, and the create still answers why the browser was not kept", async () => {
    const { stores, entry, first, log } = await openService();
    const refusals = { left: 2 };
    const service = new BrowserService(refusingDeletes(stores.browsers, refusals), refusingLauncher, 10, log, new WebMcpService(log));
    entry.service = service;
    await expect(service.create(first.project, {})).rejects.toMatchObject({ status: 503, code: "browser_unavailable" });
    // The first delete was refused: the slot is still taken, by a row no read shows.
    expect(await stores.usage.project(first.project.id)).toBe(1);
    await expect.poll(() => stores.usage.project(first.project.id)).toBe(0);
    expect(refusals.left).toBe(0);
  });
});

describe("a browser past its timeout", () => {
  it("is ended once the database takes the delete again: its slot and name are not kept for ever", async () => {
    const { stores, entry, first, log } = await openService();
    const refusals = { left: 0 };
    let now = 0;
    const service = new BrowserService(refusingDeletes(stores.browsers, refusals), new TrackingLauncher(), 10, log, new WebMcpService(log), {
      idle: { clock: () => now, sweepMs: 10 },
    });
    entry.service = service;
    await service.create(first.project, { timeoutSeconds: 10, name: "forgotten" });
    expect(await stores.usage.project(first.project.id)).toBe(1);
    // The database refuses the first two deletes, just as the browser times out.
    refusals.left = 2;
    now += 10_000;
    await expect.poll(() => stores.usage.project(first.project.id), { timeout: 10_000 }).toBe(0);
    expect(refusals.left).toBe(0);
  });
});
