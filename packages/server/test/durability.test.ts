import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { createClient } from "@browser-service/client";
import sqlite3 from "node-sqlite3-wasm";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../src/index.js";
import { claimDataDir, dataDirLayout } from "../src/storage/data-dir.js";
import { SqliteDatabase } from "../src/storage/database.js";
import { spawnServer } from "./support/child-server.js";
import { chromiumBrowserPids, commandLine } from "./support/chromium-processes.js";
import { ON_POSTGRES, testDatabaseFor } from "./support/postgres.js";
import { storedRows } from "./support/stored-rows.js";
import { tempDataDir } from "./support/test-server.js";
import { processExists } from "./support/tracking-launcher.js";
import { buildZip, goodExtensionZip } from "./support/zip-writer.js";

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function newDataDir(): string {
  const dir = tempDataDir();
  dirs.push(dir);
  return dir;
}

const clientFor = (url: string, apiKey: string) => createClient({ baseUrl: url, apiKey, projectId: null, maxRetries: 0 });

// Runs once the server stopped or died: it holds the database's lock exclusively while it
// runs. Opened as the server opens it (exclusive lock before the first read, as the WAL
// database cannot be read through node-sqlite3-wasm's VFS without shared memory otherwise).
// On PostgreSQL (whose own recovery keeps its files whole), that every extension record
// kept its archive: they are committed together.
async function integrityCheck(dataDir: string): Promise<string> {
  const database = await testDatabaseFor(dataDir);
  if (database !== undefined) {
    const [row] = await storedRows<{ n: number }>(
      { dataDir, database },
      "SELECT count(*)::int AS n FROM extensions e WHERE NOT EXISTS (SELECT 1 FROM extension_archives a WHERE a.extension_id = e.id)",
    );
    return row?.n === 0 ? "ok" : `${row?.n} extension records without their archive`;
  }
  const db = new sqlite3.Database(join(dataDir, "browser-service.sqlite"));
  try {
    db.exec("PRAGMA locking_mode=EXCLUSIVE");
    return String(db.get("PRAGMA integrity_check")?.integrity_check);
  } finally {
    db.close();
  }
}

