import { createClient } from "@browser-service/client";
import Fastify from "fastify";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { ChromiumLauncher } from "../src/browsers/chromium-launcher.js";
import { installErrorHandling } from "../src/http/error-handler.js";
import { registerHealthRoutes } from "../src/routes/health-routes.js";
import { spawnServer } from "./support/child-server.js";
import { freshDatabase } from "./support/postgres.js";
import { startTestServer, tempDataDir, useTestServer } from "./support/test-server.js";
import { TrackingLauncher } from "./support/tracking-launcher.js";

// The probes a load balancer or Kubernetes sends: no credential, tiny bodies, and a
// readiness that says no, with each reason, while the server should get no new browsers.

const probe = async (url: string, path: "/healthz" | "/readyz", headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}${path}`, { headers });
  return { status: response.status, body: (await response.json()) as { status?: string; code?: string; message?: string } };
};

describe("the health probes", () => {
  const t = useTestServer();

  it("answer without a credential, ignore a wrong one, and say ok and ready on a well server", async () => {
    expect(await probe(t.url, "/healthz")).toEqual({ status: 200, body: { status: "ok" } });
    expect(await probe(t.url, "/readyz")).toEqual({ status: 200, body: { status: "ready" } });
    // A probe is no login attempt: a garbage key neither fails it nor counts against the address.
    for (let i = 0; i < 30; i++) expect((await probe(t.url, "/healthz", { authorization: "Bearer nope" })).status).toBe(200);
    expect((await t.client().limits.get()).concurrent_sessions_used).toBe(0);
    // Through this project's client too, whose key the probes do not read.
    const bare = createClient({ baseUrl: t.url, apiKey: "bsk_not_a_key", projectId: null, maxRetries: 0 });
    expect(await bare.health.live()).toEqual({ status: "ok" });
    expect(await bare.health.ready()).toEqual({ status: "ready" });
  });

  it("say not ready, naming why without the host's details, while browsers cannot start or the host's memory is below its floor", async () => {
    let available = 300 * 1024 * 1024;
    const server = await startTestServer({
      launcher: new ChromiumLauncher({ executablePath: "/nonexistent/chromium" }),
      minFreeMemoryMib: 512,
      availableMemory: () => available,
    });
    try {
      const down = await probe(server.url, "/readyz");
      expect(down.status).toBe(503);
      expect(down.body.code).toBe("not_ready");
      expect(down.body.message).toContain("browsers cannot start on this host");
      expect(down.body.message).toContain("the host's available memory is below the floor");
      // Told to anyone without a credential: not the executable's path, nor the host's memory.
      expect(down.body.message).not.toMatch(/nonexistent|chromium|MiB|\d{3}/i);
      // Alive all the same: a restart would not help.
      expect((await probe(server.url, "/healthz")).status).toBe(200);
    } finally {
      await server.close();
    }
    const fake = await startTestServer({ launcher: new TrackingLauncher(), minFreeMemoryMib: 512, availableMemory: () => available });
    try {
      expect((await probe(fake.url, "/readyz")).body.message).not.toContain("Chromium");
      available = 2 * 1024 ** 3;
      expect(await probe(fake.url, "/readyz")).toEqual({ status: 200, body: { status: "ready" } });
    } finally {
      await fake.close();
    }
  });

  it("share one database read among the probes that arrive together: a flood without a key costs one read at a time", async () => {
    const app = Fastify();
    let reads = 0;
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    registerHealthRoutes(app, {
      draining: () => false,
      readDatabase: async () => {
        reads++;
        await held;
      },
      browsersUnavailable: async () => undefined,
      memoryLow: () => undefined,
    });
    const answers = Array.from({ length: 50 }, () => app.inject({ method: "GET", url: "/readyz" }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    release();
    expect((await Promise.all(answers)).map((answer) => answer.statusCode)).toEqual(new Array(50).fill(200));
    expect(reads).toBe(1);
    // The next probe reads again: nothing is kept past the answer.
    expect((await app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(200);
    expect(reads).toBe(2);
    await app.close();
  });

  it("log the host's details of each reason once each time they change, and tell the caller only what kind it is", async () => {
    const lines: string[] = [];
    const app = Fastify({ logger: { level: "info", stream: { write: (line: string) => lines.push(line) } } });
    installErrorHandling(app);
    let memory: string | undefined = "the host has 402 MiB of memory available, below the 512 MiB it keeps";
    registerHealthRoutes(app, {
      draining: () => false,
      readDatabase: async () => undefined,
      browsersUnavailable: async () => "Chromium at /opt/secret-path/chromium does not exist",
      memoryLow: () => memory,
    });
    const messages = [];
    for (let i = 0; i < 3; i++) messages.push((await app.inject({ method: "GET", url: "/readyz" })).json().message);
    expect(new Set(messages)).toEqual(
      new Set(["Not ready: browsers cannot start on this host (the server's log says why); the host's available memory is below the floor the server keeps."]),
    );
    const notReady = lines.filter((line) => line.includes("not ready for new browsers"));
    expect(notReady).toHaveLength(1);
    expect(notReady[0]).toContain("/opt/secret-path/chromium");
    expect(notReady[0]).toContain("402 MiB");
    memory = undefined;
    await app.inject({ method: "GET", url: "/readyz" });
    await app.inject({ method: "GET", url: "/readyz" });
    expect(lines.filter((line) => line.includes("not ready for new browsers"))).toHaveLength(2);
    // Each refusal itself is not logged as a fault of the server.
    expect(lines.filter((line) => /"level":50/.test(line))).toEqual([]);
    await app.close();
  });

  it("say not ready while the database does not answer, and ready again once it does", async () => {
    const database = await freshDatabase();
    const server = await spawnServer(tempDataDir(), ["--database", database, "--warm-browsers", "0"]);
    const name = new URL(database).pathname.slice(1);
    const admin = new pg.Client({ connectionString: database.replace(`/${name}?`, "/postgres?") });
    await admin.connect();
    try {
      expect((await probe(server.url, "/readyz")).status).toBe(200);
      // The database refuses every new connection and ends the server's.
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1", [name]);
      const down = await probe(server.url, "/readyz");
      expect(down.status).toBe(503);
      expect(down.body.message).toMatch(/the database (does not answer|did not answer within 2 s)/);
      expect((await probe(server.url, "/healthz")).status).toBe(200);
      await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
      let again = await probe(server.url, "/readyz");
      for (let tries = 0; again.status !== 200 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        again = await probe(server.url, "/readyz");
      }
      expect(again).toEqual({ status: 200, body: { status: "ready" } });
    } finally {
      await admin.end();
      await server.stop();
    }
  });
});
