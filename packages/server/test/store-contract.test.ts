import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type FirstStart, initializeOrganization } from "../src/app/first-start.js";
import { openPgStores, openSqliteStores } from "../src/app/stores.js";
import { TIMELINE_EVENTS_KEPT } from "../src/auth-connections/auth-connection-store.js";
import type { Stores } from "../src/routes/api-deps.js";
import { dataDirLayout, newUploadPath } from "../src/storage/data-dir.js";
import { markingExtension } from "./support/extension-zips.js";
import { freshDatabase } from "./support/postgres.js";

// The contract of `Stores`, through the interfaces only: what any database behind them
// must do, run on SQLite and on PostgreSQL alike. The API's tests reach the same rules
// through HTTP; here each is one store call away.

interface Opened {
  stores: Stores;
  close(): Promise<void>;
}

/** The implementations under test, each opening a fresh, empty database. */
const IMPLEMENTATIONS: [string, () => Promise<Opened>][] = [
  [
    "SQLite",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "browser-service-contract-"));
      const stores = openSqliteStores(dataDirLayout(dir));
      return {
        stores,
        close: async () => {
          await stores.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
  [
    "PostgreSQL",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "browser-service-contract-"));
      const stores = await openPgStores(dataDirLayout(dir), { databaseUrl: await freshDatabase(), nodeId: "contract" });
      return {
        stores,
        close: async () => {
          await stores.close();
          rmSync(dir, { recursive: true, force: true });
        },
      };
    },
  ],
];

const launched = { pid: 4242, userDataDir: "/nonexistent/profile", sandboxed: true, budget: { memoryBytes: 768 * 1024 * 1024, maxProcesses: 300, cpus: 0.5 } };

