import { describe, expect, it } from "vitest";
import { joinSql, rawSql, type Sql, sql, sqlFor, sqlIn } from "../src/storage/sql-text.js";

describe("a statement written once for both databases", () => {
  it("binds every value as a parameter in each dialect's placeholders, never as text", () => {
    const hostile = "x' OR '1'='1";
    const statement = sql`SELECT id FROM projects WHERE org_id = ${"org_1"} AND name = ${hostile} AND archived = ${true}`;
    expect(statement.render("sqlite")).toEqual({
      text: "SELECT id FROM projects WHERE org_id = ? AND name = ? AND archived = ?",
      params: ["org_1", hostile, 1],
    });
    expect(statement.render("postgres")).toEqual({
      text: "SELECT id FROM projects WHERE org_id = $1 AND name = $2 AND archived = $3",
      params: ["org_1", hostile, true],
    });
  });

  it("numbers the parameters of nested statements and dialect forms in order", () => {
    const where = joinSql([sql`a = ${1}`, sqlFor({ sqlite: sql`instr(b, ${"q"}) > 0`, postgres: sql`strpos(b, ${"q"}) > 0` }), sql`c = ${3}`], " AND ");
    const statement = sql`SELECT ${rawSql("a, b")} FROM t WHERE ${where} LIMIT ${10}`;
    expect(statement.render("sqlite")).toEqual({ text: "SELECT a, b FROM t WHERE a = ? AND instr(b, ?) > 0 AND c = ? LIMIT ?", params: [1, "q", 3, 10] });
    expect(statement.render("postgres")).toEqual({
      text: "SELECT a, b FROM t WHERE a = $1 AND strpos(b, $2) > 0 AND c = $3 LIMIT $4",
      params: [1, "q", 3, 10],
    });
  });

  it("renders a call site's text again when it nests other fixed text than the last time", () => {
    const site = (columns: Sql, id: string) => sql`SELECT ${columns} FROM t WHERE id = ${id}`;
    expect(site(rawSql("a"), "1").render("postgres")).toEqual({ text: "SELECT a FROM t WHERE id = $1", params: ["1"] });
    expect(site(rawSql("a"), "2").render("postgres")).toEqual({ text: "SELECT a FROM t WHERE id = $1", params: ["2"] });
    expect(site(rawSql("b, c"), "3").render("postgres")).toEqual({ text: "SELECT b, c FROM t WHERE id = $1", params: ["3"] });
    const forms = sqlFor({ sqlite: rawSql("x"), postgres: rawSql("y") });
    expect(site(forms, "4").render("sqlite").text).toBe("SELECT x FROM t WHERE id = ?");
    expect(site(forms, "4").render("postgres").text).toBe("SELECT y FROM t WHERE id = $1");
  });

  it("renders a call site whose fixed text and values change slots as written, and a joined list as it was when joined", () => {
    const site = (a: Sql | number, b: Sql | number) => sql`X ${a} Y ${b}`;
    const fixed = rawSql("c");
    expect(site(fixed, 1).render("postgres")).toEqual({ text: "X c Y $1", params: [1] });
    expect(site(1, fixed).render("postgres")).toEqual({ text: "X $1 Y c", params: [1] });
    const parts = [sql`a = ${1}`];
    const joined = joinSql(parts, " AND ");
    parts.push(sql`b = ${2}`);
    expect(joined.render("sqlite")).toEqual({ text: "a = ?", params: [1] });
  });

  it("matches a list one parameter per value in SQLite and as one array in PostgreSQL", () => {
    const statement = sql`SELECT * FROM t WHERE ${sqlIn(rawSql("id"), ["a", "b'c"])} AND n = ${2}`;
    expect(statement.render("sqlite")).toEqual({ text: "SELECT * FROM t WHERE id IN (?, ?) AND n = ?", params: ["a", "b'c", 2] });
    expect(statement.render("postgres")).toEqual({ text: "SELECT * FROM t WHERE id = ANY($1::text[]) AND n = $2", params: [["a", "b'c"], 2] });
  });
});
