import { describe, expect, it } from "vitest";
import { retryWhileBusy } from "../src/storage/busy-retry.js";
import { StorageError } from "../src/storage/storage-error.js";

describe("retryWhileBusy", () => {
  it("returns the result of the first attempt that finds the database unlocked", () => {
    let attempts = 0;
    const result = retryWhileBusy(() => {
      attempts++;
      if (attempts === 1) throw new Error("database is locked");
      if (attempts === 2) throw new Error("SQLITE_BUSY: another process");
      return "done";
    });
    expect(result).toBe("done");
    expect(attempts).toBe(3);
  });

  it("throws any other error at once", () => {
    let attempts = 0;
    const constraint = new Error("UNIQUE constraint failed: t.v");
    expect(() =>
      retryWhileBusy(() => {
        attempts++;
        throw constraint;
      }),
    ).toThrow(constraint);
    expect(attempts).toBe(1);
  });

  it("gives up on a lock that outlasts every attempt with storage_busy", () => {
    let attempts = 0;
    const locked = new Error("database is locked");
    let error: unknown;
    try {
      retryWhileBusy(() => {
        attempts++;
        throw locked;
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(StorageError);
    expect(error).toMatchObject({ code: "storage_busy", cause: locked });
    expect(attempts).toBe(400);
  });
});
