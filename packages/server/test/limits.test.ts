import { afterEach, describe, expect, it } from "vitest";
import { assertRoomForBrowser, available, effectiveProjectCap } from "../src/limits/concurrency.js";
import { writeFixtures } from "./support/fixtures.js";
import { startTestServer, tempDataDir, useTestServer } from "./support/test-server.js";

describe("limit resolution (pure)", () => {
  it("resolves override, then organization default, then none", () => {
    expect(effectiveProjectCap(3, 5)).toBe(3);
    expect(effectiveProjectCap(null, 5)).toBe(5);
    expect(effectiveProjectCap(null, null)).toBeNull();
  });

  it("floors availability at zero", () => {
    expect(available(10, 3)).toBe(7);
    expect(available(2, 5)).toBe(0);
  });

  it("refuses at the project cap, and at the organization limit even under a larger project cap", () => {
    expect(() => assertRoomForBrowser({ planLimit: 10, projectCap: 2, orgUsed: 2, projectUsed: 2 })).toThrow(/project's cap of 2/);
    expect(() => assertRoomForBrowser({ planLimit: 3, projectCap: 50, orgUsed: 3, projectUsed: 1 })).toThrow(/organization's limit of 3/);
    expect(() => assertRoomForBrowser({ planLimit: 3, projectCap: null, orgUsed: 2, projectUsed: 2 })).not.toThrow();
  });
});

describe("limits over HTTP", () => {
  // Pool reservations fill slots without browsers: 2 in "pooled", 1 in "Default".
  const t = useTestServer(() => {
    const dataDir = tempDataDir();
    const fixtures = writeFixtures(dataDir, {
      pool_reservations: [
        { project: "pooled", name: "warm", size: 2 },
        { project: "Default", name: "small", size: 1 },
      ],
    });
    return { dataDir, fixtures, planLimit: 4 };
  });
  afterEach(async () => {
    // Each case starts from no caps and no browsers.
    const client = t.client();
    for (const browser of await client.browsers.list()) await client.browsers.delete(browser.id);
    await client.limits.update({ default_project_max_concurrent_sessions: 0 });
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 0 });
  });

  it("reports the plan limit, usage from pool reservations and browsers, and availability", async () => {
    expect(await t.client().limits.get()).toEqual({
      max_concurrent_sessions: 4,
      default_project_max_concurrent_sessions: null,
      concurrent_sessions_used: 3,
      concurrent_sessions_available: 1,
    });
  });

  it("sets and clears (0) the default per-project cap", async () => {
    const client = t.client();
    expect((await client.limits.update({ default_project_max_concurrent_sessions: 2 })).default_project_max_concurrent_sessions).toBe(2);
    expect((await client.limits.get()).default_project_max_concurrent_sessions).toBe(2);
    expect((await client.limits.update({ default_project_max_concurrent_sessions: 0 })).default_project_max_concurrent_sessions).toBeNull();
  });

  it("sets and clears (0) a project's override; max_pooled_sessions is always null", async () => {
    const client = t.client();
    expect(await client.projects.updateLimits("pooled", { max_concurrent_sessions: 7 })).toEqual({ max_concurrent_sessions: 7, max_pooled_sessions: null });
    expect(await client.projects.getLimits("pooled")).toEqual({ max_concurrent_sessions: 7, max_pooled_sessions: null });
    expect(await client.projects.updateLimits("pooled", { max_concurrent_sessions: 0 })).toEqual({ max_concurrent_sessions: null, max_pooled_sessions: null });
  });

  it("refuses max_pooled_sessions with 400, saying it is deprecated", async () => {
    for (const request of [
      { method: "PATCH" as const, url: "/org/limits", payload: { default_project_max_concurrent_sessions: 1, max_pooled_sessions: 5 } },
      { method: "PATCH" as const, url: "/org/projects/Default/limits", payload: { max_concurrent_sessions: 1, max_pooled_sessions: 5 } },
    ]) {
      const response = await t.server.app.inject({ ...request, headers: { authorization: `Bearer ${t.orgKey}` } });
      expect(response.statusCode).toBe(400);
      expect(response.json()).toMatchObject({ code: "bad_request", details: [{ message: expect.stringMatching(/^\/max_pooled_sessions is deprecated/) }] });
    }
    expect((await t.client().projects.getLimits("Default")).max_concurrent_sessions).toBeNull();
  });

  it("the project override wins over the organization default", async () => {
    const client = t.client();
    // Default has 1 reserved slot; a default cap of 1 leaves no room.
    await client.limits.update({ default_project_max_concurrent_sessions: 1 });
    await expect(client.browsers.create()).rejects.toMatchObject({
      status: 429,
      code: "concurrency_limit_exceeded",
      message: expect.stringContaining("project's cap of 1"),
    });
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 2 });
    const browser = await client.browsers.create();
    expect(browser.status).toBe("running");
    await expect(client.browsers.create()).rejects.toMatchObject({ status: 429, message: expect.stringContaining("project's cap of 2") });
  });

  it("0 clears the override, so the organization default applies again", async () => {
    const client = t.client();
    await client.limits.update({ default_project_max_concurrent_sessions: 1 });
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 3 });
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 0 });
    await expect(client.browsers.create()).rejects.toMatchObject({ status: 429, message: expect.stringContaining("project's cap of 1") });
  });

  it("with no cap at all only the organization limit applies; a cap above it never lets a project pass it", async () => {
    const client = t.client();
    // 3 of 4 used by pools: one browser fits, the next hits the organization limit.
    const browser = await client.browsers.create();
    expect((await client.limits.get()).concurrent_sessions_available).toBe(0);
    await expect(client.browsers.create()).rejects.toMatchObject({ status: 429, message: expect.stringContaining("organization's limit of 4") });
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 50 });
    await expect(client.browsers.create()).rejects.toMatchObject({ status: 429, message: expect.stringContaining("organization's limit of 4") });
    // Deleting frees the slot.
    await client.browsers.delete(browser.id);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(3);
  });
});

describe("availability floored at zero", () => {
  it("reports 0 available when pool reservations exceed the plan limit", async () => {
    const dataDir = tempDataDir();
    const t = await startTestServer({
      dataDir,
      planLimit: 2,
      fixtures: writeFixtures(dataDir, { pool_reservations: [{ project: "Default", name: "big", size: 5 }] }),
    });
    try {
      expect(await t.client().limits.get()).toMatchObject({ concurrent_sessions_used: 5, concurrent_sessions_available: 0 });
      expect(t.mismatches).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
