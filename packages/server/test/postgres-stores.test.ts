import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterEach, describe, expect, inject, it } from "vitest";
// @ts-expect-error -- a plain ES module of the repository's tools, without type declarations.
import { startPostgresCluster } from "../../../tools/repo/postgres-cluster.mjs";
import { initializeOrganization } from "../src/app/first-start.js";
import { openPgStores } from "../src/app/stores.js";
import { createServer, type LaunchedBrowser, type LaunchOptions } from "../src/index.js";
import type { Stores } from "../src/routes/api-deps.js";
import { dataDirLayout, newUploadPath } from "../src/storage/data-dir.js";
import { markingExtension } from "./support/extension-zips.js";
import { freshDatabase } from "./support/postgres.js";
import { storedRows } from "./support/stored-rows.js";
import { processExists, TrackingLauncher } from "./support/tracking-launcher.js";

// What only a database shared by several servers (nodes) can show: each `openPgStores`
// here is one node, with its own data directory, on one database.

/** Real Chromium, with a hook a test sets to act between a browser's launch and its record as running. */
class HookedLauncher extends TrackingLauncher {
  afterLaunch: (() => Promise<void>) | undefined;

  override async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
    const browser = await super.launch(options);
    const hook = this.afterLaunch;
    this.afterLaunch = undefined;
    await hook?.();
    return browser;
  }
}

