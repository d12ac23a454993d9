import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChromiumLauncher } from "../src/browsers/chromium-launcher.js";
import { storedRows } from "./support/stored-rows.js";
import { startTestServer, type TestServer, useTestServer } from "./support/test-server.js";
import { type DrivenBrowser, drive } from "./support/webmcp-driver.js";

// Log in once, use it everywhere: a site sets an HttpOnly session cookie, a persistent
// cookie, local storage and IndexedDB in a browser started with a profile; the next browser with
// the profile has them all, and no browser without it (or with another) sees any of them.

// The site: `/login` sets an HttpOnly session cookie and a persistent one, as a login
// answer does; `/whoami` says which cookies it received; pages keep local storage and
// IndexedDB themselves.
let site: Server;
let siteUrl: string;
const driven: DrivenBrowser[] = [];
beforeAll(async () => {
  site = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://site");
    if (url.pathname === "/login") {
      const user = url.searchParams.get("user") ?? "";
      response.setHeader("set-cookie", [`session=${user}; Path=/; HttpOnly; SameSite=Lax`, `remember=${user}; Path=/; Max-Age=86400; SameSite=Lax`]);
    }
    if (url.pathname === "/whoami") {
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify(request.headers.cookie ?? ""));
      return;
    }
    response.setHeader("content-type", "text/html");
    response.end("<!doctype html><title>Site</title><p>site</p>");
  }).listen(0, "127.0.0.1");
  await once(site, "listening");
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  for (const each of driven) await each.disconnect().catch(() => undefined);
  site?.close();
});

/** Logs in as `user`: cookies from the site's answer, local storage and IndexedDB from its page. */
async function logIn(browser: Browser, user: string): Promise<void> {
  const driver = await drive(browser.cdp_ws_url);
  driven.push(driver);
  const page = await driver.open(`${siteUrl}/login?user=${user}`);
  await page.evaluate(async (value) => {
    localStorage.setItem("user", value);
    await new Promise<void>((resolve, reject) => {
      const open = indexedDB.open("app", 1);
      open.onupgradeneeded = () => open.result.createObjectStore("kv");
      open.onerror = () => reject(open.error);
      open.onsuccess = () => {
        const tx = open.result.transaction("kv", "readwrite");
        tx.objectStore("kv").put(value, "user");
        tx.oncomplete = () => {
          open.result.close();
          resolve();
        };
        tx.onerror = () => reject(tx.error);
      };
    });
  }, user);
  await driver.disconnect();
}

/** What the site finds in the browser: each kind of state, or `null`. */
async function stateIn(browser: Browser): Promise<Record<string, string | null>> {
  const driver = await drive(browser.cdp_ws_url);
  driven.push(driver);
  const page = await driver.open(`${siteUrl}/`);
  const found = await page.evaluate(async () => {
    const sent = (await (await fetch("/whoami")).json()) as string;
    const cookie = (name: string) =>
      sent
        .split("; ")
        .find((each) => each.startsWith(`${name}=`))
        ?.slice(name.length + 1) ?? null;
    const stored = await new Promise<string | null>((resolve) => {
      const open = indexedDB.open("app", 1);
      open.onupgradeneeded = () => open.result.createObjectStore("kv");
      open.onerror = () => resolve(null);
      open.onsuccess = () => {
        const request = open.result.transaction("kv").objectStore("kv").get("user");
        request.onsuccess = () => {
          open.result.close();
          resolve((request.result as string | undefined) ?? null);
        };
        request.onerror = () => resolve(null);
      };
    });
    return { session: cookie("session"), remember: cookie("remember"), local: localStorage.getItem("user"), indexed: stored };
  });
  await driver.disconnect();
  return found;
}

