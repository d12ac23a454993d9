import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FixturesError, parseFixtures } from "../src/index.js";
import { newId } from "../src/storage/ids.js";
import { managedAuth, writeFixtures } from "./support/fixtures.js";
import { loadSpec } from "./support/spec-error-codes.js";
import { useTestServer } from "./support/test-server.js";

// Project and browser names: the spec's rules (no id's form, no hidden characters) as
// the server applies them, and NFC storage and lookup of project names.

let fixturesDir: string;
// After the server closed (vitest runs afterAll hooks last registered first).
afterAll(() => rmSync(fixturesDir, { recursive: true, force: true }));

const t = useTestServer(() => {
  fixturesDir = mkdtempSync(join(tmpdir(), "browser-service-names-"));
  return { fixtures: writeFixtures(fixturesDir, { auth_connections: [{ project: "Default", ...managedAuth("mac_names") }] }) };
});

/** A raw JSON request with the org-wide key, so that bodies the client would not send can be sent. */
async function send(
  method: string,
  path: string,
  body?: string,
): Promise<{ status: number; body: { code?: string; details?: { code: string; message: string }[]; name?: string; id?: string } }> {
  const response = await fetch(`${t.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${t.orgKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  return { status: response.status, body: text === "" ? {} : JSON.parse(text) };
}

async function projectNames(): Promise<string[]> {
  return (await t.client().projects.list({ limit: 100 })).map((project) => project.name);
}

describe("project names: characters", () => {
  it('refuses {"name":"a\\u0000b"} with 400 and one detail, and stores nothing', async () => {
    const before = await projectNames();
    const answer = await send("POST", "/org/projects", '{"name":"a\\u0000b"}');
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe("bad_request");
    expect(answer.body.details).toHaveLength(1);
    expect(answer.body.details?.[0]?.message).toMatch(/^\/name /);
    expect(await projectNames()).toEqual(before);
  });

  it.each([
    ["a bidi override", '"\\u202Egnp.exe"'],
    ["a directional isolate", '"a\\u2066b"'],
    ["a zero-width joiner", '"Def\\u200Dault"'],
    ["a zero-width space", '"Def\\u200Bault"'],
    ["a lone surrogate", '"a\\ud800b"'],
    ["a C1 control", '"a\\u0085b"'],
    ["a tab", '"a\\tb"'],
  ])("refuses %s on create and on rename", async (_what, json) => {
    expect((await send("POST", "/org/projects", `{"name":${json}}`)).status).toBe(400);
    expect((await send("PATCH", `/org/projects/${t.defaultProjectId}`, `{"name":${json}}`)).status).toBe(400);
    expect((await t.client().projects.get(t.defaultProjectId)).name).toBe("Default");
  });

  it("finds no project by a name or id with a NUL in it: Default%00 is 404, not Default", async () => {
    expect(await send("GET", "/org/projects/Default%00")).toMatchObject({ status: 404, body: { code: "not_found" } });
    expect(await send("GET", "/org/projects/Default%00x")).toMatchObject({ status: 404, body: { code: "not_found" } });
    expect(await send("GET", `/org/projects/${t.defaultProjectId}%00`)).toMatchObject({ status: 404, body: { code: "not_found" } });
    expect(await send("DELETE", "/org/projects/Default%00")).toMatchObject({ status: 404, body: { code: "not_found" } });
    expect(await send("GET", "/org/projects?name=Default%00")).toMatchObject({ status: 200, body: [] });
    expect(await send("GET", "/org/projects?query=Def%00")).toMatchObject({ status: 200, body: [] });
    expect((await send("GET", "/org/projects/Default")).body.id).toBe(t.defaultProjectId);
  });

  it("finds no auth connection by an id with a NUL in it", async () => {
    expect((await send("GET", "/auth/connections/mac_names")).status).toBe(200);
    expect(await send("GET", "/auth/connections/mac_names%00")).toMatchObject({ status: 404, body: { code: "not_found" } });
  });

  it("refuses a fixtures file naming a project with a NUL, by pointer", () => {
    const text = JSON.stringify({ pool_reservations: [{ project: "a\u0000b", name: "p", size: 1 }] });
    expect(() => parseFixtures(text, "f.json")).toThrow(FixturesError);
    expect(() => parseFixtures(text, "f.json")).toThrow(/\/pool_reservations\/0\/project/);
  });
});

describe("project names: NFC", () => {
  const nfc = "caf\u00e9";
  const nfd = "cafe\u0301";

  it("stores an NFD name as NFC; the NFC name is then taken (409); either form finds it", async () => {
    const client = t.client();
    const created = await client.projects.create({ name: nfd });
    expect(created.name).toBe(nfc);
    await expect(client.projects.create({ name: nfc })).rejects.toMatchObject({ status: 409, code: "name_conflict" });
    await expect(client.projects.create({ name: nfd })).rejects.toMatchObject({ status: 409, code: "name_conflict" });
    expect((await send("GET", "/org/projects/caf%C3%A9")).body.id).toBe(created.id);
    expect((await send("GET", "/org/projects/cafe%CC%81")).body.id).toBe(created.id);
    expect((await client.projects.list({ name: nfd })).map((project) => project.id)).toEqual([created.id]);
    expect((await client.projects.list({ query: "CAFE\u0301" })).map((project) => project.id)).toEqual([created.id]);
    await client.projects.delete(nfd);
    await expect(client.projects.get(created.id)).rejects.toMatchObject({ status: 404 });
  });

  it("renames to NFC, and refuses a rename to another project's name in another form", async () => {
    const client = t.client();
    const first = await client.projects.create({ name: `${nfc}-1` });
    const second = await client.projects.create({ name: "plain" });
    await expect(client.projects.update(second.id, { name: `${nfd}-1` })).rejects.toMatchObject({ status: 409, code: "name_conflict" });
    expect((await client.projects.update(second.id, { name: `${nfd}-2` })).name).toBe(`${nfc}-2`);
    await client.projects.delete(first.id);
    await client.projects.delete(second.id);
  });

  it("refuses a name that NFC makes longer than 255 characters (400), though it was 255 as sent", async () => {
    // U+0958 is one character that NFC writes as two (a composition exclusion).
    const name = "\u0958".repeat(200);
    expect(name.normalize("NFC").length).toBe(400);
    const answer = await send("POST", "/org/projects", JSON.stringify({ name }));
    expect(answer.status).toBe(400);
    expect(answer.body.details?.map((detail) => detail.code)).toEqual(["maxLength"]);
  });
});

describe("names cannot pose as ids", () => {
  const spec = loadSpec() as unknown as { components: { schemas: Record<string, any> } };

  it("the spec's id forms cover every id the server gives", () => {
    const browserIdForm = new RegExp(spec.components.schemas.CreateBrowserRequest.properties.name.not.pattern, "u");
    const projectIdForm = new RegExp(spec.components.schemas.ProjectName.not.pattern, "u");
    for (let i = 0; i < 50; i++) {
      expect(newId("browser")).toMatch(browserIdForm);
      expect(newId("project")).toMatch(projectIdForm);
    }
  });

  it("refuses a browser named with another browser's id, so a retried DELETE of a deleted id never deletes another browser", async () => {
    const client = t.client();
    const a = await client.browsers.create({ name: "browser-a" });
    try {
      const impostor = await send("POST", "/browsers", JSON.stringify({ name: a.id }));
      expect(impostor.status).toBe(400);
      expect(impostor.body.details?.map((detail) => detail.code)).toEqual(["not"]);
      // Any name in the form of a browser id, not only a live one's.
      const spare = newId("browser");
      expect((await send("POST", "/browsers", JSON.stringify({ name: spare }))).status).toBe(400);
      const b = await client.browsers.create({ name: "browser-b" });
      try {
        expect((await send("DELETE", `/browsers/${a.id}`)).status).toBe(204);
        // The retry: A is gone, and no browser answers to its id.
        expect(await send("DELETE", `/browsers/${a.id}`)).toMatchObject({ status: 404, body: { code: "not_found" } });
        expect((await client.browsers.get(b.id)).id).toBe(b.id);
        expect((await client.browsers.list()).map((browser) => browser.id)).toEqual([b.id]);
      } finally {
        await client.browsers.delete(b.id);
      }
    } finally {
      await send("DELETE", `/browsers/${a.id}`);
    }
  });
});