const opened: { stores: Stores; dir: string }[] = [];
afterEach(async () => {
  for (const { stores, dir } of opened.splice(0)) {
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

async function node(databaseUrl: string, nodeId: string, options: { idleInTransactionMs?: number } = {}): Promise<Stores> {
  const dir = mkdtempSync(join(tmpdir(), "browser-service-pg-node-"));
  const stores = await openPgStores(dataDirLayout(dir), { databaseUrl, nodeId, ...options });
  opened.push({ stores, dir });
  return stores;
}

describe("servers sharing one PostgreSQL database", () => {
  it("migrate it once and create one organization when they start together", async () => {
    const url = await freshDatabase();
    const nodes = await Promise.all(["a", "b", "c"].map((id) => node(url, id)));
    const starts = await Promise.all(nodes.map((stores) => initializeOrganization(stores)));
    expect(starts.filter((start) => start !== undefined)).toHaveLength(1);
    const orgs = await Promise.all(nodes.map((stores) => stores.organizations.find()));
    expect(new Set(orgs.map((org) => org?.id)).size).toBe(1);
  });

  it("give exactly the project cap's slots to creates split over two servers", async () => {
    const url = await freshDatabase();
    const [a, b] = [await node(url, "a"), await node(url, "b")];
    const first = await initializeOrganization(a as Stores);
    if (first === undefined) throw new Error("no first start");
    await a?.projects.setCap(first.project, 5);
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) =>
        (i % 2 === 0 ? a : b)?.browsers.reserve({ orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 100, timeoutSeconds: 60 }),
      ),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(5);
    expect(results.filter((result) => result.status === "rejected").map((result) => (result as PromiseRejectedResult).reason.code)).toEqual(
      Array(15).fill("concurrency_limit_exceeded"),
    );
  });

  it("clean up after their own unclean exit only, never another server's browsers", async () => {
    const url = await freshDatabase();
    const [a, b] = [await node(url, "a"), await node(url, "b")];
    const first = await initializeOrganization(a as Stores);
    if (first === undefined) throw new Error("no first start");
    const reservation = { orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 10, timeoutSeconds: 60 };
    const ofA = await a?.browsers.reserve(reservation);
    const ofB = await b?.browsers.reserve(reservation);
    expect((await a?.browsers.recoverAbandoned())?.map((row) => row.id)).toEqual([ofA?.id]);
    expect(await b?.usage.project(first.project.id)).toBe(1);
    expect((await b?.browsers.recoverAbandoned())?.map((row) => row.id)).toEqual([ofB?.id]);
  });

  it("end a lapsed lease at its node's late renewal, even before another node reaps it: its browsers are crashed, not revived", async () => {
    const url = await freshDatabase();
    const [a, b] = [await node(url, "a"), await node(url, "b")];
    const first = await initializeOrganization(a as Stores);
    if (first === undefined || a?.nodes === undefined || b?.nodes === undefined) throw new Error("no first start");
    const lease = { nodeId: "a", instance: "a-1", advertiseUrl: null, warmReady: 0, draining: false, ttlMs: 60_000 };
    expect(await a.nodes.renew(lease)).toMatchObject({ taken: true, rejoined: true });
    const reserved = await a.browsers.reserve({ orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 10, timeoutSeconds: 60 });
    await a.browsers.markRunning(reserved.id, { pid: 4_000_000, userDataDir: "/nonexistent/profile-a", sandboxed: false }, "0".repeat(64));
    // Renewed in time: the same lease, the browser untouched.
    expect(await a.nodes.renew(lease)).toMatchObject({ taken: true, rejoined: false });
    expect((await a.browsers.getByIdOrName(first.project.id, reserved.id)).status).toBe("running");
    // a's lease lapses (a froze, say); a's renewal reaches the database before b reaps.
    await storedRows({ dataDir: "", database: url }, "UPDATE nodes SET lease_expires_at = now() - interval '1 second' WHERE node_id = 'a'");
    const late = await a.nodes.renew(lease);
    if (!late.taken) throw new Error("the lease was not taken");
    expect(late.rejoined).toBe(true);
    expect(late.live.map((each) => each.nodeId)).toEqual(["a"]);
    expect((await a.browsers.getByIdOrName(first.project.id, reserved.id)).status).toBe("crashed");
    expect(await b.usage.project(first.project.id)).toBe(0);
    expect(await b.nodes.reapLapsed()).toEqual([]);
  });

  it("refuse a create placed on a node under a lease that is over, even once the node took a new one", async () => {
    const url = await freshDatabase();
    const a = await node(url, "a");
    const first = await initializeOrganization(a);
    if (first === undefined || a.nodes === undefined) throw new Error("no first start");
    const lease = { nodeId: "a", instance: "one", advertiseUrl: null, warmReady: 0, draining: false, ttlMs: 60_000 };
    const leaseOf = async () => {
      const renewal = await a.nodes?.renew(lease);
      if (renewal?.taken !== true) throw new Error("the lease was not taken");
      return renewal.live.find((each) => each.nodeId === "a")?.leaseId as string;
    };
    const placed = await leaseOf();
    const reservation = { orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 10, timeoutSeconds: 60 };
    await a.browsers.remove((await a.browsers.reserve({ ...reservation, placedUnder: placed })).id);
    // a froze past its lease: the node that placed the create starts the browser itself.
    await storedRows({ dataDir: "", database: url }, "UPDATE nodes SET lease_expires_at = now() - interval '1 second' WHERE node_id = 'a'");
    await expect(a.browsers.reserve({ ...reservation, placedUnder: placed })).rejects.toMatchObject({ status: 503, code: "browser_unavailable" });
    // a goes on and takes a new lease before the create waiting in its socket reaches the database.
    const renewed = await leaseOf();
    expect(renewed).not.toBe(placed);
    await expect(a.browsers.reserve({ ...reservation, placedUnder: placed })).rejects.toMatchObject({ status: 503, code: "browser_unavailable" });
    expect(await a.usage.project(first.project.id)).toBe(0);
    // A create placed under the new lease, and one a takes itself, go on as ever.
    await a.browsers.reserve({ ...reservation, placedUnder: renewed });
    await a.browsers.reserve(reservation);
    expect(await a.usage.project(first.project.id)).toBe(2);
  });

  it("give a node id's lease to one process at a time: a second is refused while the first renews, and takes over once it lapses", async () => {
    const url = await freshDatabase();
    const [first, second] = [await node(url, "a"), await node(url, "b")];
    if (first.nodes === undefined || second.nodes === undefined) throw new Error("no node store");
    const lease = { nodeId: "a", advertiseUrl: null, warmReady: 0, draining: false, ttlMs: 60_000 };
    expect(await first.nodes.renew({ ...lease, instance: "one" })).toMatchObject({ taken: true, rejoined: true });
    const refused = await second.nodes.renew({ ...lease, instance: "two", advertiseUrl: "http://127.0.0.1:1" });
    expect(refused.taken).toBe(false);
    expect(refused.taken === false && refused.heldForMs > 50_000 && refused.heldForMs <= 60_000).toBe(true);
    expect(await second.nodes.heldElsewhere("a", "two")).toBeGreaterThan(50_000);
    expect(await first.nodes.heldElsewhere("a", "one")).toBeUndefined();
    expect(await first.nodes.heldElsewhere("b", "one")).toBeUndefined();
    // The refused process's clean stop leaves the other's lease, and its advertise URL, as they were.
    await second.nodes.leave("a", "two");
    const renewed = await first.nodes.renew({ ...lease, instance: "one" });
    expect(renewed).toMatchObject({ taken: true, rejoined: false, live: [{ nodeId: "a", advertiseUrl: null }] });
    // Once the first's lease lapses (it was killed), the second takes the node id.
    await first.nodes.renew({ ...lease, instance: "one", ttlMs: 1 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await second.nodes.renew({ ...lease, instance: "two" })).toMatchObject({ taken: true, rejoined: true });
    expect(await first.nodes.renew({ ...lease, instance: "one" })).toMatchObject({ taken: false });
  });

  it("free the locks of a server stalled inside a transaction past its bound, so that the others do not wait on it", async () => {
    const url = await freshDatabase();
    const stalled = await node(url, "a", { idleInTransactionMs: 1_000 });
    const other = await node(url, "b");
    let resume: () => void = () => undefined;
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    let inside: () => void = () => undefined;
    const entered = new Promise<void>((resolve) => {
      inside = resolve;
    });
    // a takes the lock every unit of work takes, then stops (a paused VM, a frozen process).
    const outcome = stalled
      .unitOfWork(async () => {
        await stalled.organizations.find();
        inside();
        await resumed;
      })
      .then(
        () => "committed",
        (error: unknown) => error,
      );
    await entered;
    // b's unit of work gets the lock once the database ends a's session; with the default
    // bound (60 s) b's statement would time out first (30 s), and this would reject.
    await expect(other.unitOfWork(async () => other.organizations.find())).resolves.toBeUndefined();
    resume();
    // a's work was rolled back: its commit finds its session gone, and says the database did not answer.
    expect(await outcome).toMatchObject({ code: "storage_unavailable" });
  });

  it("hand a restarted node the browsers another node reaped while it was away, once, so it ends what they left on its host", async () => {
    const url = await freshDatabase();
    const [a, b] = [await node(url, "a"), await node(url, "b")];
    const first = await initializeOrganization(a as Stores);
    if (first === undefined || a?.nodes === undefined || b?.nodes === undefined) throw new Error("no first start");
    await a.nodes.renew({ nodeId: "a", instance: "a-1", advertiseUrl: null, warmReady: 0, draining: false, ttlMs: 1 });
    const reserved = await a.browsers.reserve({ orgId: first.org.id, projectId: first.project.id, name: undefined, planLimit: 10, timeoutSeconds: 60 });
    await a.browsers.markRunning(reserved.id, { pid: 4_000_000, userDataDir: "/nonexistent/profile-a", sandboxed: false }, "0".repeat(64));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await b.nodes.reapLapsed()).toEqual([{ nodeId: "a", crashed: 1 }]);
    // b knows nothing of a's host, and never touches what another server started.
    expect(await b.browsers.recoverAbandoned()).toEqual([]);
    const recovered = await a.browsers.recoverAbandoned();
    expect(recovered.map((row) => [row.id, row.pid, row.user_data_dir])).toEqual([[reserved.id, 4_000_000, "/nonexistent/profile-a"]]);
    expect(await a.browsers.recoverAbandoned()).toEqual([]);
    expect((await a.browsers.getByIdOrName(first.project.id, reserved.id)).status).toBe("crashed");
  });

  it("read an extension uploaded through another server from the database, and refuse an archive that no longer matches its checksum", async () => {
    const url = await freshDatabase();
    const [a, b] = [await node(url, "a"), await node(url, "b")];
    const first = await initializeOrganization(a as Stores);
    if (first === undefined || a === undefined || b === undefined) throw new Error("no first start");
    const archive = markingExtension("shared");
    const upload = (name: string) => {
      const tempPath = newUploadPath(a.layout.uploadsDir);
      writeFileSync(tempPath, archive);
      return { projectId: first.project.id, name, tempPath, sizeBytes: archive.length, checksum: createHash("sha256").update(archive).digest("hex") };
    };
    const stored = await a.extensions.insert(upload("shared"));
    const onB = await b.extensions.archivePath(stored.id);
    expect(onB.startsWith(b.layout.extensionsDir)).toBe(true);
    expect(readFileSync(onB).equals(archive)).toBe(true);

    const tampered = await a.extensions.insert(upload("tampered"));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      await client.query("UPDATE extension_archives SET archive = $1 WHERE extension_id = $2", [Buffer.from("not the upload"), tampered.id]);
    } finally {
      await client.end();
    }
    await expect(b.extensions.archivePath(tampered.id)).rejects.toMatchObject({ code: "archive_checksum_mismatch" });
  });

  it("keep serving after the database ends an idle connection", async () => {
    const url = await freshDatabase();
    const a = await node(url, "a");
    const first = await initializeOrganization(a);
    if (first === undefined) throw new Error("no first start");
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const ended = await client.query(
        "SELECT count(*)::int AS n FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()) t",
      );
      expect(ended.rows[0].n).toBeGreaterThan(0);
    } finally {
      await client.end();
    }
    expect(await a.apiKeys.authenticate(first.key.secret)).toMatchObject({ orgId: first.org.id });
  });
});