describe.each(IMPLEMENTATIONS)("the store contract on %s", (_name, open) => {
  const opened: Opened[] = [];
  afterEach(async () => {
    for (const each of opened.splice(0)) await each.close();
  });

  async function started(): Promise<{ stores: Stores; first: FirstStart }> {
    const each = await open();
    opened.push(each);
    const first = await initializeOrganization(each.stores);
    if (first === undefined) throw new Error("a fresh database has no organization yet");
    return { stores: each.stores, first };
  }

  it("creates the organization, its Default project and a key once, and finds the key by its secret only", async () => {
    const { stores, first } = await started();
    expect(await initializeOrganization(stores)).toBeUndefined();
    expect((await stores.organizations.get(first.org.id)).default_project_id).toBe(first.project.id);
    expect(await stores.apiKeys.authenticate(first.key.secret)).toEqual({ keyId: first.key.keyId, orgId: first.org.id, projectId: null });
    expect(await stores.apiKeys.authenticate(`${first.key.secret}x`)).toBeUndefined();
  });

  it("keeps live project names unique in NFC, and frees a deleted project's name", async () => {
    const { stores, first } = await started();
    const orgId = first.org.id;
    const cafe = await stores.projects.create(orgId, "caf\u00e9");
    await expect(stores.projects.create(orgId, "cafe\u0301")).rejects.toMatchObject({ code: "name_conflict" });
    expect((await stores.projects.findByName(orgId, "cafe\u0301"))?.id).toBe(cafe.id);
    await stores.projects.delete(orgId, cafe);
    expect(await stores.projects.findById(orgId, cafe.id)).toBeUndefined();
    expect((await stores.projects.create(orgId, "caf\u00e9")).id).not.toBe(cafe.id);
  });

  it("refuses to archive or delete the last active or the default project", async () => {
    const { stores, first } = await started();
    const orgId = first.org.id;
    await expect(stores.projects.update(orgId, first.project, { status: "archived" })).rejects.toMatchObject({ code: "last_active_project" });
    await stores.projects.create(orgId, "other");
    await expect(stores.projects.update(orgId, first.project, { status: "archived" })).rejects.toMatchObject({ code: "default_project" });
    await expect(stores.projects.delete(orgId, first.project)).rejects.toMatchObject({ code: "default_project" });
  });

  it("pages projects oldest first and says whether more follow", async () => {
    const { stores, first } = await started();
    const orgId = first.org.id;
    for (const name of ["a", "b", "c"]) await stores.projects.create(orgId, name);
    const page = await stores.projects.list(orgId, { offset: 1, limit: 2 });
    expect(page.items.map((project) => project.name)).toEqual(["a", "b"]);
    expect(page.hasMore).toBe(true);
    expect((await stores.projects.list(orgId, { offset: 3, limit: 2 })).hasMore).toBe(false);
  });

  it("reserves a browser's slot within the project cap and the plan limit, and frees it when the browser crashes or goes", async () => {
    const { stores, first } = await started();
    const orgId = first.org.id;
    const projectId = first.project.id;
    const reserve = (name?: string, planLimit = 10) => stores.browsers.reserve({ orgId, projectId, name, planLimit, timeoutSeconds: 60 });
    await stores.projects.setCap(first.project, 2);
    const one = await reserve("one");
    const two = await reserve(undefined);
    await expect(reserve("three")).rejects.toMatchObject({ code: "concurrency_limit_exceeded" });
    expect(await stores.usage.project(projectId)).toBe(2);
    await stores.browsers.markCrashed(one.id, "out_of_memory");
    expect(await stores.usage.organization(orgId)).toBe(1);
    await expect(reserve("two-more", 1)).rejects.toMatchObject({ code: "concurrency_limit_exceeded" });
    await stores.browsers.remove(two.id);
    expect(await stores.usage.organization(orgId)).toBe(0);
    expect(await stores.browsers.getByIdOrName(projectId, "one")).toMatchObject({ status: "crashed", crash_reason: "out_of_memory" });
  });

  it("gives exactly the cap's slots to creates that race, and none to a project archived meanwhile", async () => {
    const { stores, first } = await started();
    const orgId = first.org.id;
    const other = await stores.projects.create(orgId, "racing");
    await stores.projects.setCap(other, 5);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => stores.browsers.reserve({ orgId, projectId: other.id, name: `b${i}`, planLimit: 100, timeoutSeconds: 60 })),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(5);
    for (const result of results.filter((each) => each.status === "rejected")) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "concurrency_limit_exceeded" });
    }
    expect(await stores.usage.project(other.id)).toBe(5);
    // An archive racing creates: either the archive wins (no browser since) or it is refused.
    const spare = await stores.projects.create(orgId, "spare");
    const [archived, ...reserved] = await Promise.allSettled([
      stores.projects.update(orgId, spare, { status: "archived" }),
      ...Array.from({ length: 5 }, () => stores.browsers.reserve({ orgId, projectId: spare.id, name: undefined, planLimit: 100, timeoutSeconds: 60 })),
    ]);
    const running = reserved.filter((result) => result.status === "fulfilled").length;
    // Archived: no create got a slot before it, and none after (the project is no longer active).
    if (archived?.status === "fulfilled") expect(running).toBe(0);
    else expect([archived?.reason, running > 0]).toMatchObject([{ code: "browsers_running" }, true]);
  });

  it("filters projects by a part of their name in any case, Unicode included", async () => {
    const { stores, first } = await started();
    const orgId = first.org.id;
    await stores.projects.create(orgId, "Ärger Straße");
    await stores.projects.create(orgId, "other");
    const found = await stores.projects.list(orgId, { offset: 0, limit: 10, query: "äRGER" });
    expect(found.items.map((project) => project.name)).toEqual(["Ärger Straße"]);
    expect((await stores.projects.list(orgId, { offset: 0, limit: 10, query: "STRAß" })).items).toHaveLength(1);
    expect((await stores.projects.list(orgId, { offset: 0, limit: 10, query: "%" })).items).toHaveLength(0);
  });

  it("stores an extension's record and archive together, and refuses a name used in the project", async () => {
    const { stores, first } = await started();
    const archive = markingExtension("contract");
    const upload = (name: string) => {
      const tempPath = newUploadPath(stores.layout.uploadsDir);
      writeFileSync(tempPath, archive);
      return { projectId: first.project.id, name, tempPath, sizeBytes: archive.length, checksum: createHash("sha256").update(archive).digest("hex") };
    };
    const stored = await stores.extensions.insert(upload("marker"));
    expect(readFileSync(await stores.extensions.archivePath(stored.id)).equals(archive)).toBe(true);
    expect(await stores.extensions.find(first.project.id, "name", "marker")).toEqual({ id: stored.id, name: "marker", checksum: stored.checksum });
    const refused = upload("marker");
    await expect(stores.extensions.insert(refused)).rejects.toMatchObject({ code: "name_conflict" });
    expect(() => readFileSync(refused.tempPath)).toThrow();
    expect(await stores.extensions.removeUnreferencedArchives()).toBe(0);
  });

  it("lists, reads and deletes extensions: a deleted one is gone from reads, its name free, its archive removed", async () => {
    const { stores, first } = await started();
    const archive = markingExtension("contract-delete");
    const upload = (name: string | undefined) => {
      const tempPath = newUploadPath(stores.layout.uploadsDir);
      writeFileSync(tempPath, archive);
      return { projectId: first.project.id, name, tempPath, sizeBytes: archive.length, checksum: createHash("sha256").update(archive).digest("hex") };
    };
    const a = await stores.extensions.insert(upload("a"));
    const b = await stores.extensions.insert(upload(undefined));
    const page = (offset: number, limit: number, name?: string) => stores.extensions.list(first.project.id, { offset, limit, name });
    expect(await page(0, 1)).toEqual({ items: [a], hasMore: true });
    expect(await page(1, 5)).toEqual({ items: [b], hasMore: false });
    expect(await page(0, 5, "a")).toEqual({ items: [a], hasMore: false });
    expect(await page(0, 5, "a\u0000")).toEqual({ items: [], hasMore: false });
    expect(await stores.extensions.get(first.project.id, "a")).toEqual(a);
    expect(await stores.extensions.get(first.project.id, b.id)).toEqual(b);
    expect(await stores.extensions.get("proj_other", a.id)).toBeUndefined();
    const copy = await stores.extensions.archivePath(a.id);
    expect(await stores.extensions.delete("proj_other", a.id)).toBe(false);
    expect(await stores.extensions.delete(first.project.id, a.id)).toBe(true);
    expect(await stores.extensions.delete(first.project.id, a.id)).toBe(false);
    expect(await stores.extensions.get(first.project.id, a.id)).toBeUndefined();
    expect(await stores.extensions.find(first.project.id, "name", "a")).toBeUndefined();
    expect(await page(0, 5)).toEqual({ items: [b], hasMore: false });
    expect(existsSync(copy)).toBe(false);
    // A copy a crash left behind after the delete's commit goes at the next start.
    writeFileSync(copy, archive);
    expect(await stores.extensions.removeUnreferencedArchives()).toBe(1);
    expect(existsSync(copy)).toBe(false);
    expect((await stores.extensions.insert(upload("a"))).name).toBe("a");
  });

  it("keeps credentials: by id or name, filtered lists, updates in one transaction, names unique, the key check", async () => {
    const { stores, first } = await started();
    const projectId = first.project.id;
    const row = (id: string, name: string, domain: string) => ({
      id,
      project_id: projectId,
      name,
      domain,
      sso_provider: null,
      value_keys: ["password"],
      values_sealed: `sealed-${id}`,
      totp_sealed: null,
      created_at: "2026-12-01T00:00:00.000Z",
      updated_at: "2026-12-01T00:00:00.000Z",
    });
    await stores.credentials.insert(row("cred_a", "Alpha", "a.example"));
    await stores.credentials.insert(row("cred_b", "beta_1", "b.example"));
    await expect(stores.credentials.insert(row("cred_c", "Alpha", "c.example"))).rejects.toMatchObject({ code: "name_conflict" });
    expect(await stores.credentials.get(projectId, "Alpha")).toEqual(row("cred_a", "Alpha", "a.example"));
    expect(await stores.credentials.get(projectId, "cred_b")).toEqual(row("cred_b", "beta_1", "b.example"));
    expect(await stores.credentials.get("proj_other", "cred_b")).toBeUndefined();
    const names = async (page: { domain?: string; query?: string }) =>
      (await stores.credentials.list(projectId, { offset: 0, limit: 10, ...page })).items.map((each) => each.name);
    expect(await names({})).toEqual(["Alpha", "beta_1"]);
    expect(await names({ domain: "b.example" })).toEqual(["beta_1"]);
    expect(await names({ query: "ALPH" })).toEqual(["Alpha"]);
    expect(await names({ query: "_" })).toEqual(["beta_1"]);
    expect(await names({ query: "%" })).toEqual([]);
    expect(await names({ query: "cred_a" })).toEqual(["Alpha"]);
    expect(await stores.credentials.list(projectId, { offset: 1, limit: 1 })).toMatchObject({ hasMore: false, items: [{ name: "beta_1" }] });
    const renamed = await stores.credentials.update(projectId, "cred_b", (current) => ({ ...current, name: "gamma", values_sealed: "resealed" }));
    expect(renamed).toMatchObject({ name: "gamma", values_sealed: "resealed" });
    await expect(stores.credentials.update(projectId, "cred_b", (current) => ({ ...current, name: "Alpha", values_sealed: "lost" }))).rejects.toMatchObject({
      code: "name_conflict",
    });
    await expect(
      stores.credentials.update(projectId, "cred_b", () => {
        throw new Error("refused inside");
      }),
    ).rejects.toThrow("refused inside");
    expect(await stores.credentials.get(projectId, "cred_b")).toMatchObject({ name: "gamma", values_sealed: "resealed" });
    expect(await stores.credentials.update("proj_other", "cred_b", (current) => current)).toBeUndefined();
    expect(await stores.credentials.keyCheck()).toBeUndefined();
    expect(await stores.credentials.initKeyCheck("check-1")).toBe("check-1");
    expect(await stores.credentials.initKeyCheck("check-2")).toBe("check-1");
    const seen: string[] = [];
    expect(await stores.credentials.resealAll((field) => (seen.push(`${field.id}:${field.column}`), `${field.sealed}+`))).toBe(2);
    expect(seen.sort()).toEqual(["cred_a:values_sealed", "cred_b:values_sealed"]);
    await stores.credentials.setKeyCheck("check-3");
    expect(await stores.credentials.keyCheck()).toBe("check-3");
    expect((await stores.credentials.get(projectId, "cred_a"))?.values_sealed).toBe("sealed-cred_a+");
    // A reseal that fails part way changes nothing.
    await expect(
      stores.credentials.resealAll((field) => {
        if (field.id === "cred_b") throw new Error("cannot open");
        return "half";
      }),
    ).rejects.toThrow("cannot open");
    expect(await stores.credentials.keyCheck()).toBe("check-3");
    expect((await stores.credentials.get(projectId, "cred_a"))?.values_sealed).toBe("sealed-cred_a+");
    expect(await stores.credentials.delete("proj_other", "cred_a")).toBe(false);
    expect(await stores.credentials.delete(projectId, "cred_a")).toBe(true);
    expect(await stores.credentials.delete(projectId, "cred_a")).toBe(false);
  });

  it("keeps profiles: by id or name, renamed, their state replaced whole, held by a saving browser", async () => {
    const { stores, first } = await started();
    const projectId = first.project.id;
    const made = (name: string | null, id: string) => ({
      id,
      name,
      created_at: "2026-12-01T00:00:00.000Z",
      updated_at: "2026-12-01T00:00:00.000Z",
      last_used_at: null,
      size_bytes: 0,
      last_save_error: null,
    });
    await stores.profiles.insert(projectId, made("alpha", "prof_a"));
    await stores.profiles.insert(projectId, made(null, "prof_b"));
    await expect(stores.profiles.insert(projectId, made("alpha", "prof_c"))).rejects.toMatchObject({ code: "name_conflict" });
    expect(await stores.profiles.get(projectId, "alpha")).toEqual(made("alpha", "prof_a"));
    expect(await stores.profiles.get("proj_other", "prof_a")).toBeUndefined();
    expect((await stores.profiles.list(projectId, { offset: 0, limit: 10, query: "ALP" })).items.map((each) => each.id)).toEqual(["prof_a"]);
    expect((await stores.profiles.list(projectId, { offset: 0, limit: 1 })).hasMore).toBe(true);
    await expect(stores.profiles.rename(projectId, "prof_b", "alpha")).rejects.toMatchObject({ code: "name_conflict" });
    expect((await stores.profiles.rename(projectId, "prof_b", "beta"))?.name).toBe("beta");
    expect(await stores.profiles.readSnapshot("prof_a")).toBeUndefined();
    expect(await stores.profiles.saveSnapshot("prof_a", Buffer.from("one"), 3)).toBe(true);
    const error = { code: "profile_too_large" as const, message: "too large", browser_id: "brw_x", at: "2026-12-01T00:00:01.000Z" };
    await stores.profiles.recordSaveError("prof_a", error);
    expect((await stores.profiles.get(projectId, "prof_a"))?.last_save_error).toEqual(error);
    expect(await stores.profiles.readSnapshot("prof_a")).toEqual(Buffer.from("one"));
    expect(await stores.profiles.saveSnapshot("prof_a", Buffer.from("two!"), 4)).toBe(true);
    expect(await stores.profiles.readSnapshot("prof_a")).toEqual(Buffer.from("two!"));
    expect(await stores.profiles.get(projectId, "prof_a")).toMatchObject({ size_bytes: 4, last_save_error: null });
    expect(await stores.profiles.saveSnapshot("prof_gone", Buffer.from("x"), 1)).toBe(false);
    expect(await stores.profiles.removeUnreferencedSnapshots()).toBe(0);
    expect(await stores.profiles.resealAll((profile, sealed) => Buffer.concat([sealed, Buffer.from(profile.project_id === projectId ? "+" : "?")]))).toBe(1);
    expect(await stores.profiles.readSnapshot("prof_a")).toEqual(Buffer.from("two!+"));
    // A browser that saves into it holds it; a crashed one does not.
    const saver = await stores.browsers.reserve({
      orgId: first.org.id,
      projectId,
      name: undefined,
      planLimit: 10,
      timeoutSeconds: 60,
      profile: { id: "prof_a", name: "alpha", save: true },
    });
    await expect(
      stores.browsers.reserve({
        orgId: first.org.id,
        projectId,
        name: undefined,
        planLimit: 10,
        timeoutSeconds: 60,
        profile: { id: "prof_a", name: "alpha", save: true },
      }),
    ).rejects.toMatchObject({ code: "profile_in_use" });
    const reader = await stores.browsers.reserve({
      orgId: first.org.id,
      projectId,
      name: undefined,
      planLimit: 10,
      timeoutSeconds: 60,
      profile: { id: "prof_a", name: "alpha", save: false },
    });
    await expect(stores.profiles.delete(projectId, "prof_a")).rejects.toMatchObject({ code: "profile_in_use" });
    await stores.browsers.remove(saver.id);
    await stores.browsers.remove(reader.id);
    expect(await stores.profiles.delete("proj_other", "prof_a")).toBe(false);
    expect(await stores.profiles.delete(projectId, "prof_a")).toBe(true);
    expect(await stores.profiles.readSnapshot("prof_a")).toBeUndefined();
    expect(await stores.profiles.delete(projectId, "prof_a")).toBe(false);
  });

  it("keeps browser names unique in a project while they live", async () => {
    const { stores, first } = await started();
    const reservation = { orgId: first.org.id, projectId: first.project.id, name: "agent", planLimit: 10, timeoutSeconds: 60 };
    const agent = await stores.browsers.reserve(reservation);
    await expect(stores.browsers.reserve(reservation)).rejects.toMatchObject({ code: "name_conflict" });
    await stores.browsers.remove(agent.id);
    expect((await stores.browsers.reserve(reservation)).name).toBe("agent");
  });

  it("records a running browser with its token hash, finds it by id in any project, and lists it", async () => {
    const { stores, first } = await started();
    const row = await stores.browsers.reserve({ orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 10, timeoutSeconds: 60 });
    const running = await stores.browsers.markRunning(row.id, launched, "ab".repeat(32));
    expect(running?.status).toBe("running");
    expect(await stores.browsers.findLaunched(row.id)).toMatchObject({ id: row.id, org_id: first.org.id, cdp_token_sha256: "ab".repeat(32) });
    expect(await stores.browsers.findLaunched("brw_missing")).toBeUndefined();
    expect((await stores.browsers.list(first.project.id, 0, 10)).items.map((each) => each.id)).toEqual([row.id]);
    await expect(stores.browsers.getByIdOrName(first.project.id, "nope")).rejects.toMatchObject({ code: "not_found" });
  });

  it("keeps the service's own browsers out of the project's reads, while they hold a slot and its node finds them", async () => {
    const { stores, first } = await started();
    const row = await stores.browsers.reserve({
      orgId: first.org.id,
      projectId: first.project.id,
      name: "flow",
      planLimit: 10,
      timeoutSeconds: 60,
      internal: true,
    });
    await stores.browsers.markRunning(row.id, launched, "cd".repeat(32));
    expect((await stores.browsers.list(first.project.id, 0, 10)).items).toEqual([]);
    await expect(stores.browsers.getByIdOrName(first.project.id, row.id)).rejects.toMatchObject({ code: "not_found" });
    await expect(stores.browsers.getByIdOrName(first.project.id, "flow")).rejects.toMatchObject({ code: "not_found" });
    expect(await stores.browsers.findLaunched(row.id)).toMatchObject({ id: row.id, internal: 1 });
    await expect(
      stores.browsers.reserve({ orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 1, timeoutSeconds: 60 }),
    ).rejects.toMatchObject({ code: "concurrency_limit_exceeded" });
  });

  it("keeps auth connections: due checks, claimed by one writer, and a timeline capped to its newest events", async () => {
    const { stores, first } = await started();
    const projectId = first.project.id;
    const record = {
      id: "conn_contract",
      profile_name: "p",
      domain: "example.com",
      status: "NEEDS_AUTH",
      save_credentials: true,
      record_session: false,
    } as const;
    await stores.authConnections.insert({ projectId, record: { ...record, health_checks: true }, internals: {} });
    await stores.authConnections.insert({ projectId, record: { ...record, id: "conn_off", profile_name: "q", health_checks: false }, internals: {} });
    // Never scheduled: due at once (to be scheduled); checks off: never due.
    expect((await stores.authConnections.due(Date.now(), 10)).map((row) => row.record.id)).toEqual(["conn_contract"]);
    await stores.authConnections.update(projectId, "conn_contract", (current) => ({ ...current, internals: { nextCheckAt: 5_000 } }));
    expect(await stores.authConnections.due(4_999, 10)).toEqual([]);
    expect((await stores.authConnections.due(5_000, 10)).map((row) => row.internals.nextCheckAt)).toEqual([5_000]);
    // Two writers claim the same due time: the second sees the first's change and gives up.
    const claim = () =>
      stores.authConnections.update(projectId, "conn_contract", (current) =>
        current.internals.nextCheckAt === 5_000 ? { ...current, internals: { nextCheckAt: 9_000 } } : undefined,
      );
    expect((await Promise.all([claim(), claim()])).filter((won) => won !== undefined)).toHaveLength(1);
    for (let n = 0; n < TIMELINE_EVENTS_KEPT + 5; n++) {
      await stores.authConnections.putTimelineEvent(projectId, "conn_contract", {
        id: `chk_${n}`,
        type: "health_check",
        status: "NEEDS_AUTH",
        timestamp: new Date(n * 1000).toISOString(),
      });
    }
    const kept = await stores.authConnections.timeline(projectId, "conn_contract", { offset: 0, limit: 2000 });
    expect(kept.items).toHaveLength(TIMELINE_EVENTS_KEPT);
    expect(kept.items[0]?.id).toBe(`chk_${TIMELINE_EVENTS_KEPT + 4}`);
    expect(kept.items.at(-1)?.id).toBe("chk_5");
  });

  it("records as running only a reservation still starting: one dropped or ended meanwhile stays as it is", async () => {
    const { stores, first } = await started();
    const reservation = { orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 10, timeoutSeconds: 60 };
    const dropped = await stores.browsers.reserve(reservation);
    await stores.browsers.remove(dropped.id);
    expect(await stores.browsers.markRunning(dropped.id, launched, "ab".repeat(32))).toBeUndefined();
    expect(await stores.browsers.findLaunched(dropped.id)).toBeUndefined();
    const crashed = await stores.browsers.reserve(reservation);
    await stores.browsers.markCrashed(crashed.id, "process_exited");
    expect(await stores.browsers.markRunning(crashed.id, launched, "ab".repeat(32))).toBeUndefined();
    expect((await stores.browsers.getByIdOrName(first.project.id, crashed.id)).status).toBe("crashed");
    expect(await stores.usage.project(first.project.id)).toBe(0);
  });

  it("marks what a killed server left starting or running as crashed, once", async () => {
    const { stores, first } = await started();
    const reservation = { orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 10, timeoutSeconds: 60 };
    const starting = await stores.browsers.reserve(reservation);
    const running = await stores.browsers.reserve({ ...reservation, running: { launched, tokenSha256: "cd".repeat(32) } });
    const abandoned = await stores.browsers.recoverAbandoned();
    expect(abandoned.map((row) => row.id).sort()).toEqual([starting.id, running.id].sort());
    expect(await stores.browsers.recoverAbandoned()).toEqual([]);
    expect(await stores.usage.organization(first.org.id)).toBe(0);
    expect(await stores.browsers.getByIdOrName(first.project.id, running.id)).toMatchObject({ status: "crashed", crash_reason: "server_lost" });
  });

  it("keeps the resource budget a browser runs with, whether warm or cold", async () => {
    const { stores, first } = await started();
    const reservation = { orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 10, timeoutSeconds: 60 };
    const budget = { budget_memory_mib: 768, budget_max_processes: 300, budget_cpus: 0.5 };
    const warm = await stores.browsers.reserve({ ...reservation, running: { launched, tokenSha256: "cd".repeat(32) } });
    expect(await stores.browsers.getByIdOrName(first.project.id, warm.id)).toMatchObject(budget);
    const cold = await stores.browsers.reserve(reservation);
    expect(await stores.browsers.markRunning(cold.id, launched, "ab".repeat(32))).toMatchObject(budget);
    const unbudgeted = await stores.browsers.reserve(reservation);
    const { budget: _none, ...withoutBudget } = launched;
    expect(await stores.browsers.markRunning(unbudgeted.id, withoutBudget, "ab".repeat(32))).toMatchObject({
      budget_memory_mib: null,
      budget_max_processes: null,
      budget_cpus: null,
      crash_reason: null,
    });
  });

  it("commits a unit of work whole or not at all", async () => {
    const { stores, first } = await started();
    const orgId = first.org.id;
    await expect(
      stores.unitOfWork(async () => {
        await stores.projects.insert(orgId, "half");
        throw new Error("the second write fails");
      }),
    ).rejects.toThrow("the second write fails");
    expect(await stores.projects.findByName(orgId, "half")).toBeUndefined();
    const key = await stores.unitOfWork(async () => {
      const project = await stores.projects.insert(orgId, "whole");
      return stores.apiKeys.insert(orgId, project.id);
    });
    expect((await stores.apiKeys.authenticate(key.secret))?.projectId).toBe((await stores.projects.findByName(orgId, "whole"))?.id);
  });
});

