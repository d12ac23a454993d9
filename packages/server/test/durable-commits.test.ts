import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Fastify from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { installDurableResponses } from "../src/http/durable-responses.js";
import { installErrorHandling } from "../src/http/error-handler.js";
import { SqliteDatabase, StorageError } from "../src/storage/database.js";

const dirs: string[] = [];
const open: SqliteDatabase[] = [];
afterEach(() => {
  for (const db of open.splice(0)) db.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A sync of the log that waits until the test lets it finish (or fail), and counts its calls. */
class HeldSync {
  calls = 0;
  readonly #pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  readonly sync = (): Promise<void> => {
    this.calls++;
    return new Promise((resolve, reject) => this.#pending.push({ resolve, reject }));
  };
  get running(): number {
    return this.#pending.length;
  }
  finish(): void {
    this.#pending.shift()?.resolve();
  }
  fail(error: Error): void {
    this.#pending.shift()?.reject(error);
  }
}

function database(syncLog?: () => Promise<void>): { db: SqliteDatabase; file: string } {
  const dir = mkdtempSync(join(tmpdir(), "browser-service-durable-"));
  dirs.push(dir);
  const file = join(dir, "db.sqlite");
  const db = SqliteDatabase.open(file, syncLog === undefined ? {} : { syncLog });
  open.push(db);
  db.exec("CREATE TABLE t (v TEXT)");
  return { db, file };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
/** Whether `promise` settled by now (without waiting for it). */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(
    () => (done = true),
    () => (done = true),
  );
  await turn();
  return done;
}

describe("commits synced off the event loop", () => {
  it("syncs the write-ahead log once for the commits of one turn; durable() waits for it, then is undefined", async () => {
    const held = new HeldSync();
    const { db } = database(held.sync);
    await turn();
    held.finish(); // the table's creation
    await turn();
    expect(db.durable()).toBeUndefined();

    db.transaction(() => db.run("INSERT INTO t VALUES ('a')"));
    db.run("INSERT INTO t VALUES ('b')");
    const both = db.durable();
    expect(both).toBeInstanceOf(Promise);
    await turn();
    expect(held.calls).toBe(2);
    expect(held.running).toBe(1);
    expect(await settled(both!)).toBe(false);

    // A commit made while that sync runs is not covered by it: it waits for the next one.
    db.run("INSERT INTO t VALUES ('c')");
    const third = db.durable()!;
    held.finish();
    expect(await settled(both!)).toBe(true);
    expect(await settled(third)).toBe(false);
    expect(held.running).toBe(1);
    held.finish();
    expect(await settled(third)).toBe(true);
    expect(db.durable()).toBeUndefined();
    expect(held.calls).toBe(3);
  });

  it("a rolled-back transaction and plain reads need no sync", async () => {
    const held = new HeldSync();
    const { db } = database(held.sync);
    await turn();
    held.finish();
    await turn();
    expect(() =>
      db.transaction(() => {
        db.run("INSERT INTO t VALUES ('x')");
        throw new Error("no");
      }),
    ).toThrow("no");
    db.all("SELECT * FROM t");
    expect(db.durable()).toBeUndefined();
    await turn();
    expect(held.running).toBe(0);
  });

  it("a refused sync rejects its waiters with storage_sync_failed once; later commits are synced again", async () => {
    const held = new HeldSync();
    const { db } = database(held.sync);
    await turn();
    held.finish();
    await turn();
    db.run("INSERT INTO t VALUES ('a')");
    const waiting = db.durable()!;
    await turn();
    held.fail(Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" }));
    const error = await waiting.then(
      () => undefined,
      (reason: unknown) => reason,
    );
    expect(error).toBeInstanceOf(StorageError);
    expect((error as StorageError).code).toBe("storage_sync_failed");
    expect((error as StorageError).message).toContain("EIO");
    expect(db.durable()).toBeUndefined();
    db.run("INSERT INTO t VALUES ('b')");
    const next = db.durable()!;
    await turn();
    held.finish();
    await expect(next).resolves.toBeUndefined();
  });

  it("syncs the real log with fsync: durable() resolves and flush() syncs at once", async () => {
    const { db, file } = database();
    db.run("INSERT INTO t VALUES ('a')");
    await db.durable();
    expect(db.durable()).toBeUndefined();
    db.run("INSERT INTO t VALUES ('b')");
    db.flush();
    expect(db.durable()).toBeUndefined();
    // Without its log the commits cannot be vouched for: flush says so.
    rmSync(`${file}-wal`);
    db.run("INSERT INTO t VALUES ('c')");
    expect(() => db.flush()).toThrow(StorageError);
  });

  it("closing settles every waiter: the last checkpoint synced the log into the database", async () => {
    const held = new HeldSync();
    const { db } = database(held.sync);
    db.run("INSERT INTO t VALUES ('a')");
    const waiting = db.durable()!;
    open.splice(open.indexOf(db), 1);
    db.close();
    await expect(waiting).resolves.toBeUndefined();
  });
});

describe("responses wait for their commits", () => {
  async function app(held: HeldSync) {
    const { db } = database(held.sync);
    await turn();
    held.finish();
    await turn();
    const server = Fastify();
    installDurableResponses(server, db);
    installErrorHandling(server);
    server.post("/write", async () => {
      db.run("INSERT INTO t VALUES ('a')");
      return { written: true };
    });
    server.get("/read", async () => ({ rows: db.all("SELECT * FROM t").length }));
    await server.ready();
    return server;
  }

  it("a response after a write goes out only once the write is synced; a read with nothing to wait for at once", async () => {
    const held = new HeldSync();
    const server = await app(held);
    const read = await server.inject({ method: "GET", url: "/read" });
    expect(read.json()).toEqual({ rows: 0 });
    expect(held.running).toBe(0);

    const write = server.inject({ method: "POST", url: "/write" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held.running).toBe(1);
    expect(await settled(write)).toBe(false);
    // A read made meanwhile may show the write, so it waits for the same sync.
    const readMeanwhile = server.inject({ method: "GET", url: "/read" });
    expect(await settled(readMeanwhile)).toBe(false);
    held.finish();
    expect((await write).statusCode).toBe(200);
    expect((await readMeanwhile).json()).toEqual({ rows: 1 });
    await server.close();
  });

  it("a write whose sync fails is answered 500 with the Error body", async () => {
    const held = new HeldSync();
    const server = await app(held);
    const write = server.inject({ method: "POST", url: "/write" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    held.fail(new Error("EIO: i/o error, fsync"));
    const response = await write;
    expect(response.statusCode).toBe(500);
    expect(response.json()).toMatchObject({ code: "internal_error" });
    await server.close();
  });
});
