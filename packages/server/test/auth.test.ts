import { beforeAll, describe, expect, it } from "vitest";
import { managedAuth, writeFixtures } from "./support/fixtures.js";
import { multipartBody } from "./support/multipart.js";
import { tempDataDir, useTestServer } from "./support/test-server.js";
import { goodExtensionZip } from "./support/zip-writer.js";

type CredentialKind = "org-wide" | "project-scoped" | "missing" | "invalid";
type HeaderCase = "none" | "own" | "other" | "unknown" | "archived";
type Family = "read" | "write" | "admin";

const ids = { default: "", a: "", b: "", archived: "" };
const keys = { orgWide: "", scopedA: "", scopedArchived: "" };
let counter = 0;

const t = useTestServer(() => {
  const dataDir = tempDataDir();
  const fixtures = writeFixtures(dataDir, {
    auth_connections: [
      { project: "Default", ...managedAuth("conn-default") },
      { project: "alpha", ...managedAuth("conn-alpha") },
      { project: "beta", ...managedAuth("conn-beta") },
      { project: "old", ...managedAuth("conn-old") },
    ],
  });
  return { dataDir, fixtures };
});

beforeAll(async () => {
  const client = t.client();
  const projects = await client.projects.list();
  const id = (name: string) => projects.find((project) => project.name === name)?.id ?? "";
  Object.assign(ids, { default: id("Default"), a: id("alpha"), b: id("beta"), archived: id("old") });
  keys.orgWide = t.orgKey;
  keys.scopedA = (await t.server.issueApiKey(ids.a)).secret;
  keys.scopedArchived = (await t.server.issueApiKey(ids.archived)).secret;
  await client.projects.update(ids.archived, { status: "archived" });
});

function authorization(kind: CredentialKind): Record<string, string> {
  if (kind === "missing") return {};
  if (kind === "invalid") return { authorization: "Bearer bsk_thisIsNotAKeyThisIsNotAKey1234" };
  return { authorization: `Bearer ${kind === "org-wide" ? keys.orgWide : keys.scopedA}` };
}

function projectHeader(header: HeaderCase): Record<string, string> {
  const value = { none: undefined, own: ids.a, other: ids.b, unknown: "proj_doesnotexistdoesnotexist", archived: ids.archived }[header];
  return value === undefined ? {} : { "x-service-project-id": value };
}

/** The project a request should act on when it is allowed to. */
function actingProject(kind: CredentialKind, header: HeaderCase): "default" | "a" | "b" {
  if (header === "own") return "a";
  if (header === "other") return "b";
  return kind === "project-scoped" ? "a" : "default";
}

/** The seed's Authentication rules as a table: the status and code each combination gets. */
function expected(kind: CredentialKind, header: HeaderCase, family: Family): { status: number; code?: string } {
  if (kind === "missing" || kind === "invalid") return { status: 401, code: "unauthorized" };
  if (kind === "project-scoped" && header !== "none" && header !== "own") return { status: 403, code: "forbidden" };
  if (header === "unknown" || header === "archived") return { status: 404, code: "project_not_found" };
  if (kind === "project-scoped" && family === "admin") return { status: 403, code: "forbidden" };
  return { status: family === "read" ? 200 : family === "write" ? 201 : 200 };
}

async function send(kind: CredentialKind, header: HeaderCase, family: Family, adminOp: number) {
  const headers = { ...authorization(kind), ...projectHeader(header) };
  const connection = { default: "conn-default", a: "conn-alpha", b: "conn-beta" }[actingProject(kind, header)];
  if (family === "read") return t.server.app.inject({ method: "GET", url: `/auth/connections/${connection}`, headers });
  if (family === "write") {
    const form = multipartBody({ name: `ext-${++counter}` }, { file: goodExtensionZip() });
    return t.server.app.inject({ method: "POST", url: "/extensions", headers: { ...headers, ...form.headers }, payload: form.payload });
  }
  const json = { ...headers, "content-type": "application/json" };
  if (adminOp === 0)
    return t.server.app.inject({ method: "PATCH", url: `/org/projects/${ids.b}/limits`, headers: json, payload: { max_concurrent_sessions: 3 } });
  if (adminOp === 1)
    return t.server.app.inject({ method: "PATCH", url: "/org/limits", headers: json, payload: { default_project_max_concurrent_sessions: 4 } });
  return t.server.app.inject({ method: "POST", url: "/org/projects", headers: json, payload: { name: `made-${++counter}` } });
}

