import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { Browser } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { storedRows } from "./support/stored-rows.js";
import { startTestServer, useTestServer } from "./support/test-server.js";
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
