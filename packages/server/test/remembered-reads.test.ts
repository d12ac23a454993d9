import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ApiKeyStore } from "../src/auth/api-key-store.js";
import { SqlApiKeyStore } from "../src/auth/sql-api-key-store.js";
import { dataDirLayout } from "../src/storage/data-dir.js";
import { SqliteDatabase } from "../src/storage/database.js";
import { applyMigrations } from "../src/storage/migrations.js";
import { sqliteStore } from "../src/storage/program-runners.js";
import { RememberedReads } from "../src/storage/remembered-reads.js";
import type { SqlParams } from "../src/storage/sql-values.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

// The hot reads of every request (its key, its organization, a page of projects) are
// remembered between writes. These tests warm them first, then change what they read.

const dirs: string[] = [];
function scratchDb(): SqliteDatabase {
  const dir = mkdtempSync(join(tmpdir(), "browser-service-remembered-"));
  dirs.push(dir);
  const db = SqliteDatabase.open(join(dir, "db.sqlite"));
  db.exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT NOT NULL UNIQUE)");
  db.run("INSERT INTO t (id, v) VALUES (1, 'one')");
  return db;
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("remembered reads", () => {
  it("read what is stored now after every kind of write: run, a committed and a rolled-back transaction", () => {
    const db = scratchDb();
    try {
      const read = () => db.remembered<{ v: string }>("get", "SELECT v FROM t WHERE id = ?", [1])?.v;
      expect(read()).toBe("one");
      db.run("UPDATE t SET v = 'uno' WHERE id = 1");
      expect(read()).toBe("uno");
      db.transaction(() => db.run("UPDATE t SET v = 'eins' WHERE id = 1"));
      expect(read()).toBe("eins");
      expect(() =>
        db.transaction(() => {
          db.run("UPDATE t SET v = 'un' WHERE id = 1");
          // Inside the transaction the write shows...
          expect(read()).toBe("un");
          throw new Error("changed my mind");
        }),
      ).toThrow("changed my mind");
      // ...and after its rollback it is gone.
      expect(read()).toBe("eins");
      db.run("DELETE FROM t WHERE id = 1");
      expect(read()).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it("are frozen, so no caller can change what the next one reads", () => {
    const db = scratchDb();
    try {
      const row = db.remembered<{ v: string }>("get", "SELECT v FROM t WHERE id = ?", [1]) as { v: string };
      expect(() => {
        row.v = "changed";
      }).toThrow(TypeError);
      expect(db.remembered<{ v: string }>("get", "SELECT v FROM t WHERE id = ?", [1])?.v).toBe("one");
    } finally {
      db.close();
    }
  });

  it("a key removed from the store no longer authenticates, though it was just used", () => {
    const dir = mkdtempSync(join(tmpdir(), "browser-service-remembered-"));
    dirs.push(dir);
    const db = SqliteDatabase.open(dataDirLayout(dir).databaseFile);
    try {
      applyMigrations(db);
      const apiKeys = sqliteStore<ApiKeyStore>(new SqlApiKeyStore({ dialect: "sqlite" }), db);
      db.run("INSERT INTO organizations (id, default_project_id, created_at) VALUES ('org_1', '', '2026-01-01T00:00:00.000Z')");
      const key = db.transaction(() => apiKeys.insert("org_1", null));
      expect(apiKeys.authenticate(key.secret)?.keyId).toBe(key.keyId);
      expect(apiKeys.authenticate(key.secret)?.keyId).toBe(key.keyId);
      // No operation revokes keys yet; a write of the store stands for one.
      db.transaction(() => db.run("DELETE FROM api_keys WHERE id = ?", [key.keyId]));
      expect(apiKeys.authenticate(key.secret)).toBeUndefined();
    } finally {
      db.close();
    }
  });

  it("keep a statement usable after it failed on a constraint", () => {
    const db = scratchDb();
    try {
      expect(() => db.run("INSERT INTO t (id, v) VALUES (2, 'one')")).toThrow(/UNIQUE/);
      expect(db.run("INSERT INTO t (id, v) VALUES (2, 'two')")).toBe(1);
      expect(db.all<{ v: string }>("SELECT v FROM t ORDER BY id").map((row) => row.v)).toEqual(["one", "two"]);
    } finally {
      db.close();
    }
  });
});

describe("RememberedReads", () => {
  const SQL = "SELECT v FROM t WHERE id = ?";
  /** A read that counts how often it ran and returns a fresh row each time. */
  function counted(): { read: () => { v: number }; runs: () => number } {
    let runs = 0;
    return { read: () => ({ v: ++runs }), runs: () => runs };
  }

  it("runs a SELECT once until forget(), then once again", () => {
    const reads = new RememberedReads();
    const { read, runs } = counted();
    expect(reads.row(SQL, [1], read)).toEqual({ v: 1 });
    expect(reads.row(SQL, [1], read)).toEqual({ v: 1 });
    expect(runs()).toBe(1);
    reads.forget();
    expect(reads.row(SQL, [1], read)).toEqual({ v: 2 });
    expect(reads.row(SQL, [1], read)).toEqual({ v: 2 });
    expect(runs()).toBe(2);
  });

  it("keeps apart what differs: the parameters (text split otherwise, a number and its text, null), the statement, and row, rows and JSON rows", () => {
    const reads = new RememberedReads();
    const { read, runs } = counted();
    const paramLists: SqlParams[] = [["a", "b"], ["ab", ""], ["as:b"], ["as1:b"], ["a", "b", null], [1], ["1"], [null], [], { ":id": 1 }, { ":id": "1" }];
    for (const params of paramLists) reads.row(SQL, params, read);
    reads.row("SELECT v FROM t WHERE id = ? ", [1], read);
    expect(runs()).toBe(paramLists.length + 1);
    const rows = reads.rows(SQL, [1], () => [read()]);
    const json = reads.jsonRows(SQL, [1], () => ({ rows: JSON.stringify([read()]) }));
    expect(runs()).toBe(paramLists.length + 3);
    expect(reads.rows(SQL, [1], () => [read()])).toBe(rows);
    expect(reads.jsonRows(SQL, [1], () => ({ rows: "[]" }))).toBe(json);
    for (const params of paramLists) reads.row(SQL, params, read);
    expect(runs()).toBe(paramLists.length + 3);
  });

  it("remembers a SELECT written in any case or indented, never a statement that may write, nor BigInt or byte parameters", () => {
    const reads = new RememberedReads();
    const { read, runs } = counted();
    reads.row("  select v from t", [], read);
    reads.row("  select v from t", [], read);
    expect(runs()).toBe(1);
    for (const sql of ["UPDATE t SET v = v + 1 RETURNING v", "WITH x AS (SELECT 1) SELECT * FROM x"]) {
      reads.row(sql, [], read);
      reads.row(sql, [], read);
    }
    expect(runs()).toBe(5);
    for (const params of [[1n], [new Uint8Array([1])], { ":id": 1n }]) {
      reads.row(SQL, params, read);
      reads.row(SQL, params, read);
    }
    expect(runs()).toBe(11);
  });

  it("freezes what it hands out: the row, the list and each of its rows, parsed JSON rows", () => {
    const reads = new RememberedReads();
    expect(Object.isFrozen(reads.row(SQL, [1], () => ({ v: 1 })))).toBe(true);
    const rows = reads.rows(SQL, [2], () => [{ v: 1 }, { v: 2 }]);
    expect(Object.isFrozen(rows)).toBe(true);
    expect(rows.every((row) => Object.isFrozen(row))).toBe(true);
    const json = reads.jsonRows<{ v: number }>(SQL, [3], () => ({ rows: '[{"v":1}]' }));
    expect(json).toEqual([{ v: 1 }]);
    expect(Object.isFrozen(json) && Object.isFrozen(json[0])).toBe(true);
    expect(reads.row(SQL, [4], () => undefined)).toBeUndefined();
  });

  it("reads no row, or a column that is not text, as no JSON rows", () => {
    const reads = new RememberedReads();
    expect(reads.jsonRows(SQL, [1], () => undefined)).toEqual([]);
    expect(reads.jsonRows(SQL, [2], () => ({ rows: null }))).toEqual([]);
  });

  it("past 1000 results lets the oldest go and keeps the newest", () => {
    const reads = new RememberedReads();
    const { read, runs } = counted();
    for (let id = 0; id <= 1000; id++) reads.row(SQL, [id], read);
    expect(runs()).toBe(1001);
    reads.row(SQL, [1000], read);
    reads.row(SQL, [1], read);
    expect(runs()).toBe(1001);
    reads.row(SQL, [0], read);
    expect(runs()).toBe(1002);
  });
});

describe("remembered reads through the API", () => {
  let t: TestServer;
  beforeAll(async () => {
    t = await startTestServer();
  });
  afterAll(async () => {
    expect(t.mismatches).toEqual([]);
    await t.close();
  });

  it("a renamed or archived project shows at once in the list and the project header", async () => {
    const client = t.client();
    const project = await client.projects.create({ name: "before" });
    expect((await client.projects.list()).map((each) => each.name)).toContain("before");
    expect(await client.browsers.list({}, { projectId: project.id })).toEqual([]);
    await client.projects.update(project.id, { name: "after" });
    const names = (await client.projects.list()).map((each) => each.name);
    expect(names).toContain("after");
    expect(names).not.toContain("before");
    await client.projects.update(project.id, { status: "archived" });
    expect((await client.projects.list()).find((each) => each.id === project.id)?.status).toBe("archived");
    await expect(client.browsers.list({}, { projectId: project.id })).rejects.toMatchObject({ status: 404, code: "project_not_found" });
  });
});
