import { once } from "node:events";
import { createClient } from "@browser-service/client";
import { describe, expect, it } from "vitest";
import { CdpRawClient } from "./support/cdp-raw-client.js";
import { type ChildServer, spawnServer } from "./support/child-server.js";
import { chromiumBrowserPids } from "./support/chromium-processes.js";
import { freePort } from "./support/free-port.js";
import { freshDatabase } from "./support/postgres.js";
import { storedRows } from "./support/stored-rows.js";
import { tempDataDir } from "./support/test-server.js";

// A server told to stop with SIGTERM drains first (--drain-seconds): not ready, no new
// browsers (another node takes them; a lone server refuses them with 503 node_draining and
// Retry-After), while its running browsers, their DevTools sessions and every other request
// go on until they end or the drain's time is up. It then ends what is left, saving
// profiles where asked, gives up its lease and exits 0. Each server here is a child
// process, signalled as an orchestrator signals it.

const clientOf = (server: ChildServer, key: string) => createClient({ baseUrl: server.url, apiKey: key, projectId: null, maxRetries: 0 });

const readiness = async (url: string) => {
  const response = await fetch(`${url}/readyz`);
  return { status: response.status, body: (await response.json()) as { code?: string; message?: string } };
};

/** A raw create, to read the status and headers the typed client turns into an error. */
const rawCreate = async (url: string, key: string) => {
  const response = await fetch(`${url}/browsers`, { method: "POST", headers: { authorization: `Bearer ${key}` } });
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: (await response.json()) as { code?: string; message?: string } };
};

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Sends SIGTERM and resolves once the server prints that it drains, with its exit to come (wrapped: an async function would wait for it). */
async function terminate(server: ChildServer): Promise<{ exited: Promise<[number | null, NodeJS.Signals | null]> }> {
  const exited = once(server.child, "exit") as Promise<[number | null, NodeJS.Signals | null]>;
  server.child.kill("SIGTERM");
  await expect.poll(() => server.stdout()).toMatch(/Draining: no new browsers/);
  return { exited };
}

