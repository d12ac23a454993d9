import { describe, expect, it } from "vitest";
import { managedAuth, writeFixtures } from "./support/fixtures.js";
import { startTestServer, tempDataDir, useTestServer } from "./support/test-server.js";
import { processExists, TrackingLauncher } from "./support/tracking-launcher.js";
import { goodExtensionZip } from "./support/zip-writer.js";

const t = useTestServer();

describe("projects", () => {
  it("starts with one active project named Default, which is the default project", async () => {
    const [only, ...rest] = await t.client().projects.list();
    expect(rest).toEqual([]);
    expect(only).toMatchObject({ id: t.defaultProjectId, name: "Default", status: "active" });
    expect(only?.id).toMatch(/^proj_[a-z2-7]{24}$/);
    expect(only?.created_at).toBe(only?.updated_at);
    expect(Number.isNaN(Date.parse(only?.created_at ?? ""))).toBe(false);
  });

  it("creates a project (201) and reads it back by id and by name; a name cannot take an id's form", async () => {
    const client = t.client();
    const created = await client.projects.create({ name: "staging" });
    expect(created).toMatchObject({ name: "staging", status: "active" });
    expect(await client.projects.get(created.id)).toEqual(created);
    expect(await client.projects.get("staging")).toEqual(created);
    // A name in the form of a project id could stand in for another project's id: refused.
    await expect(client.projects.create({ name: created.id })).rejects.toMatchObject({ status: 400, code: "bad_request", details: [{ code: "not" }] });
    await expect(client.projects.update(created.id, { name: t.defaultProjectId })).rejects.toMatchObject({ status: 400, code: "bad_request" });
    expect(await client.projects.get(created.id)).toEqual(created);
  });

  it("refuses a duplicate name with 409 name_conflict, on create and on rename", async () => {
    const client = t.client();
    await client.projects.create({ name: "dup-a" });
    const b = await client.projects.create({ name: "dup-b" });
    await expect(client.projects.create({ name: "dup-a" })).rejects.toMatchObject({ status: 409, code: "name_conflict" });
    await expect(client.projects.update(b.id, { name: "dup-a" })).rejects.toMatchObject({ status: 409, code: "name_conflict" });
  });

  it("renames, archives and activates, bumping updated_at only on a change", async () => {
    const client = t.client();
    const project = await client.projects.create({ name: "cycle" });
    const renamed = await client.projects.update(project.id, { name: "cycle-2" });
    expect(renamed.name).toBe("cycle-2");
    expect(renamed.updated_at >= project.updated_at).toBe(true);
    const archived = await client.projects.update("cycle-2", { status: "archived" });
    expect(archived.status).toBe("archived");
    expect((await client.projects.get(project.id)).status).toBe("archived");
    const unchanged = await client.projects.update(project.id, { status: "archived" });
    expect(unchanged.updated_at).toBe(archived.updated_at);
    const active = await client.projects.update(project.id, { status: "active" });
    expect(active.status).toBe("active");
    const both = await client.projects.update(project.id, { name: "cycle-3", status: "archived" });
    expect(both).toMatchObject({ name: "cycle-3", status: "archived" });
  });

  it("treats an archived project as inactive in the project header (404 project_not_found)", async () => {
    const client = t.client();
    const project = await client.projects.create({ name: "to-archive" });
    expect(await client.browsers.list({}, { projectId: project.id })).toEqual([]);
    await client.projects.update(project.id, { status: "archived" });
    await expect(client.browsers.list({}, { projectId: project.id })).rejects.toMatchObject({ status: 404, code: "project_not_found" });
    await client.projects.update(project.id, { status: "active" });
    expect(await client.browsers.list({}, { projectId: project.id })).toEqual([]);
  });

  it("soft-deletes an empty project: 204, gone from every read, its name free again", async () => {
    const client = t.client();
    const project = await client.projects.create({ name: "doomed" });
    await expect(client.projects.delete(project.id)).resolves.toBeUndefined();
    await expect(client.projects.get(project.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(client.projects.get("doomed")).rejects.toMatchObject({ status: 404, code: "not_found" });
    expect((await client.projects.list({ name: "doomed" })).length).toBe(0);
    await expect(client.browsers.list({}, { projectId: project.id })).rejects.toMatchObject({ status: 404, code: "project_not_found" });
    await expect(client.projects.delete(project.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    const again = await client.projects.create({ name: "doomed" });
    expect(again.id).not.toBe(project.id);
  });

  it("deletes an archived project too", async () => {
    const client = t.client();
    const project = await client.projects.create({ name: "archived-then-deleted" });
    await client.projects.update(project.id, { status: "archived" });
    await client.projects.delete(project.id);
    await expect(client.projects.get(project.id)).rejects.toMatchObject({ status: 404 });
  });

  it("refuses to delete a project with extensions: 409 project_not_empty", async () => {
    const client = t.client();
    const project = await client.projects.create({ name: "has-extension" });
    await client.extensions.upload({ file: goodExtensionZip() }, { projectId: project.id });
    const error = await client.projects.delete(project.id).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 409, code: "project_not_empty" });
    expect((error as Error).message).toContain("1 extension");
    expect((await client.projects.get(project.id)).status).toBe("active");
  });

  it("404 not_found for an unknown project id or name", async () => {
    const client = t.client();
    await expect(client.projects.get("no-such-project")).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(client.projects.update("no-such-project", { name: "x" })).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(client.projects.getLimits("no-such-project")).rejects.toMatchObject({ status: 404, code: "not_found" });
  });

  it("validates names: 400 bad_request with one detail per problem", async () => {
    const client = t.client();
    const error = await client.projects.create({ name: " padded " }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 400, code: "bad_request" });
    expect((error as { details: { code: string; message: string }[] }).details).toEqual([{ code: "pattern", message: expect.stringContaining("/name") }]);
    const empty = await t.server.app.inject({
      method: "PATCH",
      url: `/org/projects/${t.defaultProjectId}`,
      headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
      payload: {},
    });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().details[0].code).toBe("minProperties");
  });
});