describe.each(IMPLEMENTATIONS)("the telemetry store on %s", (_name, open) => {
  const opened: Opened[] = [];
  afterEach(async () => {
    for (const each of opened.splice(0)) await each.close();
  });

  const event = (seq: number, ts: number, type = "console_log") => {
    const body = { category: "console" as const, type, ts, source: { kind: "cdp" as const } };
    return { seq, event: body, json: JSON.stringify(body) };
  };

  it("keeps a browser's newest events past its cap, counts the drop, and shows them to its project only", async () => {
    const each = await open();
    opened.push(each);
    const store = each.stores.telemetry;
    await store.begin("brw_a", "proj_1");
    const dropped = await store.append(
      "brw_a",
      "proj_1",
      [1, 2, 3, 4, 5].map((seq) => event(seq, seq * 1000)),
      { events: 3, chars: 1e9 },
    );
    expect(dropped).toBe(2);
    const page = await store.page("proj_1", "brw_a", { cursor: 0, limit: 10, order: "asc" });
    expect(JSON.parse(page.items[0]?.json ?? "{}")).toMatchObject({ category: "console", ts: 3000 });
    expect(page.items.map((item) => item.seq)).toEqual([3, 4, 5]);
    expect(await store.browser("proj_1", "brw_a")).toEqual({ dropped: 2, ended: false });
    // Another project sees neither the browser nor its events.
    expect(await store.browser("proj_2", "brw_a")).toBeUndefined();
    expect((await store.page("proj_2", "brw_a", { cursor: 0, limit: 10, order: "asc" })).items).toEqual([]);
    // Paging by seq both ways, and filters before the limit.
    expect((await store.page("proj_1", "brw_a", { cursor: 3, limit: 1, order: "asc" })).items.map((item) => item.seq)).toEqual([4]);
    expect((await store.page("proj_1", "brw_a", { cursor: 5, limit: 1, order: "desc" })).items.map((item) => item.seq)).toEqual([4]);
    await store.append("brw_a", "proj_1", [event(6, 6000, "page_load")], { events: 3, chars: 1e9 });
    const filtered = await store.page("proj_1", "brw_a", { cursor: 0, limit: 1, order: "asc", types: ["page_load"] });
    expect([filtered.items.map((item) => item.seq), filtered.hasMore]).toEqual([[6], false]);
  });

  it("deletes what is past retention after a browser ends, and a project's oldest events past its cap", async () => {
    const each = await open();
    opened.push(each);
    const store = each.stores.telemetry;
    for (const id of ["brw_old", "brw_new", "brw_other"]) await store.begin(id, id === "brw_other" ? "proj_2" : "proj_1");
    const roomy = { events: 100, chars: 1e9 };
    await store.append("brw_old", "proj_1", [event(1, 1000), event(2, 2000)], roomy);
    await store.append("brw_new", "proj_1", [event(1, 3000), event(2, 4000), event(3, 5000)], roomy);
    await store.append("brw_other", "proj_2", [event(1, 500)], roomy);
    await store.end("brw_old", 10_000);
    // brw_new and brw_other have no browsers row: ended now, by the sweep, kept for the retention period.
    const first = await store.sweep(20_000, 15_000, { events: 2, chars: 1e9 });
    expect(first.expired).toBe(2);
    expect(await store.browser("proj_1", "brw_old")).toBeUndefined();
    // proj_1 held 3 events past its cap of 2: its oldest went, counted on its browser.
    expect(first.dropped).toBe(1);
    expect((await store.page("proj_1", "brw_new", { cursor: 0, limit: 10, order: "asc" })).items.map((item) => item.seq)).toEqual([2, 3]);
    expect(await store.browser("proj_1", "brw_new")).toEqual({ dropped: 1, ended: true });
    // The other project is under its cap and untouched.
    expect((await store.page("proj_2", "brw_other", { cursor: 0, limit: 10, order: "asc" })).items).toHaveLength(1);
    // Past the retention of their sweep-recorded end, they go too.
    const later = await store.sweep(40_000, 30_000, { events: 2, chars: 1e9 });
    expect(later.expired).toBe(3);
    expect(await store.browser("proj_2", "brw_other")).toBeUndefined();
  });
});