describe("a lone server draining", () => {
  it("serves its browsers and their DevTools sessions, refuses new ones with Retry-After, and exits 0 once they end", async () => {
    const metricsPort = await freePort();
    const server = await spawnServer(tempDataDir(), ["--drain-seconds", "120", "--metrics-port", String(metricsPort)]);
    const key = server.printedKey as string;
    const drainingGauge = async () => /^browser_service_draining (\d)$/m.exec(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text())?.[1];
    expect(await drainingGauge()).toBe("0");
    const client = clientOf(server, key);
    const browser = await client.browsers.create();
    const connection = await client.authConnections.create({ domain: "draining.example", profile_name: "draining" });
    const pids = chromiumBrowserPids(server.child.pid);
    expect(pids.length).toBeGreaterThan(0);
    const devtools = await CdpRawClient.open(browser.cdp_ws_url);
    expect(await readiness(server.url)).toEqual({ status: 200, body: { status: "ready" } });

    const { exited } = await terminate(server);
    const ready = await readiness(server.url);
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ code: "not_ready", message: expect.stringContaining("draining") });
    expect(await drainingGauge()).toBe("1");
    const refused = await rawCreate(server.url, key);
    expect(refused).toMatchObject({ status: 503, retryAfter: "5", body: { code: "node_draining" } });
    // A login starts a browser too: refused alike.
    await expect(client.authConnections.login(connection.id)).rejects.toMatchObject({ status: 503, code: "node_draining" });
    // Refused before anything started: no slot is held for it.
    expect((await client.limits.get()).concurrent_sessions_used).toBe(1);
    // The running browser goes on: its DevTools session answers, its record reads running.
    const targets = await devtools.send("Target.getTargets");
    expect(targets.error).toBeUndefined();
    expect(targets.result?.targetInfos).toEqual(expect.arrayContaining([expect.objectContaining({ type: "page" })]));
    expect((await client.browsers.get(browser.id)).status).toBe("running");
    expect(server.child.exitCode).toBeNull();

    // Its owner ends it: nothing is left to wait for, and the server exits cleanly well before its 120 s.
    await client.browsers.delete(browser.id);
    expect(await exited).toEqual([0, null]);
    expect(server.stdout()).toContain("Drained: no browser is left running.");
    expect(pids.filter(alive)).toEqual([]);
    devtools.ws.terminate();
  });

  it("ends the browsers left when its time is up, saving their profiles, and is found ready on its next start", async () => {
    const dataDir = tempDataDir();
    let server = await spawnServer(dataDir, ["--drain-seconds", "2"]);
    const key = server.printedKey as string;
    let client = clientOf(server, key);
    const profile = await client.profiles.create({ name: "kept" });
    const browser = await client.browsers.create({ profile: { name: "kept", save_changes: true } });
    const pids = chromiumBrowserPids(server.child.pid);
    const devtools = await CdpRawClient.open(browser.cdp_ws_url);
    const { exited } = await terminate(server);
    // Within its 2 s the browser stays; then it is ended, its profile saved, and the server exits 0.
    expect((await devtools.send("Browser.getVersion")).result).toMatchObject({ product: expect.stringContaining("Chrome") });
    expect(await exited).toEqual([0, null]);
    expect(server.stdout()).toContain("Drain over with 1 browser still running.");
    expect(pids.filter(alive)).toEqual([]);
    // Its DevTools connection ended with it.
    await devtools.closed;

    server = await spawnServer(dataDir);
    client = clientOf(server, key);
    expect((await client.profiles.get(profile.id)).size_bytes).toBeGreaterThan(0);
    expect(await client.browsers.list()).toEqual([]);
    expect((await readiness(server.url)).status).toBe(200);
    expect(await server.stop()).toBe(0);
  });

  it("is cut short by a second signal (a burst counts as one), and SIGINT does not drain", async () => {
    let server = await spawnServer(tempDataDir(), ["--drain-seconds", "600"]);
    await clientOf(server, server.printedKey as string).browsers.create();
    const { exited } = await terminate(server);
    // A burst (a key held, an orchestrator's retries) is one signal: the drain goes on.
    server.child.kill("SIGTERM");
    server.child.kill("SIGINT");
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect(server.child.exitCode).toBeNull();
    expect(server.stdout()).not.toContain("ending the drain now");
    // A second signal, a second later, ends the drain; the server closes cleanly.
    server.child.kill("SIGTERM");
    expect(await exited).toEqual([0, null]);
    expect(server.stdout()).toContain("ending the drain now");

    server = await spawnServer(tempDataDir(), ["--drain-seconds", "600"]);
    await clientOf(server, server.printedKey as string).browsers.create();
    const interrupted = once(server.child, "exit");
    server.child.kill("SIGINT");
    expect(await interrupted).toEqual([0, null]);
    expect(server.stdout()).not.toContain("Draining");
  });
});

/** A node on `database`, reached by the others at its own address. */
async function node(database: string, id: string, extra: string[] = []): Promise<ChildServer> {
  const port = await freePort();
  return spawnServer(tempDataDir(), [
    ...["--database", database, "--node-id", id, "--port", String(port), "--advertise-url", `http://127.0.0.1:${port}`],
    ...["--node-secret", "a-secret-that-every-node-shares-0123456789", "--node-lease-sec", String(LEASE_SEC), "--rate-limit", "0"],
    ...["--secrets-key", "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7"],
    ...extra,
  ]);
}
const LEASE_SEC = 2;