describe("the last active project", () => {
  it("cannot be archived or deleted (409 last_active_project), which comes before default_project", async () => {
    const fresh = await startTestServer();
    try {
      const client = fresh.client();
      // Default is both the last active project and the default one: the seed's code answers.
      await expect(client.projects.update(fresh.defaultProjectId, { status: "archived" })).rejects.toMatchObject({ status: 409, code: "last_active_project" });
      await expect(client.projects.delete(fresh.defaultProjectId)).rejects.toMatchObject({ status: 409, code: "last_active_project" });
      const other = await client.projects.create({ name: "other" });
      await client.projects.update(other.id, { status: "archived" });
      // With "other" archived, Default is the last active one again.
      await expect(client.projects.delete("Default")).rejects.toMatchObject({ status: 409, code: "last_active_project" });
      expect(fresh.mismatches).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});

describe("the default project", () => {
  it("can be neither archived nor deleted (409 default_project), only renamed; requests without the header keep working", async () => {
    const fresh = await startTestServer();
    try {
      const client = fresh.client();
      await client.projects.create({ name: "other" });
      const archive = await client.projects.update("Default", { status: "archived" }).catch((caught: unknown) => caught);
      expect(archive).toMatchObject({ status: 409, code: "default_project" });
      expect((archive as Error).message).toContain("X-Service-Project-Id");
      await expect(client.projects.update("Default", { name: "Renamed", status: "archived" })).rejects.toMatchObject({ status: 409, code: "default_project" });
      await expect(client.projects.delete("Default")).rejects.toMatchObject({ status: 409, code: "default_project" });
      const renamed = await client.projects.update(fresh.defaultProjectId, { name: "Main" });
      expect(renamed).toMatchObject({ id: fresh.defaultProjectId, name: "Main", status: "active" });
      expect(await client.browsers.list()).toEqual([]);
      expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
      expect(fresh.mismatches).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});

describe("deleting a project with resources other than browsers and extensions", () => {
  it("is 409 project_not_empty while auth connections or pool reservations remain, whose usage keeps counting", async () => {
    const dataDir = tempDataDir();
    const fixtures = writeFixtures(dataDir, {
      auth_connections: [{ project: "logins", ...managedAuth("mac_1") }],
      pool_reservations: [
        { project: "pools", name: "warm", size: 2 },
        { project: "both", name: "warm", size: 1 },
      ],
    });
    const fresh = await startTestServer({ dataDir, fixtures });
    try {
      const client = fresh.client();
      // "both": a pool reservation from the fixtures and an extension uploaded here; the message names each.
      await client.extensions.upload({ file: goodExtensionZip() }, { projectId: (await client.projects.get("both")).id });
      const refusals = [
        ["logins", "1 auth connection;"],
        ["pools", "1 browser pool reservation;"],
        ["both", "1 extension and 1 browser pool reservation;"],
      ] as const;
      for (const [name, remaining] of refusals) {
        const error = await client.projects.delete(name).catch((caught: unknown) => caught);
        expect(error, name).toMatchObject({ status: 409, code: "project_not_empty" });
        expect((error as Error).message).toBe(`The project still has ${remaining} remove them first.`);
      }
      // An archived project holds them too.
      await client.projects.update("pools", { status: "archived" });
      await expect(client.projects.delete("pools")).rejects.toMatchObject({ status: 409, code: "project_not_empty" });
      expect((await client.limits.get()).concurrent_sessions_used).toBe(3);
      expect(await client.authConnections.get("mac_1", { projectId: (await client.projects.get("logins")).id })).toMatchObject({ id: "mac_1" });
      expect(fresh.mismatches).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});

describe("a project whose browsers run (real Chromium)", () => {
  let launcher: TrackingLauncher;
  const fresh = useTestServer(() => {
    launcher = new TrackingLauncher();
    return { launcher };
  });

  it("cannot be archived (409 browsers_running): the browser stays reachable, stoppable and counted; once stopped, archiving works", async () => {
    const client = fresh.client();
    const project = await client.projects.create({ name: "busy" });
    const scope = { projectId: project.id };
    const browser = await client.browsers.create({ name: "worker" }, scope);
    const pid = launcher.latest().pid as number;

    const archive = await client.projects.update(project.id, { status: "archived" }).catch((caught: unknown) => caught);
    expect(archive).toMatchObject({ status: 409, code: "browsers_running" });
    expect((archive as Error).message).toBe("The project still has 1 running browser; delete it before archiving the project.");
    // Nothing changed: still active, a rename in the same request was not applied either.
    await expect(client.projects.update(project.id, { name: "busy-2", status: "archived" })).rejects.toMatchObject({ code: "browsers_running" });
    expect(await client.projects.get(project.id)).toMatchObject({ name: "busy", status: "active" });
    expect(await client.browsers.get("worker", scope)).toMatchObject({ id: browser.id, status: "running" });
    expect(processExists(pid)).toBe(true);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(1);

    await expect(client.projects.delete(project.id)).rejects.toMatchObject({ status: 409, code: "project_not_empty" });

    await client.browsers.delete(browser.id, scope);
    expect(processExists(pid)).toBe(false);
    expect(await client.projects.update(project.id, { status: "archived" })).toMatchObject({ status: "archived" });
    expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
    await client.projects.delete(project.id);
  });

  it("a crashed browser blocks neither archiving nor deleting: it holds no process and no slot", async () => {
    const client = fresh.client();
    const project = await client.projects.create({ name: "crashed" });
    const scope = { projectId: project.id };
    await client.browsers.create({ name: "fragile" }, scope);
    const launched = launcher.latest();
    const exited = new Promise((resolve) => launched.onExit(resolve));
    process.kill(launched.pid as number, "SIGKILL");
    await exited;
    expect(await client.browsers.get("fragile", scope)).toMatchObject({ status: "crashed" });

    await client.projects.update(project.id, { status: "archived" });
    // Its record is kept while the project is archived, and shows again once it is active.
    await client.projects.update(project.id, { status: "active" });
    expect(await client.browsers.get("fragile", scope)).toMatchObject({ status: "crashed" });
    await client.projects.delete(project.id);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
  });
});

describe("paging and filters", () => {
  it("pages oldest first with X-Has-More and X-Next-Offset, and filters by name and query", async () => {
    const fresh = await startTestServer();
    try {
      const client = fresh.client();
      const names = Array.from({ length: 7 }, (_, i) => `Page-${i}`);
      for (const name of names) await client.projects.create({ name });
      const all = ["Default", ...names];

      const first = await client.GET("/org/projects", { params: { query: { limit: 3 } } });
      expect(first.data?.map((project) => project.name)).toEqual(all.slice(0, 3));
      expect(first.response.headers.get("x-has-more")).toBe("true");
      expect(first.response.headers.get("x-next-offset")).toBe("3");
      const last = await client.GET("/org/projects", { params: { query: { offset: 6, limit: 3 } } });
      expect(last.data?.map((project) => project.name)).toEqual(all.slice(6));
      expect(last.response.headers.get("x-has-more")).toBe("false");
      expect(last.response.headers.get("x-next-offset")).toBe("0");
      const beyond = await client.GET("/org/projects", { params: { query: { offset: 50 } } });
      expect(beyond.data).toEqual([]);
      expect(beyond.response.headers.get("x-has-more")).toBe("false");

      const walked: string[] = [];
      for await (const project of client.projects.listAll({ limit: 2 })) walked.push(project.name);
      expect(walked).toEqual(all);
      expect((await client.projects.list()).length).toBe(8);

      expect((await client.projects.list({ name: "Page-3" })).map((project) => project.name)).toEqual(["Page-3"]);
      expect(await client.projects.list({ name: "page-3" })).toEqual([]);
      expect((await client.projects.list({ query: "PAGE-" })).length).toBe(7);
      expect((await client.projects.list({ query: "ge-5" })).map((project) => project.name)).toEqual(["Page-5"]);
      expect((await client.projects.list({ query: "page", limit: 2, offset: 6 })).map((project) => project.name)).toEqual(["Page-6"]);

      await expect(client.projects.list({ limit: 101 })).rejects.toMatchObject({ status: 400, code: "bad_request" });
      await expect(client.projects.list({ limit: 0 })).rejects.toMatchObject({ status: 400 });
      await expect(client.projects.list({ offset: -1 })).rejects.toMatchObject({ status: 400 });
      expect(fresh.mismatches).toEqual([]);
    } finally {
      await fresh.close();
    }
  });
});

describe("projects disabled", () => {
  it("answers project administration with 404 projects_disabled and leaves the rest working", async () => {
    const disabled = await startTestServer({ projectsDisabled: true });
    try {
      const client = disabled.client();
      for (const call of [
        () => client.projects.list(),
        () => client.projects.create({ name: "x" }),
        () => client.projects.get("Default"),
        () => client.projects.update("Default", { name: "y" }),
        () => client.projects.delete("Default"),
        () => client.projects.getLimits("Default"),
        () => client.projects.updateLimits("Default", { max_concurrent_sessions: 2 }),
      ]) {
        await expect(call()).rejects.toMatchObject({ status: 404, code: "projects_disabled" });
      }
      expect((await client.limits.get()).max_concurrent_sessions).toBe(10);
      expect(await client.browsers.list()).toEqual([]);
      expect(disabled.mismatches).toEqual([]);
    } finally {
      await disabled.close();
    }
  });
});
