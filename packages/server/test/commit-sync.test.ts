import { describe, expect, it } from "vitest";
import { CommitSync } from "../src/storage/commit-sync.js";
import { StorageError } from "../src/storage/storage-error.js";

/** A sync that waits until the test lets it finish (or fail), and counts its calls. */
class HeldSync {
  calls = 0;
  blockingCalls = 0;
  blockingError: Error | undefined;
  readonly #pending: { resolve: () => void; reject: (error: Error) => void }[] = [];
  readonly sync = (): Promise<void> => {
    this.calls++;
    return new Promise((resolve, reject) => this.#pending.push({ resolve, reject }));
  };
  readonly syncNow = (): void => {
    this.blockingCalls++;
    if (this.blockingError !== undefined) throw this.blockingError;
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

function commitSync(): { commits: CommitSync; held: HeldSync } {
  const held = new HeldSync();
  return { commits: new CommitSync({ sync: held.sync, syncNow: held.syncNow }), held };
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

describe("CommitSync", () => {
  it("has nothing to wait for and syncs nothing before the first commit", async () => {
    const { commits, held } = commitSync();
    expect(commits.durable()).toBeUndefined();
    commits.flush();
    await turn();
    expect(held.calls).toBe(0);
    expect(held.blockingCalls).toBe(0);
  });

  it("syncs the commits of one turn once, after the turn; durable() waits for that sync, then is undefined", async () => {
    const { commits, held } = commitSync();
    commits.committed();
    commits.committed();
    commits.committed();
    const waiting = commits.durable()!;
    expect(waiting).toBeInstanceOf(Promise);
    expect(held.calls).toBe(0);
    await turn();
    expect(held.calls).toBe(1);
    expect(await settled(waiting)).toBe(false);
    held.finish();
    expect(await settled(waiting)).toBe(true);
    expect(commits.durable()).toBeUndefined();
    await turn();
    expect(held.calls).toBe(1);
  });

  it("a commit made while a sync runs waits for the next sync, which starts when the running one ends", async () => {
    const { commits, held } = commitSync();
    commits.committed();
    const first = commits.durable()!;
    await turn();
    commits.committed();
    const second = commits.durable()!;
    await turn();
    // One sync at a time: the second commit is not synced alongside the first.
    expect(held.calls).toBe(1);
    held.finish();
    expect(await settled(first)).toBe(true);
    expect(await settled(second)).toBe(false);
    expect(held.calls).toBe(2);
    expect(held.running).toBe(1);
    held.finish();
    expect(await settled(second)).toBe(true);
    expect(commits.durable()).toBeUndefined();
  });

  it("a refused sync rejects its waiters once with storage_sync_failed; later commits are synced again", async () => {
    const { commits, held } = commitSync();
    commits.committed();
    const waiters = [commits.durable()!, commits.durable()!];
    await turn();
    const eio = Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
    held.fail(eio);
    for (const waiting of waiters) {
      const error = await waiting.then(
        () => undefined,
        (reason: unknown) => reason,
      );
      expect(error).toBeInstanceOf(StorageError);
      expect(error).toMatchObject({ code: "storage_sync_failed", cause: eio });
      expect((error as StorageError).message).toContain("EIO");
    }
    expect(commits.durable()).toBeUndefined();
    await turn();
    expect(held.calls).toBe(1);
    commits.committed();
    const next = commits.durable()!;
    await turn();
    expect(held.calls).toBe(2);
    held.finish();
    await expect(next).resolves.toBeUndefined();
  });

  it("flush() syncs at once, blocking, and answers the waiters", async () => {
    const { commits, held } = commitSync();
    commits.committed();
    const waiting = commits.durable()!;
    commits.flush();
    expect(held.blockingCalls).toBe(1);
    expect(await settled(waiting)).toBe(true);
    expect(commits.durable()).toBeUndefined();
    commits.flush();
    expect(held.blockingCalls).toBe(1);
  });

  it("a refused flush() throws storage_sync_failed and leaves the commits waiting for a sync", async () => {
    const { commits, held } = commitSync();
    commits.committed();
    held.blockingError = new Error("EIO: i/o error, fsync");
    expect(() => commits.flush()).toThrow(expect.objectContaining({ code: "storage_sync_failed", cause: held.blockingError }));
    const waiting = commits.durable()!;
    expect(waiting).toBeInstanceOf(Promise);
    await turn();
    held.finish();
    await expect(waiting).resolves.toBeUndefined();
  });

  it("closing answers every waiter and runs no sync any more, not even a scheduled one", async () => {
    const { commits, held } = commitSync();
    commits.committed();
    const waiting = commits.durable()!;
    commits.closed();
    await expect(waiting).resolves.toBeUndefined();
    expect(commits.durable()).toBeUndefined();
    await turn();
    expect(held.calls).toBe(0);
  });

  it("a sync that fails after closing is not reported: closing synced everything", async () => {
    const { commits, held } = commitSync();
    commits.committed();
    await turn();
    commits.committed();
    const waiting = commits.durable()!;
    commits.closed();
    held.fail(new Error("ENOENT: the log is gone"));
    await expect(waiting).resolves.toBeUndefined();
    await turn();
    expect(held.calls).toBe(1);
    expect(commits.durable()).toBeUndefined();
  });
});