describe.each(IMPLEMENTATIONS)("the telemetry store's byte caps on %s", (_name, open) => {
  const opened: Opened[] = [];
  afterEach(async () => {
    for (const each of opened.splice(0)) await each.close();
  });

  /** An event whose JSON is exactly `chars` characters long. */
  const sized = (seq: number, ts: number, chars: number) => {
    const base = { category: "console" as const, type: "console_log", ts, source: { kind: "cdp" as const }, data: { text: "" } };
    const text = "x".repeat(chars - JSON.stringify(base).length);
    const event = { ...base, data: { text } };
    return { seq, event, json: JSON.stringify(event) };
  };

  it("keeps a browser's newest events under its character cap, and a project's under its own", async () => {
    const each = await open();
    opened.push(each);
    const store = each.stores.telemetry;
    await store.begin("brw_big", "proj_1");
    // Five of 200 characters past a cap of 700: trimmed to 90 % of it (630), the newest three stay.
    const dropped = await store.append(
      "brw_big",
      "proj_1",
      [1, 2, 3, 4, 5].map((seq) => sized(seq, seq * 1000, 200)),
      { events: 1000, chars: 700 },
    );
    expect(dropped).toBe(2);
    expect((await store.page("proj_1", "brw_big", { cursor: 0, limit: 10, order: "asc" })).items.map((item) => item.seq)).toEqual([3, 4, 5]);
    expect(await store.browser("proj_1", "brw_big")).toEqual({ dropped: 2, ended: false });
    // Under the cap, nothing more goes.
    expect(await store.append("brw_big", "proj_1", [sized(6, 6000, 100)], { events: 1000, chars: 700 })).toBe(0);
    // The project's cap spans its browsers, the oldest first.
    await store.begin("brw_two", "proj_1");
    await store.append("brw_two", "proj_1", [sized(1, 500, 200), sized(2, 7000, 200)], { events: 1000, chars: 1e9 });
    // 1,100 characters in the project past a cap of 600: down to 540, the newest first.
    const swept = await store.sweep(10_000, 0, { events: 1000, chars: 600 });
    expect(swept.dropped).toBeGreaterThan(0);
    const left = [
      ...(await store.page("proj_1", "brw_big", { cursor: 0, limit: 10, order: "asc" })).items.map((item) => `big ${item.seq}`),
      ...(await store.page("proj_1", "brw_two", { cursor: 0, limit: 10, order: "asc" })).items.map((item) => `two ${item.seq}`),
    ];
    // Newest first: two 2 (200), big 6 (100), big 5 (200) fit in 540; big 4 and older, and two 1, go.
    expect(left.sort()).toEqual(["big 5", "big 6", "two 2"]);
  });
});