describe("durability across SIGKILL", () => {
  it("keeps every write acknowledged right before a SIGKILL", async () => {
    const dataDir = newDataDir();
    let server = await spawnServer(dataDir);
    const key = server.printedKey as string;
    expect(key).toMatch(/^bsk_[0-9A-Za-z]{32}$/);

    const project = await clientFor(server.url, key).projects.create({ name: "durable" });
    await server.kill();
    server = await spawnServer(dataDir);
    expect(server.printedKey).toBeUndefined();
    expect(await clientFor(server.url, key).projects.get("durable")).toEqual(project);

    const zip = goodExtensionZip();
    const extension = await clientFor(server.url, key).extensions.upload({ file: zip, name: "kept" }, { projectId: project.id });
    await server.kill();
    server = await spawnServer(dataDir);
    expect(readFileSync(join(dataDir, "extensions", `${extension.id}.zip`)).equals(zip)).toBe(true);
    expect(createHash("sha256").update(zip).digest("hex")).toBe(extension.checksum);
    await expect(clientFor(server.url, key).extensions.upload({ file: zip, name: "kept" }, { projectId: project.id })).rejects.toMatchObject({ status: 409 });

    await clientFor(server.url, key).projects.updateLimits("durable", { max_concurrent_sessions: 3 });
    await clientFor(server.url, key).projects.update("durable", { status: "archived" });
    await server.kill();
    server = await spawnServer(dataDir);
    expect(await clientFor(server.url, key).projects.getLimits("durable")).toMatchObject({ max_concurrent_sessions: 3 });
    expect((await clientFor(server.url, key).projects.get("durable")).status).toBe("archived");
    expect(await server.stop()).toBe(0);
    expect(await integrityCheck(dataDir)).toBe("ok");
  });

  it("loses no acknowledged write when killed in the middle of concurrent writes, and stays consistent", async () => {
    const dataDir = newDataDir();
    let server = await spawnServer(dataDir);
    const key = server.printedKey as string;
    const acknowledgedProjects: string[] = [];
    const acknowledgedExtensions: string[] = [];
    const ROUNDS = 5;
    const WRITES = 24;
    const KILL_AFTER = 8;
    for (let round = 0; round < ROUNDS; round++) {
      const client = clientFor(server.url, key);
      let acks = 0;
      let killing: Promise<void> | undefined;
      const acknowledge = (list: string[], name: string) => {
        list.push(name);
        if (++acks === KILL_AFTER) killing = server.kill();
      };
      const writes = Array.from({ length: WRITES }, (_, i) => {
        const name = `r${round}-w${i}`;
        return i % 4 === 0
          ? client.extensions.upload({ file: goodExtensionZip(), name }).then(() => acknowledge(acknowledgedExtensions, name))
          : client.projects.create({ name }).then(() => acknowledge(acknowledgedProjects, name));
      });
      // Writes cut off by the kill fail; only acknowledged ones are promised to survive.
      const outcomes = await Promise.allSettled(writes);
      expect(outcomes.some((outcome) => outcome.status === "fulfilled")).toBe(true);
      await (killing ?? server.kill());
      server = await spawnServer(dataDir);
    }
    const client = clientFor(server.url, key);
    const names = new Set<string>();
    for await (const project of client.projects.listAll({ limit: 100 })) names.add(project.name);
    expect(acknowledgedProjects.length).toBeGreaterThanOrEqual(ROUNDS);
    for (const name of acknowledgedProjects) expect(names.has(name), name).toBe(true);
    for (const name of acknowledgedExtensions) {
      await expect(client.extensions.upload({ file: goodExtensionZip(), name }), name).rejects.toMatchObject({ status: 409, code: "name_conflict" });
    }
    expect(readdirSync(join(dataDir, "uploads"))).toEqual([]);
    expect(await server.stop()).toBe(0);
    expect(await integrityCheck(dataDir)).toBe("ok");
  });

  // SQLite's write-ahead log only: a PostgreSQL server replays its own, as the tests above show.
  it.skipIf(ON_POSTGRES)("after a SIGKILL, the next owner's open replays the write-ahead log: acknowledged writes are in the file", async () => {
    const dataDir = newDataDir();
    const server = await spawnServer(dataDir);
    const project = await clientFor(server.url, server.printedKey as string).projects.create({ name: "in-the-log" });
    await server.kill();
    const layout = dataDirLayout(dataDir);
    // The commit is in the log, not yet in the database file; the killed server's lock stays.
    expect(existsSync(`${layout.databaseFile}-wal`)).toBe(true);
    expect(existsSync(`${layout.databaseFile}.lock`)).toBe(true);
    // Taken over as the next server or `keys create` does: owner file, stale lock cleared.
    const release = claimDataDir(layout);
    try {
      const db = SqliteDatabase.open(layout.databaseFile);
      try {
        expect(db.get<{ id: string }>("SELECT id FROM projects WHERE name = ?", ["in-the-log"])).toEqual({ id: project.id });
        expect(db.get<{ integrity_check: string }>("PRAGMA integrity_check")?.integrity_check).toBe("ok");
      } finally {
        db.close();
      }
    } finally {
      release();
    }
  });

  it("after a SIGKILL, `keys create` issues a key into the data directory and keeps the commits of the log", async () => {
    const dataDir = newDataDir();
    let server = await spawnServer(dataDir);
    await clientFor(server.url, server.printedKey as string).projects.create({ name: "before-the-kill" });
    await server.kill();
    const out: string[] = [];
    const err: string[] = [];
    const io = { stdout: (text: string) => void out.push(text), stderr: (text: string) => void err.push(text) };
    const database = await testDatabaseFor(dataDir);
    expect(await runCli(["keys", "create", "--data-dir", dataDir, ...(database === undefined ? [] : ["--database", database])], io), err.join("")).toBe(0);
    const key = out.join("").trim();
    server = await spawnServer(dataDir);
    const names = (await clientFor(server.url, key).projects.list()).map((project) => project.name);
    expect(names).toContain("before-the-kill");
    expect(await server.stop()).toBe(0);
  });

  it("after a SIGKILL, browsers end with the server and the next start marks them crashed, freeing their slots", async () => {
    const dataDir = newDataDir();
    let server = await spawnServer(dataDir);
    const key = server.printedKey as string;
    const browser = await clientFor(server.url, key).browsers.create({ name: "orphan" });
    // Only this server's browsers: other Chromium processes of a shared machine are not counted.
    const orphans = chromiumBrowserPids(server.child.pid as number);
    expect(orphans).toHaveLength(1);
    const [orphan] = orphans;
    await server.kill();
    // Its sandbox ends with the server (bwrap --die-with-parent)...
    await expect.poll(() => processExists(orphan as number), { timeout: 10_000 }).toBe(false);
    server = await spawnServer(dataDir);
    try {
      // ...and the next start records the crash, freeing its slot.
      expect(await clientFor(server.url, key).browsers.get("orphan")).toMatchObject({ id: browser.id, status: "crashed" });
      expect((await clientFor(server.url, key).limits.get()).concurrent_sessions_used).toBe(0);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe("a SIGKILL while a browser's extensions load", () => {
  it("leaves no process and no profile once the server starts again", async () => {
    const dataDir = newDataDir();
    let server = await spawnServer(dataDir);
    const key = server.printedKey as string;
    const client = clientFor(server.url, key);
    // 10,000 entries unpack for seconds: the kill lands while the browser is still starting.
    const many = buildZip([
      { name: "manifest.json", data: JSON.stringify({ manifest_version: 3, name: "Many", version: "1.0" }) },
      ...Array.from({ length: 9_999 }, (_, i) => ({ name: `f/${i}.js`, data: "" })),
    ]);
    const extension = await client.extensions.upload({ file: many });
    const creating = client.browsers.create({ extensions: [{ id: extension.id }] }).catch((error: unknown) => error);
    let pid: number | undefined;
    await expect.poll(() => (pid = chromiumBrowserPids(server.child.pid as number)[0]), { timeout: 20_000 }).toBeDefined();
    const profile = commandLine(pid as number)
      ?.find((arg) => arg.startsWith("--user-data-dir="))
      ?.slice("--user-data-dir=".length);
    expect(profile).toBeDefined();
    await expect.poll(() => existsSync(join(profile as string, "extensions", extension.id)), { timeout: 20_000 }).toBe(true);
    await server.kill();
    await creating;
    server = await spawnServer(dataDir);
    try {
      expect(existsSync(profile as string)).toBe(false);
      expect(processExists(pid as number)).toBe(false);
      expect((await clientFor(server.url, key).limits.get()).concurrent_sessions_used).toBe(0);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  });
});

describe("graceful shutdown", () => {
  it("exits 0 on SIGTERM and releases the data directory", async () => {
    const dataDir = newDataDir();
    const server = await spawnServer(dataDir);
    expect(await server.stop()).toBe(0);
    expect(readdirSync(dataDir)).not.toContain("server.pid");
    const again = await spawnServer(dataDir);
    expect(await again.stop()).toBe(0);
  });

  it("refuses a second server on the same data directory", async () => {
    const dataDir = newDataDir();
    const server = await spawnServer(dataDir);
    try {
      await expect(spawnServer(dataDir)).rejects.toThrow(/in use by the server with pid/);
    } finally {
      await server.stop();
    }
  });
});
