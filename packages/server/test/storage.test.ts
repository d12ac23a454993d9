import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteDatabase, StorageError } from "../src/storage/database.js";
import { adoptedHistory, applyMigrations, MIGRATIONS_DIR, MigrationError, readMigrations } from "../src/storage/migrations.js";
import { startTestServer, tempDataDir } from "./support/test-server.js";

const dirs: string[] = [];
function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "browser-service-storage-"));
  dirs.push(dir);
  return dir;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("database", () => {
  it("opens with the durability pragmas: exclusive lock, write-ahead log and synchronous=NORMAL (each commit's sync is the server's)", () => {
    const db = SqliteDatabase.open(join(scratch(), "a.sqlite"));
    try {
      expect(db.get<{ locking_mode: string }>("PRAGMA locking_mode")?.locking_mode).toBe("exclusive");
      expect(db.get<{ journal_mode: string }>("PRAGMA journal_mode")?.journal_mode).toBe("wal");
      expect(db.get<{ synchronous: number }>("PRAGMA synchronous")?.synchronous).toBe(1);
      expect(db.get<{ foreign_keys: number }>("PRAGMA foreign_keys")?.foreign_keys).toBe(1);
    } finally {
      db.close();
    }
  });

  it("rolls a transaction back when its work throws, and refuses asynchronous work", () => {
    const db = SqliteDatabase.open(join(scratch(), "b.sqlite"));
    try {
      db.exec("CREATE TABLE t (v INTEGER)");
      expect(() =>
        db.transaction(() => {
          db.run("INSERT INTO t VALUES (1)");
          throw new Error("boom");
        }),
      ).toThrow("boom");
      expect(() => db.transaction(() => Promise.resolve(db.run("INSERT INTO t VALUES (2)")))).toThrow(StorageError);
      expect(() => db.transaction(() => db.transaction(() => 1))).toThrow(/do not nest/);
      expect(db.all("SELECT v FROM t")).toEqual([]);
      db.transaction(() => db.run("INSERT INTO t VALUES (3)"));
      expect(db.all("SELECT v FROM t")).toEqual([{ v: 3 }]);
    } finally {
      db.close();
    }
  });

  it("refuses text with a NUL rather than cut it there: no write, no lookup by a cut key", () => {
    const db = SqliteDatabase.open(join(scratch(), "c.sqlite"));
    try {
      db.exec("CREATE TABLE t (v TEXT)");
      db.run("INSERT INTO t VALUES (?)", ["Default"]);
      expect(() => db.run("INSERT INTO t VALUES (?)", ["a\u0000b"])).toThrow(expect.objectContaining({ code: "storage_misuse" }));
      expect(() => db.get("SELECT v FROM t WHERE v = ?", ["Default\u0000x"])).toThrow(StorageError);
      expect(() => db.all("SELECT v FROM t WHERE v = :v", { ":v": "Default\u0000" })).toThrow(StorageError);
      expect(() => db.run("DELETE FROM t WHERE v = ?", ["Default\u0000"])).toThrow(StorageError);
      expect(db.all("SELECT v FROM t")).toEqual([{ v: "Default" }]);
    } finally {
      db.close();
    }
  });
});