describe("a node draining among others", () => {
  it("sends new creates to the other node, keeps its DevTools session, and leaves nothing running", async () => {
    const database = await freshDatabase();
    const a = await node(database, "a");
    const key = a.printedKey as string;
    const b = await node(database, "b", ["--drain-seconds", "120"]);
    const nodeOf = async (browserId: string) =>
      (await storedRows<{ node_id: string }>({ dataDir: "", database }, "SELECT node_id FROM browsers WHERE id = ?", [browserId]))[0]?.node_id;
    // b places a create on itself while it runs the fewest (a tie keeps it here).
    const onB = await clientOf(b, key).browsers.create();
    expect(await nodeOf(onB.id)).toBe("b");
    const pidsOfB = chromiumBrowserPids(b.child.pid);
    const devtools = await CdpRawClient.open(onB.cdp_ws_url);

    const { exited } = await terminate(b);
    expect((await readiness(b.url)).status).toBe(503);
    // The others read it draining from the table at their next renewal (every fifth of the lease).
    await expect
      .poll(async () => (await storedRows<{ draining: boolean }>({ dataDir: "", database }, "SELECT draining FROM nodes WHERE node_id = 'b'"))[0]?.draining)
      .toBe(true);
    await new Promise((resolve) => setTimeout(resolve, ((LEASE_SEC * 1000) / 5) * 3));
    // Through either node, every new browser starts on a, though a runs more browsers now.
    const created = [];
    for (const via of [a, b, a, b]) created.push(await clientOf(via, key).browsers.create());
    expect(await Promise.all(created.map((browser) => nodeOf(browser.id)))).toEqual(["a", "a", "a", "a"]);
    expect((await readiness(a.url)).status).toBe(200);
    // b's browser goes on meanwhile, through its DevTools session and through a.
    expect((await devtools.send("Target.getTargets")).error).toBeUndefined();
    expect((await clientOf(a, key).browsers.get(onB.id)).status).toBe("running");

    // Ended through a (b serves the delete): b has nothing left, gives up its lease and exits 0.
    await clientOf(a, key).browsers.delete(onB.id);
    expect(await exited).toEqual([0, null]);
    expect(pidsOfB.filter(alive)).toEqual([]);
    expect(await storedRows({ dataDir: "", database }, "SELECT node_id FROM nodes WHERE node_id = 'b'")).toEqual([]);
    expect(await storedRows({ dataDir: "", database }, "SELECT id FROM browsers WHERE node_id = 'b'")).toEqual([]);
    for (const browser of created) await clientOf(a, key).browsers.delete(browser.id);
    devtools.ws.terminate();
    expect(await a.stop()).toBe(0);
  });

  it("starts a create here when the node it chose turns out to drain, and sends it none after", async () => {
    const database = await freshDatabase();
    const b = await node(database, "b", ["--drain-seconds", "120"]);
    // a reads the table at its start (b in it) and then only every 12 s: it learns late that b drains.
    const a = await node(database, "a", ["--node-lease-sec", "60"]);
    const key = b.printedKey as string;
    const nodeOf = async (browserId: string) =>
      (await storedRows<{ node_id: string }>({ dataDir: "", database }, "SELECT node_id FROM browsers WHERE id = ?", [browserId]))[0]?.node_id;
    const first = await clientOf(a, key).browsers.create();
    expect(await nodeOf(first.id)).toBe("a");
    const onB = await clientOf(b, key).browsers.create();
    expect(await nodeOf(onB.id)).toBe("b");
    const { exited } = await terminate(b);
    // a places the next creates on b (it runs as many, and a knows no better): b declines, a starts them.
    const created = [];
    for (let i = 0; i < 3; i++) {
      const answer = await rawCreate(a.url, key);
      expect(answer.status).toBe(201);
      created.push(answer.body as { id: string });
    }
    expect(await Promise.all(created.map((browser) => nodeOf(browser.id)))).toEqual(["a", "a", "a"]);
    await clientOf(a, key).browsers.delete(onB.id);
    expect(await exited).toEqual([0, null]);
    for (const browser of [first, ...created]) await clientOf(a, key).browsers.delete(browser.id);
    expect(await a.stop()).toBe(0);
  });
});