describe("a server on PostgreSQL", () => {
  it("matches a list's query as SQLite does, whatever the database's locale: the Kelvin sign is no k", async () => {
    const postgres = inject("postgres");
    if ("unavailable" in postgres) throw new Error(`This test needs PostgreSQL: ${postgres.unavailable}`);
    const name = `t_locale_${Date.now()}`;
    const admin = new pg.Client({ connectionString: postgres.adminUrl });
    await admin.connect();
    try {
      // A locale that folds beyond ASCII: its lower() of "K" (U+212A) is "k".
      await admin.query(`CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.utf8'`);
    } finally {
      await admin.end();
    }
    const stores = await node(postgres.adminUrl.replace(/\/postgres\?/, `/${name}?`), "a");
    const first = await initializeOrganization(stores);
    const projectId = first?.project.id as string;
    const now = new Date().toISOString();
    for (const profileName of ["k", "Kilo", "İstanbul"]) {
      await stores.profiles.insert(projectId, {
        id: `profile_${profileName.length}${profileName.charCodeAt(0)}`,
        name: profileName,
        created_at: now,
        updated_at: now,
        last_used_at: null,
        size_bytes: 0,
        last_save_error: null,
      });
    }
    const names = async (query: string) => (await stores.profiles.list(projectId, { offset: 0, limit: 10, query })).items.map((profile) => profile.name);
    expect(await names("\u212a")).toEqual([]);
    expect(await names("K")).toEqual(["k", "Kilo"]);
    expect(await names("i\u0307")).toEqual([]);
  });

  it("refuses a database it cannot reach with storage_unavailable, leaving its data directory free", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "browser-service-pg-down-"));
    try {
      const unreachable = "postgres://nobody@localhost/none?host=/nonexistent-socket-dir";
      await expect(createServer({ dataDir, database: unreachable, warmBrowsers: 0 })).rejects.toMatchObject({ code: "storage_unavailable" });
      const server = await createServer({ dataDir, warmBrowsers: 0 });
      await server.close();
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("answers with the Error body and a plain reason while its database is gone, survives it, and ends its browsers once its lease lapses", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "browser-service-pg-gone-"));
    const cluster = await startPostgresCluster();
    let server: Awaited<ReturnType<typeof createServer>> | undefined;
    try {
      const launcher = new TrackingLauncher();
      server = await createServer({ dataDir, database: cluster.url(), warmBrowsers: 0, launcher, cluster: { leaseTtlMs: 2_000 } });
      const key = server.firstStart?.key.secret as string;
      const ask = () => server?.app.inject({ method: "GET", url: "/org/projects", headers: { authorization: `Bearer ${key}` } });
      expect((await ask())?.statusCode).toBe(200);
      const created = await server.app.inject({ method: "POST", url: "/browsers", headers: { authorization: `Bearer ${key}` } });
      expect(created.statusCode).toBe(201);
      const pid = launcher.latest().pid as number;
      await cluster.stop();
      // The other nodes count it crashed once its lease lapses: its process must not outlive that.
      await expect.poll(() => processExists(pid), { timeout: 30_000 }).toBe(false);
      const answer = await ask();
      expect(answer?.statusCode).toBe(500);
      expect(answer?.json()).toEqual({ code: "internal_error", message: "The service's database is not answering; retry in a moment." });
    } finally {
      // Its lease cannot be given up with the database gone: close says so, and still closes.
      if (server !== undefined) await expect(server.close()).rejects.toMatchObject({ code: "storage_unavailable" });
      await cluster.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("ends a browser whose reservation another node dropped while it started: 503, no process, no profile, no slot taken", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "browser-service-pg-dropped-"));
    const database = await freshDatabase();
    const launcher = new HookedLauncher();
    const server = await createServer({ dataDir, database, warmBrowsers: 0, launcher });
    try {
      const headers = { authorization: `Bearer ${server.firstStart?.key.secret}` };
      const limited = await server.app.inject({
        method: "PATCH",
        url: `/org/projects/${server.firstStart?.project.id}/limits`,
        headers,
        payload: { max_concurrent_sessions: 1 },
      });
      expect(limited.statusCode).toBe(200);
      // What a node that froze past its lease finds when it goes on: another node reaped it,
      // deleting its reservations, while it was launching.
      launcher.afterLaunch = async () => {
        await storedRows({ dataDir: "", database }, "DELETE FROM browsers WHERE status = 'starting'");
      };
      const refused = await server.app.inject({ method: "POST", url: "/browsers", headers, payload: { name: "orphan" } });
      expect(refused.statusCode).toBe(503);
      expect(refused.json()).toMatchObject({ code: "browser_unavailable" });
      const launched = launcher.latest();
      expect(processExists(launched.pid as number)).toBe(false);
      expect(existsSync(launched.userDataDir as string)).toBe(false);
      expect((await server.app.inject({ method: "GET", url: "/browsers", headers })).json()).toEqual([]);
      // Nothing runs that no row counts: the cap of 1 admits exactly one more.
      expect((await server.app.inject({ method: "POST", url: "/browsers", headers, payload: { name: "orphan" } })).statusCode).toBe(201);
      expect((await server.app.inject({ method: "POST", url: "/browsers", headers })).statusCode).toBe(429);
      expect(launcher.launched.filter((browser) => processExists(browser.pid as number))).toHaveLength(1);
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses to start under the node id of a running server, and leaves that server's browsers alone", async () => {
    const [firstDir, secondDir] = [mkdtempSync(join(tmpdir(), "browser-service-pg-id-")), mkdtempSync(join(tmpdir(), "browser-service-pg-id-"))];
    const database = await freshDatabase();
    const launcher = new TrackingLauncher();
    const cluster = { leaseTtlMs: 2_000 };
    // Nodes of one database share its secrets key.
    const secretsKey = "a".repeat(64);
    const running = await createServer({ dataDir: firstDir, database, nodeId: "same", warmBrowsers: 0, launcher, cluster, secretsKey });
    try {
      const headers = { authorization: `Bearer ${running.firstStart?.key.secret}` };
      const created = await running.app.inject({ method: "POST", url: "/browsers", headers });
      expect(created.statusCode).toBe(201);
      const pid = launcher.latest().pid as number;
      // The second waits out one lease length (the first might have just died), then sees it renewed.
      await expect(createServer({ dataDir: secondDir, database, nodeId: "same", warmBrowsers: 0, launcher, cluster, secretsKey })).rejects.toMatchObject({
        code: "node_id_in_use",
      });
      expect(processExists(pid)).toBe(true);
      const after = await running.app.inject({ method: "GET", url: `/browsers/${created.json().id}`, headers });
      expect(after.json()).toMatchObject({ status: "running" });
      // Its lease is the first's still: that one keeps its browsers past another renewal.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      expect(processExists(pid)).toBe(true);
      // The refused server let its data directory go.
      const other = await createServer({ dataDir: secondDir, database, nodeId: "other", warmBrowsers: 0, cluster, secretsKey });
      await other.close();
    } finally {
      await running.close();
      rmSync(firstDir, { recursive: true, force: true });
      rmSync(secondDir, { recursive: true, force: true });
    }
  });

  it("refuses a database that is not a PostgreSQL URL and a node id outside the rule before opening anything", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "browser-service-pg-bad-"));
    try {
      await expect(createServer({ dataDir, database: "mysql://db/x" })).rejects.toThrow(RangeError);
      await expect(createServer({ dataDir, nodeId: "has space" })).rejects.toThrow(/nodeId must be 1 to 64/);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
