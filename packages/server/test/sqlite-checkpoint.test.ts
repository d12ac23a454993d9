import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteDatabase } from "../src/storage/database.js";

// A read left inside its query holds the write-ahead log open: SQLite's automatic
// checkpoint cannot pass it, and the log grows with every write (an outside attack grew
// it to 1.6 GB, and the server's memory with it, while the data was 45 MB).
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the SQLite log", () => {
  it("stays near SQLite's checkpoint size after a read of one row of many, however much is written after it", () => {
    const dir = mkdtempSync(join(tmpdir(), "browser-service-checkpoint-"));
    dirs.push(dir);
    const file = join(dir, "db.sqlite");
    const db = SqliteDatabase.open(file);
    try {
      db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, body TEXT NOT NULL)");
      for (let i = 0; i < 3; i++) db.run("INSERT INTO t (body) VALUES (?)", ["x"]);
      // One row of three: the statement stops inside its query.
      expect(db.get<{ id: number }>("SELECT id FROM t ORDER BY id")).toEqual({ id: 1 });
      const body = "y".repeat(64 * 1024);
      // 32 MiB written after it, in many commits (as telemetry writes).
      for (let i = 0; i < 512; i++) db.run("INSERT INTO t (body) VALUES (?)", [body]);
      // SQLite checkpoints every 1,000 pages (4 MiB): without the reset the log holds all 32 MiB.
      expect(statSync(`${file}-wal`).size).toBeLessThan(12 * 1024 * 1024);
    } finally {
      db.close();
    }
  });
});
