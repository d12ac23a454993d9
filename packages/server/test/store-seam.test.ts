import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ManagedAuth, ManagedAuthTimelineEvent } from "@browser-service/types";
import Fastify, { type FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { initializeOrganization } from "../src/app/first-start.js";
import { loadFixtures } from "../src/app/load-fixtures.js";
import { openSqliteStores } from "../src/app/stores.js";
import type {
  AuthConnectionPage,
  AuthConnectionRow,
  AuthConnectionStore,
  StoredAuthConnection,
  TimelinePage,
} from "../src/auth-connections/auth-connection-store.js";
import { connectionAt } from "../src/auth-connections/flow-expiry.js";
import { BrowserLaunchError, type BrowserLauncher } from "../src/browsers/browser-launcher.js";
import { BrowserService } from "../src/browsers/browser-service.js";
import { BrowserUrls } from "../src/cdp/public-url.js";
import { CredentialSeals } from "../src/credentials/credential-seals.js";
import { NotFoundError } from "../src/http/api-errors.js";
import { installErrorHandling } from "../src/http/error-handler.js";
import { RateLimits } from "../src/http/rate-limiter.js";
import { LoginFlows } from "../src/managed-auth/login-flows.js";
import { ProfileStates } from "../src/profiles/profile-states.js";
import type { ProjectStore } from "../src/projects/project-store.js";
import type { Stores } from "../src/routes/api-deps.js";
import { registerApi } from "../src/routes/register-api.js";
import { SecretsVault } from "../src/secrets/secrets-vault.js";
import { dataDirLayout } from "../src/storage/data-dir.js";
import { SqliteDatabase } from "../src/storage/database.js";
import { WebMcpService } from "../src/webmcp/webmcp-service.js";
import { managedAuth } from "./support/fixtures.js";

// `Stores` is the seam a second database fills: the routes, the composition root and the
// fixtures loader see interfaces only, and a write across stores goes through
// `unitOfWork`. Here one store is an implementation with no SQLite in it, and the API is
// served through it; then a failing store inside a unit of work undoes the others' writes.

/** {@link AuthConnectionStore} in memory: the whole contract, no database. */
class MemoryAuthConnectionStore implements AuthConnectionStore {
  readonly #byId = new Map<string, AuthConnectionRow>();
  readonly #timelines = new Map<string, ManagedAuthTimelineEvent[]>();

  #mine(projectId: string, id: string): AuthConnectionRow | undefined {
    const row = this.#byId.get(id);
    return row?.projectId === projectId ? row : undefined;
  }

  async get(projectId: string, id: string, now = Date.now()): Promise<ManagedAuth> {
    const stored = this.#mine(projectId, id);
    if (stored === undefined) throw new NotFoundError(`No auth connection has the id "${id}" in this project.`);
    return connectionAt(stored.record, now);
  }

  async find(projectId: string, id: string): Promise<AuthConnectionRow | undefined> {
    return this.#mine(projectId, id);
  }

  async insert(row: AuthConnectionRow): Promise<void> {
    this.#byId.set(row.record.id, row);
  }

  async list(projectId: string, page: AuthConnectionPage): Promise<{ items: ManagedAuth[]; hasMore: boolean }> {
    const all = [...this.#byId.values()].filter((row) => row.projectId === projectId).map((row) => row.record);
    return { items: all.slice(page.offset, page.offset + page.limit), hasMore: all.length > page.offset + page.limit };
  }

  async update(projectId: string, id: string, change: (current: AuthConnectionRow) => AuthConnectionRow | undefined): Promise<AuthConnectionRow | undefined> {
    const current = this.#mine(projectId, id);
    const next = current === undefined ? undefined : change(current);
    if (next !== undefined) this.#byId.set(id, next);
    return next;
  }

  async delete(projectId: string, id: string): Promise<boolean> {
    return this.#mine(projectId, id) !== undefined && this.#byId.delete(id);
  }

  async due(now: number, limit: number): Promise<AuthConnectionRow[]> {
    return [...this.#byId.values()]
      .filter((row) => row.record.health_checks !== false && (row.internals.nextCheckAt ?? 0) <= now)
      .sort((a, b) => (a.internals.nextCheckAt ?? 0) - (b.internals.nextCheckAt ?? 0))
      .slice(0, limit);
  }

  async inProgress(): Promise<AuthConnectionRow[]> {
    return [...this.#byId.values()].filter((row) => row.record.flow_status === "IN_PROGRESS");
  }

  async putTimelineEvent(_projectId: string, connectionId: string, event: ManagedAuthTimelineEvent): Promise<void> {
    const events = (this.#timelines.get(connectionId) ?? []).filter((kept) => kept.id !== event.id);
    this.#timelines.set(connectionId, [...events, event]);
  }

  async timeline(_projectId: string, connectionId: string, page: TimelinePage): Promise<{ items: ManagedAuthTimelineEvent[]; hasMore: boolean }> {
    const all = [...(this.#timelines.get(connectionId) ?? [])].reverse();
    return { items: all.slice(page.offset, page.offset + page.limit), hasMore: all.length > page.offset + page.limit };
  }

  async replaceAll(connections: StoredAuthConnection[]): Promise<void> {
    this.#byId.clear();
    for (const connection of connections) this.#byId.set(connection.record.id, { ...connection, internals: {} });
  }
}

interface Opened {
  stores: Stores;
  dir: string;
  app?: FastifyInstance;
  closed?: boolean;
}
const opened: Opened[] = [];

async function closeOpened(entry: Opened): Promise<void> {
  if (entry.closed) return;
  entry.closed = true;
  await entry.app?.close();
  await entry.stores.close();
}

afterEach(async () => {
  for (const entry of opened.splice(0)) {
    await closeOpened(entry);
    rmSync(entry.dir, { recursive: true, force: true });
  }
});

/** The SQLite store set of a fresh data directory, first start done. */
function sqliteStores() {
  const dir = mkdtempSync(join(tmpdir(), "browser-service-seam-"));
  const stores = openSqliteStores(dataDirLayout(dir));
  const entry: Opened = { stores, dir };
  opened.push(entry);
  return { stores, dir, entry };
}

const refusingLauncher: BrowserLauncher = {
  launch: () => Promise.reject(new BrowserLaunchError("No browser in this test.")),
};

/** The API's routes over `stores`, answered through `inject` (no socket). */
async function apiOver(stores: Stores): Promise<FastifyInstance> {
  const app = Fastify();
  installErrorHandling(app);
  const webmcp = new WebMcpService(app.log);
  const { vault } = await SecretsVault.open(stores.credentials, randomBytes(32), { source: "a test key", resealAll: async () => 0 });
  const profileStates = new ProfileStates(stores.profiles, vault, 1024 * 1024);
  const browsers = new BrowserService(stores.browsers, refusingLauncher, 10, app.log, webmcp);
  const loginFlows = new LoginFlows({
    connections: stores.authConnections,
    browsers,
    credentials: stores.credentials,
    seals: new CredentialSeals(vault),
    profiles: stores.profiles,
    profileStates,
    log: app.log,
    flowSeconds: 600,
  });
  await registerApi(app, {
    stores,
    vault,
    profileStates,
    loginFlows,
    browsers,
    webmcp,
    browserUrls: new BrowserUrls(undefined, () => "127.0.0.1"),
    rateLimits: new RateLimits({ perKey: { rate: 0, burst: 1 }, authFailuresPerAddress: { rate: 0, burst: 1 } }),
    planLimit: 10,
    projectsDisabled: false,
    cluster: undefined,
  });
  await app.ready();
  return app;
}

describe("the store seam", () => {
  it("serves the API through a store with no SQLite behind it, and SQLite holds none of its data", async () => {
    const { stores: sqlite, dir, entry } = sqliteStores();
    const memory = new MemoryAuthConnectionStore();
    const stores: Stores = { ...sqlite, authConnections: memory };
    const first = (await initializeOrganization(stores))!;
    const loaded = await loadFixtures(stores, first.org.id, {
      authConnections: [
        { project: "Default", record: managedAuth("conn_here") as ManagedAuth },
        { project: "elsewhere", record: managedAuth("conn_there") as ManagedAuth },
      ],
      poolReservations: [],
    });
    expect(loaded).toEqual(["elsewhere"]);
    const app = (entry.app = await apiOver(stores));
    const headers = { authorization: `Bearer ${first.key.secret}` };

    const here = await app.inject({ method: "GET", url: "/auth/connections/conn_here", headers });
    expect(here.statusCode).toBe(200);
    expect(here.json()).toEqual(managedAuth("conn_here"));
    // The double's own project check answers through the API's error handling.
    const there = await app.inject({ method: "GET", url: "/auth/connections/conn_there", headers });
    expect(there.statusCode).toBe(404);
    expect(there.json()).toMatchObject({ code: "not_found", message: 'No auth connection has the id "conn_there" in this project.' });

    // Every other store is SQLite's, and its table of connections stayed empty. (The
    // server holds its database exclusively, so it is read once the stores are closed.)
    await closeOpened(entry);
    const db = SqliteDatabase.open(dataDirLayout(dir).databaseFile);
    try {
      expect(db.get<{ n: number }>("SELECT count(*) AS n FROM auth_connections")?.n).toBe(0);
      expect(db.get<{ n: number }>("SELECT count(*) AS n FROM projects WHERE name = 'elsewhere'")?.n).toBe(1);
    } finally {
      db.close();
    }
  });

  it("undoes every store's writes of a unit of work when one store fails in it", async () => {
    const { stores: sqlite } = sqliteStores();
    const diskFull = new Error("disk full");
    // The SQLite project store, except that inserting fails: after the organization's insert.
    const projects = new Proxy(sqlite.projects, {
      get: (target, key) => (key === "insert" ? () => Promise.reject(diskFull) : (Reflect.get(target, key) as (...args: unknown[]) => unknown).bind(target)),
    }) satisfies ProjectStore;
    const stores: Stores = { ...sqlite, projects };
    await expect(initializeOrganization(stores)).rejects.toThrow(diskFull);
    expect(await sqlite.organizations.find()).toBeUndefined();
    // Nothing half-done blocks the next start.
    const first = await initializeOrganization(sqlite);
    expect((await sqlite.organizations.find())?.id).toBe(first?.org.id);
    expect((await sqlite.projects.findByName(first!.org.id, "Default"))?.id).toBe(first?.project.id);
  });

  it("refuses to nest units of work, so a store cannot commit half of its caller's work", async () => {
    const { stores } = sqliteStores();
    await expect(stores.unitOfWork(() => stores.unitOfWork(async () => 1))).rejects.toThrow(expect.objectContaining({ code: "storage_misuse" }));
  });

  it("keeps a call from outside an open unit of work out of its transaction: it waits, and survives the unit's rollback", async () => {
    const { stores } = sqliteStores();
    const first = (await initializeOrganization(stores))!;
    const orgId = first.org.id;
    let resume!: () => void;
    const paused = new Promise<void>((resolve) => (resume = resolve));
    const failure = new Error("the unit fails after its first write");
    const unit = stores.unitOfWork(async () => {
      await stores.projects.insert(orgId, "inside");
      // Another request runs while this unit awaits something else.
      await paused;
      throw failure;
    });
    // Give the unit its first write, then write from outside it.
    await new Promise((resolve) => setImmediate(resolve));
    let outsideDone = false;
    const outside = stores.projects.create(orgId, "outside").then((row) => {
      outsideDone = true;
      return row;
    });
    await new Promise((resolve) => setImmediate(resolve));
    // Had it run now, it would have joined the unit's transaction and been rolled back with it.
    expect(outsideDone).toBe(false);
    resume();
    await expect(unit).rejects.toThrow(failure);
    expect((await outside).name).toBe("outside");
    expect(await stores.projects.findByName(orgId, "inside")).toBeUndefined();
    expect((await stores.projects.findByName(orgId, "outside"))?.name).toBe("outside");
  });
});