describe("authentication matrix (credential x project header x operation family)", () => {
  const kinds: CredentialKind[] = ["org-wide", "project-scoped", "missing", "invalid"];
  const headers: HeaderCase[] = ["none", "own", "other", "unknown", "archived"];
  const families: Family[] = ["read", "write", "admin"];
  for (const kind of kinds) {
    for (const header of headers) {
      for (const family of families) {
        const want = expected(kind, header, family);
        it(`${kind} key, header ${header}, ${family}: ${want.status}${want.code ? ` ${want.code}` : ""}`, async () => {
          for (const adminOp of family === "admin" ? [0, 1, 2] : [0]) {
            const response = await send(kind, header, family, adminOp);
            expect(response.statusCode, response.body).toBe(want.status === 200 && family === "admin" && adminOp === 2 ? 201 : want.status);
            if (want.code) expect(response.json().code).toBe(want.code);
            expect(response.headers["x-request-id"]).toMatch(/^req_/);
          }
        });
      }
    }
  }
});

describe("project scoping", () => {
  it("reads only the acting project's resources: another project's connection is 404 not_found", async () => {
    const response = await t.server.app.inject({ method: "GET", url: "/auth/connections/conn-beta", headers: { authorization: `Bearer ${keys.scopedA}` } });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe("not_found");
  });

  it("naming the default project in the header equals omitting it (writes land in the same project)", async () => {
    const client = t.client();
    await client.extensions.upload({ file: goodExtensionZip(), name: "same-place" });
    await expect(client.extensions.upload({ file: goodExtensionZip(), name: "same-place" }, { projectId: ids.default })).rejects.toMatchObject({
      status: 409,
      code: "name_conflict",
    });
    await expect(client.extensions.upload({ file: goodExtensionZip(), name: "same-place" }, { projectId: ids.b })).resolves.toMatchObject({
      name: "same-place",
    });
  });

  it("a project-scoped key writes into its own project without a header", async () => {
    const scoped = t.client({ apiKey: keys.scopedA });
    await scoped.extensions.upload({ file: goodExtensionZip(), name: "scoped-write" });
    await expect(t.client().extensions.upload({ file: goodExtensionZip(), name: "scoped-write" }, { projectId: ids.a })).rejects.toMatchObject({ status: 409 });
  });

  it("a project-scoped key of an archived project gets 404 project_not_found", async () => {
    const response = await t.server.app.inject({
      method: "GET",
      url: "/auth/connections/conn-old",
      headers: { authorization: `Bearer ${keys.scopedArchived}` },
    });
    expect(response.statusCode).toBe(404);
    expect(response.json().code).toBe("project_not_found");
  });

  it("a project-scoped key lists, reads and renames only its own project", async () => {
    const scoped = t.client({ apiKey: keys.scopedA });
    expect((await scoped.projects.list()).map((project) => project.id)).toEqual([ids.a]);
    expect((await scoped.projects.get(ids.a)).name).toBe("alpha");
    expect(await scoped.projects.getLimits("alpha")).toEqual({ max_concurrent_sessions: null, max_pooled_sessions: null });
    for (const other of [ids.b, "beta"]) {
      await expect(scoped.projects.get(other)).rejects.toMatchObject({ status: 404, code: "not_found" });
      await expect(scoped.projects.getLimits(other)).rejects.toMatchObject({ status: 404, code: "not_found" });
      await expect(scoped.projects.update(other, { name: "stolen" })).rejects.toMatchObject({ status: 404, code: "not_found" });
    }
    await expect(scoped.projects.update(ids.a, { status: "archived" })).rejects.toMatchObject({ status: 403, code: "forbidden" });
    await expect(scoped.projects.delete(ids.a)).rejects.toMatchObject({ status: 403, code: "forbidden" });
    expect((await scoped.projects.update(ids.a, { name: "alpha-renamed" })).name).toBe("alpha-renamed");
    expect((await scoped.projects.update(ids.a, { name: "alpha" })).name).toBe("alpha");
  });

  it("a project-scoped key cannot tell another project from a missing one: same status, code and message, no id", async () => {
    // By name, a 403 that named the project's id used to tell a scoped key which names are taken and what their ids are.
    const answer = async (path: string) => {
      const response = await t.server.app.inject({ method: "GET", url: path, headers: { authorization: `Bearer ${keys.scopedA}` } });
      const body = response.json() as { code: string; message: string };
      return { status: response.statusCode, code: body.code, message: body.message.replace(path.split("/")[3] as string, "<asked>") };
    };
    for (const [taken, missing] of [
      ["beta", "gamma"],
      [ids.b, "proj_doesnotexistdoesnotexist"],
      ["beta/limits", "gamma/limits"],
    ] as const) {
      const [seenTaken, seenMissing] = [await answer(`/org/projects/${taken}`), await answer(`/org/projects/${missing}`)];
      expect(seenTaken).toEqual(seenMissing);
      expect(seenTaken.status).toBe(404);
      expect(seenTaken.message).not.toContain(ids.b);
    }
  });

  it("a project-scoped key renaming its project to a taken name gets 409 name_conflict, naming neither that project nor its id", async () => {
    // Names are unique in an organization, so the conflict itself says the name is taken; it must say no more.
    const response = await t.server.app.inject({
      method: "PATCH",
      url: `/org/projects/${ids.a}`,
      headers: { authorization: `Bearer ${keys.scopedA}`, "content-type": "application/json" },
      payload: { name: "beta" },
    });
    expect(response.statusCode).toBe(409);
    expect(response.json()).toMatchObject({ code: "name_conflict" });
    expect(response.body).not.toContain(ids.b);
  });

  it("a key of an archived project may read it (and learn it is archived) but not change it; an org-wide key may", async () => {
    const archived = t.client({ apiKey: keys.scopedArchived });
    expect((await archived.projects.get(ids.archived)).status).toBe("archived");
    await expect(archived.projects.update(ids.archived, { name: "renamed-while-archived" })).rejects.toMatchObject({
      status: 403,
      code: "forbidden",
      message: expect.stringContaining("archived"),
    });
    expect((await t.client().projects.get(ids.archived)).name).toBe("old");
    expect((await t.client().projects.update(ids.archived, { name: "old-renamed" })).name).toBe("old-renamed");
    expect((await t.client().projects.update(ids.archived, { name: "old" })).name).toBe("old");
  });

  it("a project-scoped key may read the organization's limits but not change them", async () => {
    const scoped = t.client({ apiKey: keys.scopedA });
    expect((await scoped.limits.get()).max_concurrent_sessions).toBe(10);
    await expect(scoped.limits.update({ default_project_max_concurrent_sessions: 1 })).rejects.toMatchObject({ status: 403, code: "forbidden" });
  });

  it("rejects a non-bearer Authorization header, and checks credentials before the body", async () => {
    const basic = await t.server.app.inject({ method: "GET", url: "/org/limits", headers: { authorization: "Basic dXNlcjpwYXNz" } });
    expect(basic.statusCode).toBe(401);
    const unauthenticatedBadBody = await t.server.app.inject({ method: "POST", url: "/org/projects", headers: { "content-type": "text/plain" }, payload: "x" });
    expect(unauthenticatedBadBody.statusCode).toBe(401);
    expect(unauthenticatedBadBody.json().code).toBe("unauthorized");
  });
});
