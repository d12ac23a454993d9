import { describe, expect, it } from "vitest";
import { StatementCache } from "../src/storage/statement-cache.js";

/** A prepared statement that records whether it was freed. */
class FakeStatement {
  finalized = false;
  finalizeError: Error | undefined;
  constructor(readonly sql: string) {}
  finalize(): void {
    this.finalized = true;
    if (this.finalizeError !== undefined) throw this.finalizeError;
  }
}

function cache(): { statements: StatementCache<FakeStatement>; prepared: FakeStatement[] } {
  const prepared: FakeStatement[] = [];
  const statements = new StatementCache((sql) => {
    const statement = new FakeStatement(sql);
    prepared.push(statement);
    return statement;
  });
  return { statements, prepared };
}

const same = (statement: FakeStatement) => statement;

describe("StatementCache", () => {
  it("prepares a text once and hands the same statement to every later use", () => {
    const { statements, prepared } = cache();
    const first = statements.using("SELECT 1", same);
    expect(statements.using("SELECT 1", same)).toBe(first);
    expect(statements.using("SELECT 2", same)).not.toBe(first);
    expect(prepared.map((statement) => statement.sql)).toEqual(["SELECT 1", "SELECT 2"]);
  });

  it("drops and finalizes a statement whose use failed, rethrows that error, and prepares the text anew", () => {
    const { statements } = cache();
    const failed = statements.using("INSERT", same);
    const constraint = new Error("UNIQUE constraint failed: t.v");
    failed.finalizeError = new Error("finalize repeats the step's error");
    expect(() =>
      statements.using("INSERT", () => {
        throw constraint;
      }),
    ).toThrow(constraint);
    expect(failed.finalized).toBe(true);
    const again = statements.using("INSERT", same);
    expect(again).not.toBe(failed);
    expect(again.finalized).toBe(false);
  });

  it("runs a use again on a fresh statement while the database is locked", () => {
    const { statements, prepared } = cache();
    let attempts = 0;
    const result = statements.using("UPDATE", (statement) => {
      attempts++;
      if (attempts < 3) throw new Error("database is locked");
      return statement;
    });
    expect(attempts).toBe(3);
    expect(prepared).toHaveLength(3);
    expect(prepared.slice(0, 2).every((statement) => statement.finalized)).toBe(true);
    expect(result).toBe(prepared[2]);
  });

  it("past 256 texts finalizes the first prepared, which is prepared again on its next use", () => {
    const { statements, prepared } = cache();
    for (let i = 0; i < 256; i++) statements.using(`SELECT ${i}`, same);
    expect(prepared.some((statement) => statement.finalized)).toBe(false);
    statements.using("SELECT 256", same);
    expect(prepared.filter((statement) => statement.finalized).map((statement) => statement.sql)).toEqual(["SELECT 0"]);
    expect(statements.using("SELECT 255", same)).toBe(prepared[255]);
    expect(statements.using("SELECT 0", same)).not.toBe(prepared[0]);
  });

  it("close() finalizes every statement; a later use prepares anew", () => {
    const { statements, prepared } = cache();
    statements.using("SELECT 1", same);
    statements.using("SELECT 2", same);
    statements.close();
    expect(prepared.every((statement) => statement.finalized)).toBe(true);
    expect(statements.using("SELECT 1", same)).not.toBe(prepared[0]);
  });
});