describe("migrations", () => {
  it("applies the repository's migrations in order, once, recording each", () => {
    const db = SqliteDatabase.open(join(scratch(), "m.sqlite"));
    try {
      const all = readMigrations();
      expect(all[0]?.name).toBe("init");
      expect(applyMigrations(db)).toEqual(all.map((migration) => migration.version));
      expect(applyMigrations(db)).toEqual([]);
      expect(db.all<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version").map((row) => row.version)).toEqual(
        all.map((migration) => migration.version),
      );
    } finally {
      db.close();
    }
  });

  it("applies a later migration alone, and rolls back a failing one without recording it", () => {
    const dir = scratch();
    writeFileSync(join(dir, "0001_first.sql"), "CREATE TABLE a (x INTEGER);");
    const db = SqliteDatabase.open(join(dir, "m.sqlite"));
    try {
      expect(applyMigrations(db, readMigrations(dir))).toEqual([1]);
      writeFileSync(join(dir, "0002_broken.sql"), "CREATE TABLE b (x INTEGER); INSERT INTO missing VALUES (1);");
      expect(() => applyMigrations(db, readMigrations(dir))).toThrow(MigrationError);
      expect(db.get("SELECT name FROM sqlite_master WHERE name = 'b'")).toBeUndefined();
      writeFileSync(join(dir, "0002_broken.sql"), "CREATE TABLE b (x INTEGER);");
      expect(applyMigrations(db, readMigrations(dir))).toEqual([2]);
    } finally {
      db.close();
    }
  });

  it("keeps one history for both databases: each step under one number, in a shared form or one per dialect", () => {
    const sqlite = readMigrations(MIGRATIONS_DIR, "sqlite");
    const postgres = readMigrations(MIGRATIONS_DIR, "postgres");
    expect(postgres.map(({ version, name }) => [version, name])).toEqual(sqlite.map(({ version, name }) => [version, name]));
    // A step of one dialect only is recorded with nothing to run on the other.
    expect(sqlite.find((step) => step.name === "nodes")?.sql).toBe("");
    expect(postgres.find((step) => step.name === "nodes")?.sql).toMatch(/CREATE TABLE nodes/);
    expect(postgres.find((step) => step.name === "browser_cdp_token")?.sql).toBe("");

    const dir = scratch();
    writeFileSync(join(dir, "0001_a.sql"), "SELECT 1;");
    writeFileSync(join(dir, "0001_a.sqlite.sql"), "SELECT 2;");
    expect(() => readMigrations(dir)).toThrow(/both a shared form and a dialect's form/);
    rmSync(join(dir, "0001_a.sql"));
    writeFileSync(join(dir, "0001_b.postgres.sql"), "SELECT 3;");
    expect(() => readMigrations(dir)).toThrow(/two names/);
  });

  it("adopts a database recorded under the separate histories the two databases had before, losing nothing", () => {
    const db = SqliteDatabase.open(join(scratch(), "old.sqlite"));
    try {
      const all = readMigrations();
      applyMigrations(db);
      db.run("CREATE TABLE kept (v TEXT)");
      db.run("INSERT INTO kept (v) VALUES ('Kept')");
      // SQLite's own numbering before the merge: its eleven steps, numbered 1 to 11.
      const sqliteSteps = all.filter((step) => step.sql !== "");
      db.transaction(() => {
        db.run("DELETE FROM schema_migrations");
        sqliteSteps.forEach((step, index) => db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 'then')", [index + 1, step.name]));
      });
      // Only the steps SQLite has nothing to do for are new; nothing is run twice (a second
      // ALTER TABLE ... ADD COLUMN would fail).
      expect(applyMigrations(db)).toEqual(all.filter((step) => step.sql === "").map((step) => step.version));
      expect(db.all<{ version: number; name: string }>("SELECT version, name FROM schema_migrations ORDER BY version")).toEqual(
        all.map(({ version, name }) => ({ version, name })),
      );
      expect(db.get("SELECT v FROM kept")).toEqual({ v: "Kept" });
      expect(applyMigrations(db)).toEqual([]);
    } finally {
      db.close();
    }
    // PostgreSQL's numbering before the merge maps by name just as well.
    const postgres = readMigrations(MIGRATIONS_DIR, "postgres");
    const oldPg = postgres.filter((step) => step.sql !== "").map((step, index) => ({ version: index + 1, name: step.name }));
    expect(adoptedHistory(oldPg, postgres)).toEqual(postgres.filter((step) => step.sql !== "").map(({ version, name }) => ({ version, name })));
    expect(
      adoptedHistory(
        postgres.map(({ version, name }) => ({ version, name })),
        postgres,
      ),
    ).toBeUndefined();
  });

  it("refuses, changing nothing, a database that records a step this history does not know or one step twice", () => {
    const all = readMigrations();
    for (const [i, recorded] of [
      // Another build's step where this history has another: taken for it, its schema would lack what the server expects.
      [...all.slice(0, 6).map(({ version, name }) => ({ version, name })), { version: 7, name: "browser_timeout_v2" }],
      [
        { version: 1, name: "init" },
        { version: 2, name: "init" },
      ],
    ].entries()) {
      const db = SqliteDatabase.open(join(scratch(), `foreign-${i}.sqlite`));
      try {
        applyMigrations(db, all.slice(0, 6));
        db.transaction(() => {
          db.run("DELETE FROM schema_migrations");
          for (const row of recorded) db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, 'then')", [row.version, row.name]);
        });
        expect(() => applyMigrations(db)).toThrow(i === 0 ? /step 7 "browser_timeout_v2", which is not in this server's history/ : /records step "init" twice/);
        expect(db.all("SELECT version, name FROM schema_migrations ORDER BY version")).toEqual(recorded);
        expect(db.get("SELECT 1 AS found FROM pragma_table_info('browsers') WHERE name = 'timeout_seconds'")).toBeUndefined();
      } finally {
        db.close();
      }
    }
  });

  it("refuses gaps in the numbering and a database newer than the server", () => {
    const dir = scratch();
    writeFileSync(join(dir, "0001_a.sql"), "SELECT 1;");
    writeFileSync(join(dir, "0003_c.sql"), "SELECT 1;");
    expect(() => readMigrations(dir)).toThrow(/out of sequence/);
    const db = SqliteDatabase.open(join(dir, "n.sqlite"));
    try {
      applyMigrations(db);
      db.run("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'x')");
      expect(() => applyMigrations(db)).toThrow(/newer than this server/);
    } finally {
      db.close();
    }
  });
});

describe("crash recovery", () => {
  it("starts after a process died inside a write transaction: the committed write is replayed from the log, the open one rolled back, the lock cleared", async () => {
    const dataDir = tempDataDir();
    const first = await startTestServer({ dataDir });
    await first.close({ keepData: true });
    const databaseFile = join(dataDir, "browser-service.sqlite");
    // A process that dies by SIGKILL after one committed write and inside a second one,
    // opening the database as the server does (the exclusive lock first: the file is in WAL
    // mode and the VFS has no shared memory).
    const script = `
      const { Database } = require("node-sqlite3-wasm");
      const db = new Database(${JSON.stringify(databaseFile)});
      db.exec("PRAGMA locking_mode=EXCLUSIVE; PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL");
      db.run("UPDATE projects SET name = 'committed'");
      db.exec("BEGIN IMMEDIATE");
      db.run("UPDATE projects SET name = 'half-written'");
      process.kill(process.pid, "SIGKILL");`;
    const result = spawnSync(process.execPath, ["-e", script], { cwd: join(import.meta.dirname, "..") });
    expect(result.signal).toBe("SIGKILL");
    expect(existsSync(`${databaseFile}.lock`)).toBe(true);
    expect(existsSync(`${databaseFile}-wal`)).toBe(true);
    // A stale owner file of a process that no longer runs must not block the start either.
    writeFileSync(join(dataDir, "server.pid"), `${result.pid}\n`);
    // A half-received upload (named as the server names them) goes; what the server did not name stays.
    const leftover = join(dataDir, "uploads", "0b6f3d1e-2c4a-4f8e-9a7b-5d3c1e2f4a6b.zip");
    writeFileSync(leftover, "half an archive");
    mkdirSync(join(dataDir, "uploads", "someone-elses"), { recursive: true });

    const second = await startTestServer({ dataDir });
    try {
      // The committed write is replayed from the log; the uncommitted one is not.
      expect((await second.client().projects.list()).map((project) => project.name)).toEqual(["committed"]);
      expect(existsSync(leftover)).toBe(false);
      expect(existsSync(join(dataDir, "uploads", "someone-elses"))).toBe(true);
    } finally {
      await second.close({ keepData: true });
    }
    const db = SqliteDatabase.open(databaseFile);
    try {
      expect(db.get<{ integrity_check: string }>("PRAGMA integrity_check")?.integrity_check).toBe("ok");
    } finally {
      db.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