/** The status and raw text of a request with `apiKey` (the org-wide key unless given). */
async function raw(
  t: TestServer,
  method: string,
  path: string,
  { body, apiKey }: { body?: unknown; apiKey?: string } = {},
): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { authorization: `Bearer ${apiKey ?? t.orgKey}` };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${t.url}${path}`, { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  return { status: response.status, text: await response.text() };
}

/**
 * Puts `mib` MiB of random bytes (which no compression shrinks) in the site's IndexedDB,
 * then waits until a second tab reads the last of it back: the write has reached the browser's storage.
 */
async function fillIndexedDb(browser: Browser, mib: number): Promise<void> {
  const driver = await drive(browser.cdp_ws_url);
  driven.push(driver);
  const page = await driver.open(`${siteUrl}/`);
  await page.evaluate(async (count) => {
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const open = indexedDB.open("bulk", 1);
      open.onupgradeneeded = () => open.result.createObjectStore("chunks");
      open.onerror = () => reject(open.error);
      open.onsuccess = () => resolve(open.result);
    });
    for (let i = 0; i < count; i++) {
      const chunk = new Uint8Array(1024 * 1024);
      for (let at = 0; at < chunk.length; at += 65536) crypto.getRandomValues(chunk.subarray(at, at + 65536));
      await new Promise<void>((resolve, reject) => {
        const tx = db.transaction("chunks", "readwrite");
        tx.objectStore("chunks").put(chunk, i);
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error);
      });
    }
    db.close();
  }, mib);
  const witness = await driver.open(`${siteUrl}/`);
  const last = await witness.evaluate(
    async (key) =>
      new Promise<number>((resolve, reject) => {
        const open = indexedDB.open("bulk", 1);
        open.onerror = () => reject(open.error);
        open.onsuccess = () => {
          const request = open.result.transaction("chunks").objectStore("chunks").get(key);
          request.onsuccess = () => {
            open.result.close();
            resolve((request.result as Uint8Array | undefined)?.length ?? 0);
          };
          request.onerror = () => reject(request.error);
        };
      }),
    mib - 1,
  );
  expect(last).toBe(1024 * 1024);
  await driver.disconnect();
}

/** The pids of this process's children whose command is `name`. */
function childProcessesNamed(name: string): number[] {
  return readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        const command = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
        const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
        return command === name && parent === process.pid ? [Number(pid)] : [];
      } catch {
        return [];
      }
    });
}

const nothing = { session: null, remember: null, local: null, indexed: null };
const all = (mark: string) => ({ session: mark, remember: mark, local: mark, indexed: mark });

describe("profiles", () => {
  const t = useTestServer({ warmBrowsers: 1 });

  it("keep a login between browsers, and only for the browsers started with them", async () => {
    const client = t.client();
    const profile = await client.profiles.create({ name: "shop-session" });
    expect(profile).toEqual({
      id: expect.stringMatching(/^prof_[a-z2-7]{24}$/),
      name: "shop-session",
      created_at: expect.any(String),
      updated_at: profile.created_at,
      last_used_at: null,
      size_bytes: 0,
      last_save_error: null,
    });
    const first = await client.browsers.create({ profile: { name: "shop-session", save_changes: true } });
    expect(first.profile).toEqual({ id: profile.id, name: "shop-session", save_changes: true });
    expect(await stateIn(first)).toEqual(nothing);
    await logIn(first, "alice");
    // One browser at a time saves into a profile; any number may read it.
    await expect(client.browsers.create({ profile: { id: profile.id, save_changes: true } })).rejects.toMatchObject({ status: 409, code: "profile_in_use" });
    await expect(client.profiles.delete(profile.id)).rejects.toMatchObject({ status: 409, code: "profile_in_use" });
    await client.browsers.delete(first.id);
    const saved = await client.profiles.get(profile.id);
    expect(saved.size_bytes).toBeGreaterThan(1024);
    expect(saved.last_used_at).toBe(first.created_at);

    const second = await client.browsers.create({ profile: { id: profile.id } });
    expect(second.profile).toEqual({ id: profile.id, name: "shop-session", save_changes: false });
    expect(await stateIn(second)).toEqual(all("alice"));
    // A browser without the profile, warm or cold, has none of it.
    const plain = await client.browsers.create();
    expect(plain.profile).toBeNull();
    expect(await stateIn(plain)).toEqual(nothing);
    const other = await client.profiles.create({ name: "other" });
    const withOther = await client.browsers.create({ profile: { id: other.id } });
    expect(await stateIn(withOther)).toEqual(nothing);
    for (const each of [second, plain, withOther]) await client.browsers.delete(each.id);
    // A reader saves nothing: the profile is as the saver left it.
    expect((await client.profiles.get(profile.id)).updated_at).toBe(saved.updated_at);
    expect(t.mismatches).toEqual([]);
  });

  it("download as a tar whose first entry is the cookies, as long as size_bytes says", async () => {
    const client = t.client();
    const profile = await client.profiles.create({ name: "downloaded" });
    const empty = await client.profiles.download("downloaded");
    expect(empty).toEqual(new Uint8Array(1024));
    const browser = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
    await logIn(browser, "bob");
    await client.browsers.delete(browser.id);
    const archive = Buffer.from(await client.profiles.download(profile.id));
    expect(archive.length).toBe((await client.profiles.get(profile.id)).size_bytes);
    expect(archive.toString("utf8", 0, 100).replace(/\0.*$/s, "")).toBe("browser-service/cookies.json");
    const size = Number.parseInt(archive.toString("ascii", 124, 135), 8);
    const cookies = JSON.parse(archive.toString("utf8", 512, 512 + size)) as { name: string; value: string; session: boolean }[];
    expect(
      cookies
        .filter((each) => each.value === "bob")
        .map((each) => [each.name, each.session])
        .sort(),
    ).toEqual([
      ["remember", false],
      ["session", true],
    ]);
    expect(archive.includes(Buffer.from("Default/Local Storage"))).toBe(true);
  });

  it("refuse what names nothing, and another project's profile exactly like a missing one", async () => {
    const client = t.client();
    await expect(client.browsers.create({ profile: { name: "no-such-profile" } })).rejects.toMatchObject({ status: 404, code: "profile_not_found" });
    const project = await client.projects.create({ name: "profiles-elsewhere" });
    const theirs = await t.client({ projectId: project.id }).profiles.create({ name: "theirs" });
    await expect(client.browsers.create({ profile: { id: theirs.id } })).rejects.toMatchObject({ status: 404, code: "profile_not_found" });
    await expect(client.profiles.get(theirs.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    await expect(client.profiles.download(theirs.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
    // An id is never taken for a name, nor a name for an id.
    const named = await client.profiles.create({ name: "by-name" });
    await expect(client.browsers.create({ profile: { id: "by-name" } })).rejects.toMatchObject({ status: 404, code: "profile_not_found" });
    await expect(client.browsers.create({ profile: { name: named.id } })).rejects.toMatchObject({ status: 404, code: "profile_not_found" });
    await expect(client.projects.delete(project.id)).rejects.toMatchObject({ status: 409, code: "project_not_empty" });
    await t.client({ projectId: project.id }).profiles.delete("theirs");
    await client.projects.delete(project.id);
    // Every refused create left its slot free.
    expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
  });

  it("list oldest first, a page at a time (X-Has-More, X-Next-Offset), filtered by exact name or by query, only the project's own", async () => {
    const project = await t.client().projects.create({ name: "profiles-listed" });
    const client = t.client({ projectId: project.id });
    const made = [];
    for (const name of ["Page-0", "Page-1", "page_2", "Page-3", "pagex2"]) made.push(await client.profiles.create({ name }));
    const unnamed = await client.profiles.create();
    made.push(unnamed);
    const ids = made.map((each) => each.id);
    // The same name in another project is no conflict, and is never listed here.
    const elsewhere = await t.client().profiles.create({ name: "Page-1" });

    const first = await client.GET("/profiles", { params: { query: { limit: 4 } } });
    expect(first.data?.map((each) => each.id)).toEqual(ids.slice(0, 4));
    expect(first.response.headers.get("x-has-more")).toBe("true");
    expect(first.response.headers.get("x-next-offset")).toBe("4");
    // A last page exactly full has no more after it.
    const last = await client.GET("/profiles", { params: { query: { offset: 4, limit: 2 } } });
    expect(last.data?.map((each) => each.id)).toEqual(ids.slice(4));
    expect(last.response.headers.get("x-has-more")).toBe("false");
    expect(last.response.headers.get("x-next-offset")).toBe("0");
    const beyond = await client.GET("/profiles", { params: { query: { offset: 50 } } });
    expect(beyond.data).toEqual([]);
    expect(beyond.response.headers.get("x-has-more")).toBe("false");
    expect(beyond.response.headers.get("x-next-offset")).toBe("0");
    const walked: string[] = [];
    for await (const each of client.profiles.listAll({ limit: 2 })) walked.push(each.id);
    expect(walked).toEqual(ids);
    expect(await client.profiles.list()).toEqual(made);

    // `name`: exactly this name, letter case included; never a part of one.
    expect(await client.profiles.list({ name: "Page-1" })).toEqual([made[1]]);
    expect(await client.profiles.list({ name: "page-1" })).toEqual([]);
    expect(await client.profiles.list({ name: "Page" })).toEqual([]);
    expect(await client.profiles.list({ name: "Page-1", query: "3" })).toEqual([]);
    // `query`: a part of the name in any case, as written (no LIKE wildcards), or an id exactly.
    expect((await client.profiles.list({ query: "PAGE-" })).map((each) => each.name)).toEqual(["Page-0", "Page-1", "Page-3"]);
    expect((await client.profiles.list({ query: "_" })).map((each) => each.name)).toEqual(["page_2"]);
    expect(await client.profiles.list({ query: "%" })).toEqual([]);
    expect(await client.profiles.list({ query: unnamed.id })).toEqual([unnamed]);
    expect(await client.profiles.list({ query: unnamed.id.slice(0, -1) })).toEqual([]);
    const paged = await client.GET("/profiles", { params: { query: { query: "page", offset: 1, limit: 2 } } });
    expect(paged.data?.map((each) => each.name)).toEqual(["Page-1", "page_2"]);
    expect(paged.response.headers.get("x-has-more")).toBe("true");
    expect(paged.response.headers.get("x-next-offset")).toBe("3");
    // Another project's profile is found by neither its name nor its id.
    expect(await t.client().profiles.list({ query: unnamed.id })).toEqual([]);
    expect(await t.client().profiles.list({ name: "Page-1" })).toEqual([elsewhere]);

    for (const query of [{ limit: 101 }, { limit: 0 }, { offset: -1 }, { name: "" }, { query: "" }, { query: "x".repeat(256) }]) {
      await expect(client.profiles.list(query)).rejects.toMatchObject({ status: 400, code: "bad_request" });
    }
    await t.client().profiles.delete(elsewhere.id);
    for (const id of ids) await client.profiles.delete(id);
    await t.client().projects.delete(project.id);
    expect(t.mismatches).toEqual([]);
  });

  it("refuse a name the project uses with 409 name_conflict, and one off the pattern with 400, changing nothing", async () => {
    const client = t.client();
    const taken = await client.profiles.create({ name: "taken-name" });
    const spare = await client.profiles.create({ name: "spare-name" });
    await expect(client.profiles.create({ name: "taken-name" })).rejects.toMatchObject({ status: 409, code: "name_conflict" });
    await expect(client.profiles.update(spare.id, { name: "taken-name" })).rejects.toMatchObject({ status: 409, code: "name_conflict" });
    for (const name of ["", "has space", "slash/name", "caf\u00e9", "x".repeat(256), `prof_${"a".repeat(24)}`, null, 7]) {
      const created = await raw(t, "POST", "/profiles", { body: { name } });
      expect(created.status).toBe(400);
      expect(JSON.parse(created.text)).toMatchObject({ code: "bad_request" });
      expect((await raw(t, "PATCH", `/profiles/${spare.id}`, { body: { name } })).status).toBe(400);
    }
    expect((await raw(t, "PATCH", `/profiles/${spare.id}`, { body: {} })).status).toBe(400);
    // Nothing was made or renamed: one profile has the name, and the other kept its own.
    expect(await client.profiles.list({ name: "taken-name" })).toEqual([taken]);
    expect(await client.profiles.get(spare.id)).toEqual(spare);
    for (const name of ["has space", `prof_${"a".repeat(24)}`]) expect(await client.profiles.list({ query: name })).toEqual([]);
    // What the pattern allows is taken: another letter case is another name, 255 characters fit.
    expect((await client.profiles.create({ name: "Taken-Name" })).name).toBe("Taken-Name");
    expect((await client.profiles.update(spare.id, { name: "x".repeat(255) })).name).toBe("x".repeat(255));
  });

  it("answer another project's profile, by id or by name, with the very 404 of a missing one, for GET, PATCH, DELETE and download", async () => {
    const project = await t.client().projects.create({ name: "profiles-foreign" });
    const theirClient = t.client({ projectId: project.id });
    const theirs = await theirClient.profiles.create({ name: "foreign-one" });
    const scopedKey = (await t.server.issueApiKey(t.defaultProjectId)).secret;
    for (const apiKey of [t.orgKey, scopedKey]) {
      const answer = async (method: string, ref: string, suffix: string) => {
        const read = await raw(t, method, `/profiles/${ref}${suffix}`, { apiKey, ...(method === "PATCH" ? { body: { name: "stolen" } } : {}) });
        return { status: read.status, body: read.text.replaceAll(ref, "<ref>").replace(/"request_id":"[^"]*"/, "") };
      };
      for (const [method, suffix] of [
        ["GET", ""],
        ["PATCH", ""],
        ["DELETE", ""],
        ["GET", "/download"],
      ] as const) {
        for (const [ref, none] of [
          [theirs.id, "prof_aaaaaaaaaaaaaaaaaaaaaaaa"],
          ["foreign-one", "no-such-profile"],
        ] as const) {
          const missing = await answer(method, none, suffix);
          expect(missing.status).toBe(404);
          expect(JSON.parse(missing.body)).toMatchObject({ code: "not_found" });
          expect(await answer(method, ref, suffix), `${method} ${suffix} of their ${ref}`).toEqual(missing);
        }
      }
    }
    // Nothing of theirs changed: not renamed, not deleted.
    expect(await theirClient.profiles.get(theirs.id)).toEqual(theirs);
    expect(await theirClient.profiles.list()).toEqual([theirs]);
    await theirClient.profiles.delete(theirs.id);
    await t.client().projects.delete(project.id);
    expect(t.mismatches).toEqual([]);
  });

  it("may be read by any number of browsers while one saves into it: each reader starts with the saved state and saves nothing", async () => {
    const client = t.client();
    const profile = await client.profiles.create({ name: "read-by-many" });
    const first = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
    await logIn(first, "gina");
    await client.browsers.delete(first.id);
    const saved = await client.profiles.get(profile.id);
    expect(saved.size_bytes).toBeGreaterThan(1024);
    // The holder runs, its live state its own until it ends.
    const holder = await client.browsers.create({ profile: { name: "read-by-many", save_changes: true } });
    await logIn(holder, "hank");
    const readers = [
      await client.browsers.create({ profile: { id: profile.id } }),
      await client.browsers.create({ profile: { name: "read-by-many", save_changes: false } }),
    ];
    for (const reader of readers) {
      expect(reader.profile).toEqual({ id: profile.id, name: "read-by-many", save_changes: false });
      expect(await stateIn(reader)).toEqual(all("gina"));
    }
    // Still one saver at a time, readers or not.
    await expect(client.browsers.create({ profile: { id: profile.id, save_changes: true } })).rejects.toMatchObject({ status: 409, code: "profile_in_use" });
    await logIn(readers[0]!, "mallory");
    for (const reader of readers) await client.browsers.delete(reader.id);
    expect(await client.profiles.get(profile.id)).toMatchObject({ updated_at: saved.updated_at, size_bytes: saved.size_bytes, last_save_error: null });
    // The holder's end saves what it had; no reader's state came in.
    await client.browsers.delete(holder.id);
    const after = await client.browsers.create({ profile: { id: profile.id } });
    expect(await stateIn(after)).toEqual(all("hank"));
    await client.browsers.delete(after.id);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
  });
});

describe("a profile's saved state", () => {
  it("is sealed at rest, replaced whole, and past its cap not saved: the profile keeps what it had", async () => {
    const t = await startTestServer({ profileStateBytes: 256 * 1024 });
    const client = t.client();
    const profile = await client.profiles.create({ name: "capped" });
    const first = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
    await logIn(first, "carol-secret-marker");
    await client.browsers.delete(first.id);
    const saved = await client.profiles.get(profile.id);
    expect(saved.size_bytes).toBeGreaterThan(0);
    // Past the cap: 1 MiB of local storage.
    const big = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
    const driver = await drive(big.cdp_ws_url);
    driven.push(driver);
    const page = await driver.open(`${siteUrl}/`);
    await page.evaluate(() => localStorage.setItem("big", "x".repeat(1024 * 1024)));
    await driver.disconnect();
    await client.browsers.delete(big.id);
    // The profile is as it was, and says why the save was given up.
    const refused = await client.profiles.get(profile.id);
    expect(refused).toEqual({
      ...saved,
      last_used_at: big.created_at,
      last_save_error: { code: "profile_too_large", message: expect.stringMatching(/262144/), browser_id: big.id, at: expect.any(String) },
    });
    const after = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
    expect(await stateIn(after)).toEqual(all("carol-secret-marker"));
    await client.browsers.delete(after.id);
    // A save that goes through clears it.
    expect((await client.profiles.get(profile.id)).last_save_error).toBeNull();
    await t.close({ keepData: true });
    try {
      if (t.database === undefined) {
        const files = readdirSync(join(t.dataDir, "profiles"));
        expect(files).toHaveLength(1);
        expect(readFileSync(join(t.dataDir, "profiles", files[0]!)).includes(Buffer.from("carol-secret-marker"))).toBe(false);
      } else {
        const rows = await storedRows<{ sealed: Buffer }>(t, "SELECT sealed FROM profile_snapshots");
        expect(rows).toHaveLength(1);
        expect(rows[0]!.sealed.includes(Buffer.from("carol-secret-marker"))).toBe(false);
      }
    } finally {
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });
});

describe("a new secrets key", () => {
  it("seals profiles' saved state again, which the next browser loads", async () => {
    let t = await startTestServer();
    const dataDir = t.dataDir;
    try {
      const client = t.client();
      const profile = await client.profiles.create({ name: "rotated" });
      const browser = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
      await logIn(browser, "erin");
      await t.close({ keepData: true });
      const old = readFileSync(join(dataDir, "secrets.key"), "utf8").trim();
      const next = randomBytes(32).toString("hex");
      t = await startTestServer({ dataDir, secretsKey: next, previousSecretsKey: old });
      await t.close({ keepData: true });
      // The old key opens nothing any more; the new one opens the saved state.
      await expect(startTestServer({ dataDir })).rejects.toMatchObject({ code: "secrets_key_mismatch" });
      t = await startTestServer({ dataDir, secretsKey: next });
      const reader = await t.client().browsers.create({ profile: { id: profile.id } });
      expect(await stateIn(reader)).toEqual(all("erin"));
    } finally {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("when a saving browser ends", () => {
  it("saves at its timeout and at the server's shutdown; a crash saves nothing and the profile keeps what it had", async () => {
    let now = 0;
    let t = await startTestServer({ browserTimeouts: { clock: () => now, sweepMs: 10 } });
    const dataDir = t.dataDir;
    try {
      const client = t.client();
      const profile = await client.profiles.create({ name: "ends" });
      // Its timeout: the server ends it as DELETE would, and saves.
      const timed = await client.browsers.create({ profile: { id: profile.id, save_changes: true }, timeout_seconds: 10 });
      await logIn(timed, "timeout");
      now += 11_000;
      await expect.poll(async () => (await client.browsers.list()).some((each) => each.id === timed.id)).toBe(false);
      await expect.poll(async () => (await client.profiles.get(profile.id)).size_bytes).toBeGreaterThan(0);
      // A crash: its process killed from outside. The record says crashed, the profile is as it was.
      const saved = await client.profiles.get(profile.id);
      const crashing = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
      await logIn(crashing, "crash");
      // The only browser running: the one sandbox this process started.
      const sandboxes = childProcessesNamed("bwrap");
      expect(sandboxes).toHaveLength(1);
      process.kill(-(sandboxes[0] ?? 0), "SIGKILL");
      await expect.poll(async () => (await client.browsers.get(crashing.id)).status).toBe("crashed");
      expect(await client.profiles.get(profile.id)).toEqual({ ...saved, last_used_at: crashing.created_at });
      // A crashed browser holds the profile no more: another may save into it.
      const last = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
      expect(await stateIn(last)).toEqual(all("timeout"));
      await logIn(last, "shutdown");
      await t.close({ keepData: true });
      t = await startTestServer({ dataDir });
      const after = await t.client().browsers.create({ profile: { id: profile.id } });
      expect(await stateIn(after)).toEqual(all("shutdown"));
    } finally {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("saves when a DevTools client closes the browser (Browser.close), as DELETE would", async () => {
    const t = await startTestServer();
    try {
      const client = t.client();
      const profile = await client.profiles.create({ name: "closed-by-client" });
      const browser = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
      await logIn(browser, "frank");
      const driver = await drive(browser.cdp_ws_url);
      driven.push(driver);
      const session = await driver.playwright.newBrowserCDPSession();
      await session.send("Browser.close");
      await expect.poll(async () => (await client.browsers.list()).some((each) => each.id === browser.id)).toBe(false);
      await expect.poll(async () => (await client.profiles.get(profile.id)).size_bytes).toBeGreaterThan(0);
      const reader = await client.browsers.create({ profile: { id: profile.id } });
      expect(await stateIn(reader)).toEqual(all("frank"));
    } finally {
      await t.close();
    }
  });

  it("refuses a profile whose saved state cannot be loaded with 422, starting nothing and keeping no slot", async () => {
    const t = await startTestServer();
    try {
      const client = t.client();
      const profile = await client.profiles.create({ name: "broken" });
      const browser = await client.browsers.create({ profile: { id: profile.id, save_changes: true } });
      await logIn(browser, "dave");
      await client.browsers.delete(browser.id);
      await t.close({ keepData: true });
      // Bytes changed at rest: they no longer open with the key.
      if (t.database === undefined) {
        const dir = join(t.dataDir, "profiles");
        const [file] = readdirSync(dir);
        const bytes = readFileSync(join(dir, file!));
        bytes[bytes.length - 1] = (bytes[bytes.length - 1] ?? 0) ^ 1;
        writeFileSync(join(dir, file!), bytes);
      } else {
        await storedRows(t, "UPDATE profile_snapshots SET sealed = sealed || '\\x00'::bytea");
      }
      const again = await startTestServer({ dataDir: t.dataDir });
      try {
        await expect(again.client().browsers.create({ profile: { id: profile.id } })).rejects.toMatchObject({ status: 422, code: "profile_load_failed" });
        expect((await again.client().limits.get()).concurrent_sessions_used).toBe(0);
        expect(await again.client().browsers.list()).toEqual([]);
      } finally {
        await again.close({ keepData: true });
      }
    } finally {
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });
});

describe("a saved state larger than a browser's profile holds", () => {
  it("is refused at start with 422 profile_load_failed: nothing runs, no slot is kept, the profile is unchanged", async () => {
    const MIB = 1024 * 1024;
    // Saved where a browser's profile holds 512 MiB (the default) and a profile's state 64 MiB.
    let t = await startTestServer();
    const dataDir = t.dataDir;
    try {
      let client = t.client();
      const bulky = await client.profiles.create({ name: "bulky" });
      const filling = await client.browsers.create({ profile: { id: bulky.id, save_changes: true } });
      await fillIndexedDb(filling, 40);
      await client.browsers.delete(filling.id);
      const slim = await client.profiles.create({ name: "slim" });
      const slimSaver = await client.browsers.create({ profile: { id: slim.id, save_changes: true } });
      await logIn(slimSaver, "ivan");
      await client.browsers.delete(slimSaver.id);
      const saved = await client.profiles.get(bulky.id);
      expect(saved.last_save_error).toBeNull();
      expect(saved.size_bytes).toBeGreaterThan(36 * MIB);
      await t.close({ keepData: true });

      // Now a browser's profile holds 32 MiB, and the project one browser at a time.
      t = await startTestServer({ dataDir, planLimit: 1, launcher: new ChromiumLauncher({ allowPrivateNetwork: true, profileBytes: 32 * MIB }) });
      client = t.client();
      for (const save_changes of [false, true]) {
        const refused = await client.browsers.create({ profile: { id: bulky.id, save_changes } }).catch((error: unknown) => error);
        expect(refused, `save_changes ${save_changes}`).toMatchObject({ status: 422, code: "profile_load_failed" });
        expect(await client.browsers.list()).toEqual([]);
        expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
        expect(childProcessesNamed("bwrap")).toEqual([]);
      }
      expect(await client.profiles.get(bulky.id)).toEqual(saved);
      // Its one slot is free, and a state that fits loads.
      const fits = await client.browsers.create({ profile: { id: slim.id } });
      expect(await stateIn(fits)).toEqual(all("ivan"));
      await client.browsers.delete(fits.id);
      // No refused saver holds the profile.
      await client.profiles.delete(bulky.id);
      expect(t.mismatches).toEqual([]);
    } finally {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("a server running browsers without their sandbox", () => {
  it("refuses to save into a profile with 503, since its state is read back only inside one", async () => {
    const t = await startTestServer({ unsafeNoSandbox: true });
    try {
      const profile = await t.client().profiles.create({ name: "needs-sandbox" });
      const refused = (await t
        .client()
        .browsers.create({ profile: { id: profile.id, save_changes: true } })
        .catch((error: unknown) => error)) as { status: number; code: string; message: string };
      expect(refused).toMatchObject({ status: 503, code: "browser_unavailable" });
      expect(refused.message).toMatch(/sandbox/);
      expect((await t.client().limits.get()).concurrent_sessions_used).toBe(0);
    } finally {
      await t.close();
    }
  });
});
