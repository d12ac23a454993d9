import { join } from "node:path";
import sqlite3 from "node-sqlite3-wasm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_CAP } from "../src/routes/limit-routes.js";
import { loadSpec } from "./support/spec-error-codes.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

// Integers from clients: bounded by the spec, parsed strictly, never stored lossily, and
// read back as JSON numbers whatever SQLite holds.

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});

afterAll(async () => {
  expect(t.mismatches).toEqual([]);
  await t.close();
});

const auth = (): Record<string, string> => ({ authorization: `Bearer ${t.orgKey}` });
const get = (url: string) => t.server.app.inject({ method: "GET", url, headers: auth() });
const patch = (url: string, body: string) =>
  t.server.app.inject({ method: "PATCH", url, headers: { ...auth(), "content-type": "application/json" }, payload: body });

describe("offset: at most 1,000,000,000", () => {
  it.each(["/org/projects", "/browsers"])("GET %s with offset 2^63-1 is 400 maximum, not a database error", async (path) => {
    const response = await get(`${path}?offset=9223372036854775807`);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      code: "bad_request",
      message: "The request is invalid (1 problem).",
      details: [{ code: "maximum", message: "Query: /offset must be at most 1000000000." }],
    });
  });

  it.each(["/org/projects", "/browsers"])("GET %s at the largest offset is an empty last page", async (path) => {
    const response = await get(`${path}?offset=1000000000`);
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual([]);
    expect(response.headers["x-has-more"]).toBe("false");
    expect(response.headers["x-next-offset"]).toBe("0");
  });
});

describe("query integers are plain decimal", () => {
  it.each([
    ["limit", "0x10"],
    ["limit", "+5"],
    ["limit", "%205"],
    ["limit", "5%20"],
    ["limit", "05"],
    ["limit", "5.0"],
    ["limit", ""],
    ["offset", "1e3"],
    ["offset", "-0"],
    ["offset", "0b11"],
    // 401 digits: past any double, it read as Infinity, slipped past the maximum and reached SQLite as null (500).
    ["limit", `1${"0".repeat(400)}`],
  ])("refuses %s=%s with 400 and a detail", async (name, value) => {
    const response = await get(`/org/projects?${name}=${value}`);
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([{ code: "type", message: `Query: /${name} must be an integer.` }]);
  });

  it("accepts plain decimal values, and a negative one fails only its minimum", async () => {
    const page = await get("/org/projects?limit=5&offset=0");
    expect(page.statusCode).toBe(200);
    expect((await get("/browsers?limit=100&offset=10")).statusCode).toBe(200);
    expect((await get("/org/projects?offset=-3")).json().details).toEqual([{ code: "minimum", message: "Query: /offset must be at least 0." }]);
  });
});

describe("caps: at most 1,000,000, stored exactly", () => {
  it("the server's bound is the spec's maximum on every cap", () => {
    const schemas = (loadSpec() as unknown as { components: { schemas: Record<string, { properties: Record<string, { maximum?: number }> }> } }).components
      .schemas;
    expect(schemas.UpdateOrgLimitsRequest!.properties.default_project_max_concurrent_sessions!.maximum).toBe(MAX_CAP);
    expect(schemas.UpdateProjectLimitsRequest!.properties.max_concurrent_sessions!.maximum).toBe(MAX_CAP);
    expect(schemas.OrgLimits!.properties.default_project_max_concurrent_sessions!.maximum).toBe(MAX_CAP);
    expect(schemas.ProjectLimits!.properties.max_concurrent_sessions!.maximum).toBe(MAX_CAP);
  });

  it.each(["87739548417998464", "1e20", "1e29", "1000001"])("refuses %s as a cap with 400 maximum, storing nothing", async (value) => {
    const project = await patch(`/org/projects/${t.defaultProjectId}/limits`, `{"max_concurrent_sessions":${value}}`);
    expect(project.statusCode).toBe(400);
    expect(project.json().details).toEqual([{ code: "maximum", message: "/max_concurrent_sessions must be at most 1000000." }]);
    const org = await patch("/org/limits", `{"default_project_max_concurrent_sessions":${value}}`);
    expect(org.statusCode).toBe(400);
    expect(org.json().details).toEqual([{ code: "maximum", message: "/default_project_max_concurrent_sessions must be at most 1000000." }]);
    expect((await get(`/org/projects/${t.defaultProjectId}/limits`)).json()).toEqual({ max_concurrent_sessions: null, max_pooled_sessions: null });
    expect((await get("/org/limits")).json().default_project_max_concurrent_sessions).toBeNull();
  });

  it("stores the largest cap exactly and reads it back", async () => {
    const project = await patch(`/org/projects/${t.defaultProjectId}/limits`, '{"max_concurrent_sessions":1000000}');
    expect(project.json()).toEqual({ max_concurrent_sessions: 1_000_000, max_pooled_sessions: null });
    expect((await get(`/org/projects/${t.defaultProjectId}/limits`)).json()).toEqual({ max_concurrent_sessions: 1_000_000, max_pooled_sessions: null });
    expect((await patch("/org/limits", '{"default_project_max_concurrent_sessions":1000000}')).json().default_project_max_concurrent_sessions).toBe(1_000_000);
    expect((await get("/org/limits")).json().default_project_max_concurrent_sessions).toBe(1_000_000);
    await patch(`/org/projects/${t.defaultProjectId}/limits`, '{"max_concurrent_sessions":0}');
    await patch("/org/limits", '{"default_project_max_concurrent_sessions":0}');
  });
});

describe("caps stored before the bound", () => {
  it("read as the bound: no BigInt reaches JSON, and the limits stay readable", async () => {
    const dataDir = t.dataDir;
    const projectId = t.defaultProjectId;
    await t.close({ keepData: true });
    // What a server without the bound stored for 87739548417998464: SQLite hands it back as a BigInt.
    const db = new sqlite3.Database(join(dataDir, "browser-service.sqlite"));
    try {
      // As the server opens it: a write-ahead-log database without shared memory needs the exclusive lock first.
      db.exec("PRAGMA locking_mode=EXCLUSIVE");
      db.run("UPDATE projects SET max_concurrent_sessions = ? WHERE id = ?", [87739548417998464n, projectId]);
      db.run("UPDATE organizations SET default_project_max_concurrent_sessions = ?", [2n ** 62n]);
    } finally {
      db.close();
    }
    t = await startTestServer({ dataDir });
    expect((await get(`/org/projects/${projectId}/limits`)).json()).toEqual({ max_concurrent_sessions: MAX_CAP, max_pooled_sessions: null });
    const org = await get("/org/limits");
    expect(org.statusCode).toBe(200);
    expect(org.json().default_project_max_concurrent_sessions).toBe(MAX_CAP);
  });
});
