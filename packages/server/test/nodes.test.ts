import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { connect, createServer as createNetServer, type Socket } from "node:net";
import { createClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import { type LoginSites, startLoginSites } from "@browser-service/test-pages/login-sites";
import type { ManagedAuth, WebMcpTool } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { PeerAuth } from "../src/nodes/peer-auth.js";
import { PEER_CHANNEL_PATH } from "../src/nodes/peer-calls.js";
import { PeerChannel } from "../src/nodes/peer-channel.js";
import { type ChildServer, SERVER_BIN, spawnServer } from "./support/child-server.js";
import { chromiumBrowserPids } from "./support/chromium-processes.js";
import { followEvents } from "./support/event-stream.js";
import { freePort } from "./support/free-port.js";
import { freshDatabase } from "./support/postgres.js";
import { storedRows } from "./support/stored-rows.js";
import { tempDataDir } from "./support/test-server.js";
import { drive, waitForTools } from "./support/webmcp-driver.js";

// Several servers (nodes) on one PostgreSQL database, each a child process as an operator
// runs it, with a short lease (2 s) so that a killed node is noticed quickly. The child
// servers are stopped after each test (child-server.ts), so each test starts the nodes it
// needs again, on the same data directories and ports.

const TOOLS_PAGE = `<!doctype html><title>Tools page</title><p>tools</p>
<script>
  document.modelContext.registerTool({
    name: "add", description: "Adds two numbers.",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    execute: async ({ a, b }) => ({ sum: a + b }),
  });
  document.modelContext.registerTool({ name: "hang", description: "Never finishes.", execute: () => new Promise(() => {}) });
  document.modelContext.registerTool({
    name: "watch", description: "Never finishes; says when it starts and when it is cancelled.",
    execute: (input, client) => {
      fetch("/runs/watch-started", { method: "POST" });
      client?.signal?.addEventListener("abort", () => fetch("/runs/watch-cancelled", { method: "POST" }));
      return new Promise(() => {});
    },
  });
</script>`;

const SECRET = "a-secret-that-every-node-shares-0123456789";
/** What holds the secret can make a node's proofs, as node `nodeId` would. */
const asNode = (nodeId: string, secret = SECRET) => new PeerAuth({ secret, nodeId });
const LEASE_SEC = 2;
/** The key that seals stored credentials: every node of a database needs the same one. */
const SECRETS_KEY = "5ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7e75ec7";

interface Node {
  id: string;
  dataDir: string;
  port: number;
  server: ChildServer;
}

let database: string;
let pages: PageServer;
const nodes = new Map<string, Node>();
let key: string | undefined;

async function startNode(id: string, extra: string[] = [], on = database): Promise<Node> {
  const known = nodes.get(id);
  const dataDir = known?.dataDir ?? tempDataDir();
  const port = known?.port ?? (await freePort());
  const server = await spawnServer(dataDir, [
    "--database",
    on,
    "--node-id",
    id,
    "--port",
    String(port),
    "--advertise-url",
    `http://127.0.0.1:${port}`,
    "--node-secret",
    SECRET,
    "--node-lease-sec",
    String(LEASE_SEC),
    "--rate-limit",
    "0",
    "--secrets-key",
    SECRETS_KEY,
    ...extra,
  ]);
  const node = { id, dataDir, port, server };
  nodes.set(id, node);
  return node;
}

/** Starts the nodes named that are not running (the first one started creates the organization). */
async function running(...ids: string[]): Promise<void> {
  for (const id of ids) {
    const node = nodes.get(id);
    if (node === undefined || node.server.child.exitCode !== null || node.server.child.signalCode !== null) {
      const started = await startNode(id);
      key ??= started.server.printedKey as string;
    }
  }
}

const clientOf = (id: string) => createClient({ baseUrl: nodes.get(id)?.server.url ?? "", apiKey: key ?? "", projectId: null, maxRetries: 0 });
const nodeOf = async (browserId: string) =>
  (await storedRows<{ node_id: string }>({ dataDir: "", database }, "SELECT node_id FROM browsers WHERE id = ?", [browserId]))[0]?.node_id;

/** A browser running on b: created through b until one lands there (b places a create on itself while it runs the fewest). */
async function browserOnB() {
  let browser = await clientOf("b").browsers.create();
  if ((await nodeOf(browser.id)) !== "b") browser = await clientOf("b").browsers.create();
  expect(await nodeOf(browser.id)).toBe("b");
  return browser;
}

/** The tool named `name` in a browser's snapshot, as node a lists it, once the page registered it. */
async function toolOf(browserId: string, name: string): Promise<WebMcpTool> {
  const tools = await waitForTools(clientOf("a"), browserId, (list) => list.some((tool) => tool.name === name));
  return tools.find((tool) => tool.name === name) as WebMcpTool;
}

/** A raw connection to node `node` that has sent an invocation of `toolRef` (the test decides how it leaves). */
function rawInvoke(node: string, browserId: string, toolRef: string, headers = ""): Socket {
  const url = new URL(nodes.get(node)?.server.url as string);
  const body = JSON.stringify({ tool_ref: toolRef, input: {}, timeout_sec: 60 });
  const socket = connect(Number(url.port), url.hostname);
  socket.on("error", () => undefined);
  socket.write(
    `POST /browsers/${browserId}/webmcp/invoke HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`,
  );
  return socket;
}

beforeAll(async () => {
  database = await freshDatabase();
  pages = await PageServer.start();
  pages.serve("/tools", TOOLS_PAGE);
});

afterAll(async () => {
  for (const node of nodes.values()) {
    rmSync(node.dataDir, { recursive: true, force: true });
  }
  await pages.close();
});

describe("nodes sharing one PostgreSQL database", () => {
  it("answer any request from any node, and spread creates over the nodes", async () => {
    await running("a", "b");
    const a = clientOf("a");
    const b = clientOf("b");
    const project = await a.projects.create({ name: "from-a" });
    expect((await b.projects.get("from-a")).id).toBe(project.id);
    const created = [];
    for (let i = 0; i < 4; i++) created.push(await a.browsers.create());
    const owners = await Promise.all(created.map((browser) => nodeOf(browser.id)));
    expect(new Set(owners)).toEqual(new Set(["a", "b"]));
    // Every node lists every browser, each with its own token in cdp_ws_url.
    const listed = await b.browsers.list({ limit: 100 });
    for (const browser of created) expect(listed.find((each) => each.id === browser.id)?.cdp_ws_url).toMatch(/\?token=[A-Za-z0-9_-]{43}$/);
    // The token lives only in its node's memory: the shared database holds its hash, never the token.
    const stored = (await storedRows<{ row: string }>({ dataDir: "", database }, "SELECT row_to_json(b)::text AS row FROM browsers b"))
      .map((each) => each.row)
      .join();
    for (const browser of listed) expect(stored).not.toContain(new URL(browser.cdp_ws_url).searchParams.get("token"));
    for (const browser of created) await b.browsers.delete(browser.id);
    expect(await b.browsers.list()).toEqual([]);
  });

  it("read and follow a browser's telemetry through the node that does not run it, until it ends", async () => {
    await running("a", "b");
    let browser = await clientOf("b").browsers.create({ telemetry: {} });
    if ((await nodeOf(browser.id)) !== "b") browser = await clientOf("b").browsers.create({ telemetry: {} });
    expect(await nodeOf(browser.id)).toBe("b");
    const stream = await followEvents(`${nodes.get("a")?.server.url}/browsers/${browser.id}/telemetry/stream?replay=all`, { authorization: `Bearer ${key}` });
    const devtools = new WebSocket(browser.cdp_ws_url);
    await new Promise((resolve, reject) => devtools.once("open", resolve).once("error", reject));
    await stream.next((envelope) => (envelope.event as { type: string }).type === "cdp_connect");
    devtools.close();
    await expect.poll(async () => (await clientOf("a").telemetry.events(browser.id)).map((envelope) => envelope.event.type)).toContain("cdp_disconnect");
    await clientOf("a").browsers.delete(browser.id);
    const seen = (await stream.ended).map((envelope) => (envelope.event as { type: string }).type);
    expect(seen).toEqual(["cdp_connect", "cdp_disconnect"]);
  });

  it("forward WebMCP and a Playwright DevTools connection to the browser's node, with the owner's answers", async () => {
    await running("a", "b");
    const a = clientOf("a");
    const browser = await browserOnB();
    // Through a, the node that does not run it.
    const shown = await a.browsers.get(browser.id);
    expect(shown.cdp_ws_url).toBe(browser.cdp_ws_url.replace(nodes.get("b")?.server.url.slice("http://".length) ?? "", `127.0.0.1:${nodes.get("a")?.port}`));
    const driven = await drive(shown.cdp_ws_url);
    try {
      const page = await driven.open(pages.url("/tools"));
      expect(await page.title()).toBe("Tools page");
      const add = await toolOf(browser.id, "add");
      expect(add.source.page_url).toBe(pages.url("/tools"));
      const result = await a.webmcp.invoke(browser.id, { tool_ref: add.tool_ref, input: { a: 2, b: 3 } });
      expect(result).toMatchObject({ status: "completed", output: { sum: 5 } });
      // The owner's own errors come back as they are.
      await expect(a.webmcp.invoke(browser.id, { tool_ref: "wmt_AAAAAAAAAAAAAAAAAAAAAA", input: {} })).rejects.toMatchObject({
        status: 404,
        code: "tool_not_found",
      });
      // The live view too: the owner checks the token (only it holds the browser's) and streams the tab.
      const viewer = (token: string | null) => {
        const url = new URL(shown.live_view_read_only_url);
        const ws = new WebSocket(`ws://${url.host}${url.pathname}`, ["browser-service.live-view", `token.${token}`]);
        const messages: unknown[] = [];
        ws.on("message", (data) => messages.push(JSON.parse(data.toString())));
        const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
        return { ws, messages, closed };
      };
      const watching = viewer(new URLSearchParams(new URL(shown.live_view_read_only_url).hash.slice(1)).get("token"));
      await expect.poll(() => watching.messages.length).toBeGreaterThan(0);
      watching.ws.close();
      expect(await viewer("A".repeat(43)).closed).toBe(4401);
      // The body goes on as it came: written as `1e20` (a client's JSON.stringify would
      // write 21 digits), it is under the body limit, and its input, serialized again,
      // over the input's: both nodes read it whole and give the owner's own answer.
      const growing = `{"tool_ref":${JSON.stringify(add.tool_ref)},"input":{"a":[${Array(200_000).fill("1e20").join(",")}]}}`;
      const refusals = [];
      for (const id of ["a", "b"]) {
        const answer = await fetch(`${nodes.get(id)?.server.url}/browsers/${browser.id}/webmcp/invoke`, {
          method: "POST",
          headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
          body: growing,
        });
        refusals.push([answer.status, ((await answer.json()) as { message: string }).message]);
      }
      expect(refusals.map(([status]) => status)).toEqual([413, 413]);
      expect(refusals[0]?.[1]).toMatch(/^The serialized input is \d+ bytes/);
      expect(refusals[0]?.[1]).toBe(refusals[1]?.[1]);
      // What a forwarding node did: it forwarded, and did nothing itself (no second attempt, no error of its own).
      expect(nodes.get("a")?.server.stdout()).not.toMatch(/"level":50|already sent|reply\.sent/);
    } finally {
      await driven.disconnect();
    }
    await a.browsers.delete(browser.id);
    await expect(clientOf("b").browsers.get(browser.id)).rejects.toMatchObject({ status: 404 });
  });

  it("read each other's credentials with the key they share; a node given another key does not start, and changes nothing", async () => {
    await running("a", "b");
    const created = await clientOf("a").credentials.create({
      name: "shared",
      domain: "x.example",
      values: { password: "p" },
      totp_secret: "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP",
    });
    expect((await clientOf("b").credentials.totpCode("shared")).code).toMatch(/^\d{6}$/);
    const before = await storedRows<{ values_sealed: string }>({ dataDir: "", database }, "SELECT values_sealed FROM credentials WHERE id = ?", [created.id]);
    const odd = await spawnServer(tempDataDir(), ["--database", database, "--node-id", "odd", "--secrets-key", "0".repeat(64)]).catch(
      (error: unknown) => error,
    );
    expect(String(odd)).toMatch(/does not open the secrets this database holds/);
    expect(await storedRows({ dataDir: "", database }, "SELECT values_sealed FROM credentials WHERE id = ?", [created.id])).toEqual(before);
    expect((await clientOf("a").credentials.get(created.id)).has_totp_secret).toBe(true);
  });

  it("save a profile on one node and start a browser with it, logged in, on the other", async () => {
    await running("a", "b");
    const profile = await clientOf("a").profiles.create({ name: "between-nodes" });
    // Each node places a create on itself when the two run as many browsers: a saves, b reads.
    const saver = await clientOf("a").browsers.create({ profile: { name: "between-nodes", save_changes: true } });
    expect(await nodeOf(saver.id)).toBe("a");
    const writing = await drive(saver.cdp_ws_url);
    try {
      // A session cookie (no expiry), as a login sets: the profile keeps those too.
      await writing.context.addCookies([{ name: "session", value: "alice", url: pages.url("/") }]);
      const page = await writing.open(pages.url("/tools"));
      await page.evaluate(() => localStorage.setItem("user", "alice"));
    } finally {
      await writing.disconnect();
    }
    await clientOf("a").browsers.delete(saver.id);
    expect((await clientOf("b").profiles.get(profile.id)).size_bytes).toBeGreaterThan(0);

    const reader = await clientOf("b").browsers.create({ profile: { id: profile.id } });
    expect(await nodeOf(reader.id)).toBe("b");
    const reading = await drive(reader.cdp_ws_url);
    try {
      const page = await reading.open(pages.url("/tools"));
      expect(await page.evaluate(() => [document.cookie, localStorage.getItem("user")])).toEqual(["session=alice", "alice"]);
    } finally {
      await reading.disconnect();
    }
    await clientOf("b").browsers.delete(reader.id);
  });

  it("give exactly the project cap's slots to creates split over two nodes", async () => {
    await running("a", "b");
    const a = clientOf("a");
    const project = await a.projects.create({ name: "capped" });
    await a.projects.updateLimits(project.id, { max_concurrent_sessions: 5 });
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => clientOf(i % 2 === 0 ? "a" : "b").browsers.create({}, { projectId: project.id })),
    );
    const created = outcomes.filter((outcome) => outcome.status === "fulfilled").map((outcome) => (outcome as PromiseFulfilledResult<{ id: string }>).value);
    expect(created).toHaveLength(5);
    for (const outcome of outcomes.filter((each) => each.status === "rejected")) {
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({ status: 429, code: "concurrency_limit_exceeded" });
    }
    for (const browser of created) await a.browsers.delete(browser.id, { projectId: project.id });
  });

  it("end a browser after its timeout on its own node, counting reads through another node as activity", async () => {
    await running("a", "b");
    const a = clientOf("a");
    let onB = await clientOf("b").browsers.create({ timeout_seconds: 10 });
    if ((await nodeOf(onB.id)) !== "b") onB = await clientOf("b").browsers.create({ timeout_seconds: 10 });
    expect(await nodeOf(onB.id)).toBe("b");
    // Read through a every 2 s for 14 s: past its 10 s, still running, since b counts each read.
    const started = Date.now();
    while (Date.now() - started < 14_000) {
      expect((await a.browsers.get(onB.id)).status).toBe("running");
      await new Promise((resolve) => setTimeout(resolve, 2_000));
    }
    // Left alone, b ends it as DELETE does: gone for every node. (A read would be activity: the list is not.)
    await expect.poll(async () => (await a.browsers.list({ limit: 100 })).some((each) => each.id === onB.id), { timeout: 30_000, interval: 500 }).toBe(false);
    await expect(a.browsers.get(onB.id)).rejects.toMatchObject({ status: 404 });
    await expect(clientOf("b").browsers.get(onB.id)).rejects.toMatchObject({ status: 404 });
  });

  it("mark a killed node's browsers crashed within its lease, keep serving, and take the node back when it restarts", async () => {
    await running("a", "b", "c");
    const a = clientOf("a");
    const onC = [];
    for (let i = 0; i < 6 && onC.length === 0; i++) {
      const browser = await clientOf("c").browsers.create();
      if ((await nodeOf(browser.id)) === "c") onC.push(browser);
      else await a.browsers.delete(browser.id);
    }
    expect(onC).toHaveLength(1);
    const victim = onC[0] as { id: string };
    await nodes.get("c")?.server.kill();
    // Marked within the lease and one renewal period (2.4 s here); the poll allows a busy machine far more.
    await expect.poll(async () => (await a.browsers.get(victim.id)).status, { timeout: 30_000, interval: 200 }).toBe("crashed");
    expect((await a.browsers.get(victim.id)).crash_reason).toBe("server_lost");
    await expect(a.webmcp.listTools(victim.id)).rejects.toMatchObject({ status: 409 });
    // Its slot is free: nothing counts as running or starting any more.
    const live = await storedRows<{ n: number }>({ dataDir: "", database }, "SELECT count(*)::int AS n FROM browsers WHERE status IN ('starting', 'running')");
    expect(live[0]?.n).toBe(0);
    // The others keep serving; a create goes to a live node.
    const after = await clientOf("b").browsers.create();
    expect(["a", "b"]).toContain(await nodeOf(after.id));
    await clientOf("b").browsers.delete(after.id);
    await a.browsers.delete(victim.id);
    // Back under the same id: it takes its lease again and serves browsers.
    await startNode("c");
    const back = await clientOf("c").browsers.create();
    await clientOf("a").browsers.delete(back.id);
    const [row] = await storedRows<{ n: number }>({ dataDir: "", database }, "SELECT count(*)::int AS n FROM nodes WHERE node_id = ?", ["c"]);
    expect(row?.n).toBe(1);
  });
});

describe("login flows and health checks over nodes", () => {
  let sites: LoginSites;
  beforeAll(async () => {
    sites = await startLoginSites();
  });
  afterAll(async () => {
    await sites?.close();
  });
  const TERMINAL = new Set(["SUCCESS", "FAILED", "EXPIRED", "CANCELED"]);
  async function startPair(extra: string[] = []): Promise<void> {
    for (const id of ["a", "b"]) {
      const started = await startNode(id, extra);
      key ??= started.server.printedKey as string;
    }
  }
  /** Reads connection `id` through node `node` until `ready` holds (bounded by the test's timeout). */
  async function until(node: string, id: string, ready: (record: ManagedAuth) => boolean): Promise<ManagedAuth> {
    for (;;) {
      const record = await clientOf(node).authConnections.get(id);
      if (ready(record)) return record;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const asking = (record: ManagedAuth) => record.flow_step === "AWAITING_INPUT" || TERMINAL.has(String(record.flow_status));

  it("take a submit or a delete through any node to the node whose flow waits for it", async () => {
    await startPair();
    const a = clientOf("a");
    const b = clientOf("b");
    const connection = await a.authConnections.create({
      domain: "localhost",
      profile_name: "over-nodes",
      login_url: sites.url("localhost", "/password/login"),
    });
    await a.authConnections.login(connection.id);
    const asked = await until("b", connection.id, asking);
    expect(asked.flow_step).toBe("AWAITING_INPUT");
    expect(await nodeOf(String(asked.browser_session_id))).toBe("a");
    // a judges what b passes on, as it judges its own requests.
    const values = { fld_username: sites.user.username, fld_password: sites.user.password };
    await expect(b.authConnections.submit(connection.id, { interaction_id: "int_over", field_values: values })).rejects.toMatchObject({
      status: 409,
      code: "stale_interaction",
    });
    // The largest body the spec allows (2 MiB, here mostly spaces) gets a's answer through b, and leaves the channel working.
    const padded = `{"interaction_id":${JSON.stringify(asked.interaction_id)},${" ".repeat(1_900_000)}"field_values":{"fld_zzz":"1"}}`;
    const large = await fetch(`${nodes.get("b")?.server.url}/auth/connections/${connection.id}/submit`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: padded,
    });
    expect([large.status, ((await large.json()) as { code: string }).code]).toEqual([400, "invalid_submission"]);
    await b.authConnections.submit(connection.id, { interaction_id: asked.interaction_id ?? "", field_values: values });
    expect(await until("b", connection.id, (record) => TERMINAL.has(String(record.flow_status)))).toMatchObject({
      flow_status: "SUCCESS",
      status: "AUTHENTICATED",
    });

    // A delete through b of a flow waiting on a: a cancels it and ends its browser now, not at the flow's expiry.
    const other = await a.authConnections.create({ domain: "localhost", profile_name: "over-nodes-2", login_url: sites.url("localhost", "/password/login") });
    await a.authConnections.login(other.id);
    const waiting = await until("a", other.id, asking);
    expect(waiting.flow_step).toBe("AWAITING_INPUT");
    // Several at once, as a client retrying would: one ends it, the others find it gone, as on a itself.
    const deletes = await Promise.all(
      [1, 2, 3, 4].map(() =>
        b.authConnections.delete(other.id).then(
          () => 204,
          (error: { status: number }) => error.status,
        ),
      ),
    );
    expect(deletes.filter((status) => status !== 204 && status !== 404)).toEqual([]);
    expect(deletes).toContain(204);
    await expect(a.authConnections.get(other.id)).rejects.toMatchObject({ status: 404 });
    const runningRows = () =>
      storedRows<{ n: number }>({ dataDir: "", database }, "SELECT count(*)::int AS n FROM browsers WHERE id = ? AND status = 'running'", [
        String(waiting.browser_session_id),
      ]);
    for (let tries = 0; tries < 100 && (await runningRows())[0]?.n !== 0; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await runningRows())[0]?.n).toBe(0);
  });

  it("serve a flow's hosted page from any node: its code is used once across them, and its submit reaches the flow", async () => {
    await startPair();
    const a = clientOf("a");
    const connection = await a.authConnections.create({
      domain: "localhost",
      profile_name: "hosted-over-nodes",
      login_url: sites.url("localhost", "/password/login"),
    });
    const { hosted_url } = await a.authConnections.login(connection.id);
    const code = new URLSearchParams(new URL(String(hosted_url)).hash.slice(1)).get("code");
    const hosted = (node: string, path: string, body?: unknown, token?: string) =>
      fetch(`${nodes.get(node)?.server.url}/auth/hosted${path}`, {
        method: body === undefined ? "GET" : "POST",
        headers: {
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const session = await hosted("b", "/session", { code });
    expect(session.status).toBe(200);
    const { token } = (await session.json()) as { token: string };
    // Spent on b, it opens nothing on a.
    expect((await hosted("a", "/session", { code })).status).toBe(401);
    let view: { flow_step?: string; interaction_id?: string; fields?: { id: string }[] } = {};
    while (view.flow_step !== "AWAITING_INPUT") {
      view = (await (await hosted("b", "/state", undefined, token)).json()) as typeof view;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(view.fields?.map((field) => field.id)).toEqual(["fld_username", "fld_password"]);
    const submitted = await hosted(
      "b",
      "/submit",
      { interaction_id: view.interaction_id, field_values: { fld_username: sites.user.username, fld_password: sites.user.password } },
      token,
    );
    expect(submitted.status).toBe(200);
    expect(await until("a", connection.id, (record) => TERMINAL.has(String(record.flow_status)))).toMatchObject({ flow_status: "SUCCESS" });
    expect((await (await hosted("a", "/state", undefined, token)).json()) as object).toMatchObject({ flow_status: "SUCCESS" });
  });

  it("end a flow FAILED once its node's lease lapses, without waiting for that node to return", async () => {
    await startPair();
    const a = clientOf("a");
    const connection = await a.authConnections.create({ domain: "localhost", profile_name: "lost-node", login_url: sites.url("localhost", "/password/login") });
    await a.authConnections.login(connection.id);
    expect((await until("b", connection.id, asking)).flow_step).toBe("AWAITING_INPUT");
    nodes.get("a")?.server.child.kill("SIGKILL");
    // Within a few leases (2 s each), not at flow_expires_at (10 minutes on).
    const ended = await until("b", connection.id, (record) => record.flow_status !== "IN_PROGRESS");
    expect(ended).toMatchObject({ flow_status: "FAILED", error_code: "flow_interrupted", hosted_url: null, live_view_url: null });
    // The connection is free: a new login starts, on b.
    await clientOf("b").authConnections.login(connection.id);
    await clientOf("b").authConnections.delete(connection.id);
  });

  it("check a connection once per due time, whichever node finds it due", async () => {
    await startPair(["--auth-check-seconds", "3"]);
    const a = clientOf("a");
    await a.credentials.create({ name: "checked-over-nodes", domain: "localhost", values: { username: sites.user.username, password: sites.user.password } });
    const connection = await a.authConnections.create({
      domain: "localhost",
      profile_name: "checked-over-nodes",
      login_url: sites.url("localhost", "/password/login"),
      credential: { name: "checked-over-nodes" },
    });
    await a.authConnections.login(connection.id);
    expect(await until("a", connection.id, (record) => TERMINAL.has(String(record.flow_status)))).toMatchObject({ flow_status: "SUCCESS" });
    const checks = async () => (await a.authConnections.timeline(connection.id, { limit: 100 })).filter((event) => event.type === "health_check");
    let seen = await checks();
    while (seen.length < 4) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      seen = await checks();
    }
    await a.authConnections.delete(connection.id);
    // Due every 3 s, each node looking every 1.5 s: a due check both nodes took would start twice within 1.5 s.
    const starts = seen.map((event) => Date.parse(event.timestamp)).sort((x, y) => x - y);
    const gaps = starts.slice(1).map((start, index) => start - (starts[index] as number));
    expect(gaps.filter((gap) => gap < 2_000)).toEqual([]);
  });
});

describe("a node that stops", () => {
  it("exits though other nodes hold channels to it, and its browsers are gone for them too", async () => {
    await running("a", "b");
    const a = clientOf("a");
    const browser = await browserOnB();
    // Through a: a holds a channel to b from now on.
    expect((await a.webmcp.listTools(browser.id)).tools).toEqual([]);
    // The channel's connection must not hold b's server open: it ends, and b exits cleanly.
    expect(await nodes.get("b")?.server.stop()).toBe(0);
    // b ended its browsers on the way out, as a single server does: a says so, it does not wait on b.
    await expect(a.webmcp.listTools(browser.id)).rejects.toMatchObject({ status: 404, code: "not_found" });
  });
});

describe("a node that stops answering", () => {
  it("has the calls waiting on it ended once its lease lapses: an invocation it had is outcome_unknown, not refused", async () => {
    await running("a", "b");
    const a = clientOf("a");
    const browser = await browserOnB();
    const driven = await drive((await a.browsers.get(browser.id)).cdp_ws_url);
    await driven.open(pages.url("/tools"));
    const watch = await toolOf(browser.id, "watch");
    const started = pages.runs("watch-started");
    const invocation = a.webmcp.invoke(browser.id, { tool_ref: watch.tool_ref, input: {}, timeout_sec: 120 }).catch((error: unknown) => error);
    await expect.poll(() => pages.runs("watch-started")).toBe(started + 1);
    // b freezes with its connections open: nothing closes them, and its lease lapses.
    const b = nodes.get("b")?.server as ChildServer;
    b.child.kill("SIGSTOP");
    try {
      const list = a.webmcp.listTools(browser.id).catch((error: unknown) => error);
      // Its token is asked of b: once b is found dead, the browser is read again, crashed.
      const read = a.browsers.get(browser.id);
      const queued = a.webmcp.invoke(browser.id, { tool_ref: watch.tool_ref, input: {}, timeout_sec: 120 }).catch((error: unknown) => error);
      // The tool ran in the page: a refusal would tell the caller it did not, and a retry would run it again.
      expect(await invocation).toMatchObject({ status: 504, code: "outcome_unknown", message: expect.stringContaining("may have run") });
      // Sent while b froze, these reach b before its lapse is found (then they end with it) or
      // after (then a refuses them: the browser crashed); which one depends on the machine's load.
      expect(await list).toMatchObject({ status: 409, code: "conflict" });
      const late = (await queued) as { status: number; code: string };
      expect([
        [504, "outcome_unknown"],
        [409, "conflict"],
      ]).toContainEqual([late.status, late.code]);
      // The read ends once b's lapse is found; the record says crashed once a's reaping has
      // written it, which on a loaded machine may come just after that read.
      expect(["running", "crashed"]).toContain((await read).status);
      await expect.poll(async () => (await a.browsers.get(browser.id)).status, { timeout: 30_000 }).toBe("crashed");
    } finally {
      b.child.kill("SIGCONT");
    }
    // Continued, b finds the calls queued on its socket while it was frozen: its lease lapsed
    // and their callers have their answers, so it refuses them unrun, and ends its browsers.
    const bPid = b.child.pid as number;
    await expect.poll(() => chromiumBrowserPids(bPid), { timeout: 30_000, interval: 100 }).toEqual([]);
    expect(pages.runs("watch-started")).toBe(started + 1);
    await b.kill();
    await driven.disconnect().catch(() => undefined);
  });
});

describe("a node that stops answering a create sent to it", () => {
  it("has it started where it arrived once its lease lapses, and starts none itself when it goes on", async () => {
    await running("a", "b");
    const a = clientOf("a");
    // a runs one browser and b none: a sends the next create to b.
    const first = await a.browsers.create();
    expect(await nodeOf(first.id)).toBe("a");
    const b = nodes.get("b")?.server as ChildServer;
    b.child.kill("SIGSTOP");
    let second: { id: string };
    try {
      // Without an end at b's lapse, this would wait for b, which only goes on after it.
      second = await a.browsers.create();
    } finally {
      b.child.kill("SIGCONT");
    }
    expect(await nodeOf(second.id)).toBe("a");
    expect(nodes.get("a")?.server.stdout()).toContain("the node chosen for a create did not answer; starting the browser here");
    // b reads the create waiting on its socket after it went on, without its lease: it starts nothing.
    await expect.poll(() => b.stdout().includes("This node was sent the create under a lease that is over"), { timeout: 30_000 }).toBe(true);
    await expect.poll(async () => (await clientOf("b").browsers.get(second.id)).status).toBe("running");
    const onB = await storedRows<{ n: number }>(
      { dataDir: "", database },
      "SELECT count(*)::int AS n FROM browsers WHERE node_id = 'b' AND status IN ('starting', 'running')",
    );
    expect(onB[0]?.n).toBe(0);
    await a.browsers.delete(first.id);
    await a.browsers.delete(second.id);
  });
});

describe("a node the others cannot reach", () => {
  it("gets no creates that it cannot take, and its browsers' requests are refused with a reason, not left hanging", async () => {
    await running("a", "b");
    // d holds a lease but advertises a port nobody listens on.
    const closed = await freePort();
    const d = await startNode("d", ["--advertise-url", `http://127.0.0.1:${closed}`]);
    const a = clientOf("a");
    const first = [await a.browsers.create(), await a.browsers.create()];
    expect(new Set(await Promise.all(first.map((browser) => nodeOf(browser.id))))).toEqual(new Set(["a", "b"]));
    // d runs the fewest (none): a sends it the create, d does not answer, a starts it itself.
    const fallback = await a.browsers.create();
    expect(await nodeOf(fallback.id)).toBe("a");
    // A browser d runs, asked for through a: a clear refusal, as for a browser that is not running.
    const onD = await createClient({ baseUrl: d.server.url, apiKey: key ?? "", projectId: null, maxRetries: 0 }).browsers.create();
    expect(await nodeOf(onD.id)).toBe("d");
    await expect(a.webmcp.listTools(onD.id)).rejects.toMatchObject({ status: 409, code: "conflict", message: expect.stringContaining("does not answer") });
    await expect(a.browsers.delete(onD.id)).rejects.toMatchObject({
      status: 500,
      code: "internal_error",
      message: expect.stringContaining("cannot be stopped now"),
    });
    for (const browser of [...first, fallback]) await a.browsers.delete(browser.id);
    await d.server.stop();
    nodes.delete("d");
    rmSync(d.dataDir, { recursive: true, force: true });
  });
});

describe("connections a node relays", () => {
  it("count on the browser's node under the client that opened them, so that no client takes the forwarding node's connections from the others", async () => {
    await running("a");
    // b with a small cap of connections per client, so that a client can reach it.
    await nodes.get("b")?.server.stop();
    await startNode("b", ["--max-client-connections", "4"]);
    try {
      const browser = await browserOnB();
      const onA = `ws://127.0.0.1:${nodes.get("a")?.port}/browsers/${browser.id}/cdp`;
      const open = (from: string) =>
        new Promise<{ ws: WebSocket } | { status: number }>((resolve, reject) => {
          const ws = new WebSocket(onA, { headers: { authorization: `Bearer ${key}` }, localAddress: from, perMessageDeflate: false });
          ws.once("open", () => resolve({ ws }));
          ws.once("unexpected-response", (_request, response) => {
            resolve({ status: response.statusCode ?? 0 });
            ws.terminate();
          });
          ws.once("error", reject);
        });
      // One client, through a, holds all it may hold on b.
      const held = await Promise.all([1, 2, 3, 4].map(() => open("127.0.0.2")));
      expect(held.every((each) => "ws" in each)).toBe(true);
      // Its next one is refused on b, under its own name; another client through the same node is not.
      expect(await open("127.0.0.2")).toEqual({ status: 429 });
      const other = await open("127.0.0.3");
      expect("ws" in other).toBe(true);
      for (const each of [...held, other]) if ("ws" in each) each.ws.close();
      await clientOf("a").browsers.delete(browser.id);
    } finally {
      await nodes.get("b")?.server.stop();
      await startNode("b");
    }
  });
});

describe("what another node may do, and a client may not", () => {
  it("shows another node's browser only to its project's keys, whatever a client says it is", async () => {
    await running("a", "b");
    const a = clientOf("a");
    const browser = await browserOnB();
    const other = await a.projects.create({ name: `elsewhere-${Date.now()}` });
    // The org-wide key sees it through a with its token; a request to a that names another project does not.
    expect((await a.browsers.get(browser.id)).cdp_ws_url).toMatch(/\?token=/);
    await expect(a.browsers.get(browser.id, { projectId: other.id })).rejects.toMatchObject({ status: 404 });
    // Nor does one that claims, without the secret, to come from a node with the scope resolved.
    const forgedScope = Buffer.from(
      JSON.stringify({ credential: { keyId: "k", orgId: "o", projectId: null }, org: { id: "o" }, project: { id: other.id }, browser: { id: browser.id } }),
    ).toString("base64url");
    for (const node of ["a", "b"]) {
      const answer = await fetch(`${nodes.get(node)?.server.url}/browsers/${browser.id}`, {
        headers: {
          "x-browser-service-peer": "guess",
          "x-browser-service-scope": forgedScope,
          "x-service-project-id": other.id,
          authorization: `Bearer ${key}`,
        },
      });
      expect(answer.status).toBe(404);
      const unauthenticated = await fetch(`${nodes.get(node)?.server.url}/browsers/${browser.id}`, {
        headers: { "x-browser-service-peer": "guess", "x-browser-service-scope": forgedScope },
      });
      expect(unauthenticated.status).toBe(401);
    }
    await a.browsers.delete(browser.id);
  });

  it("relays the owner's WebSocket closes and its answers to a caller who half-closes, and cancels for one who leaves, as the owner does", async () => {
    await running("a", "b");
    const a = clientOf("a");
    const browser = await browserOnB();
    const shown = await a.browsers.get(browser.id);
    // A DevTools message over the owner's cap (16 MiB) closes its sender with 1009, through a as directly.
    for (let attempt = 0; attempt < 4; attempt++) {
      const ws = new WebSocket(shown.cdp_ws_url, { perMessageDeflate: false });
      await new Promise((resolve, reject) => {
        ws.once("open", resolve);
        ws.once("error", reject);
      });
      const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
      ws.on("error", () => undefined);
      ws.send("x".repeat(17 * 1024 * 1024));
      expect(await closed).toBe(1009);
    }
    // An invocation whose caller half-closes: the owner cancels it and says so (504), through a as directly.
    const driven = await drive(shown.cdp_ws_url);
    try {
      await driven.open(pages.url("/tools"));
      const hang = await toolOf(browser.id, "hang");
      const halfClosed = async (node: string) => {
        const socket = rawInvoke(node, browser.id, hang.tool_ref, "Connection: close\r\n");
        let text = "";
        socket.setEncoding("utf8").on("data", (chunk: string) => (text += chunk));
        const ended = new Promise((resolve) => socket.once("close", resolve));
        await new Promise((resolve) => setTimeout(resolve, 500));
        socket.end();
        await ended;
        const json = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4)) as { code: string };
        return [Number(text.split(" ")[1]), json.code];
      };
      expect(await halfClosed("b")).toEqual([504, "outcome_unknown"]);
      expect(await halfClosed("a")).toEqual([504, "outcome_unknown"]);
      // A caller through a whose connection is reset (no FIN first): the invocation is cancelled in the page on b, as for a direct caller.
      const watch = await toolOf(browser.id, "watch");
      const [started, cancelled] = [pages.runs("watch-started"), pages.runs("watch-cancelled")];
      const socket = rawInvoke("a", browser.id, watch.tool_ref);
      await expect.poll(() => pages.runs("watch-started")).toBe(started + 1);
      expect(pages.runs("watch-cancelled")).toBe(cancelled);
      socket.resetAndDestroy();
      await expect.poll(() => pages.runs("watch-cancelled")).toBe(cancelled + 1);
    } finally {
      await driven.disconnect();
    }
    await a.browsers.delete(browser.id);
  });

  it("forwards at most 32 requests of one client at once, so that no client holds what the nodes can forward", async () => {
    await running("a", "b");
    const a = clientOf("a");
    const browser = await browserOnB();
    const driven = await drive((await a.browsers.get(browser.id)).cdp_ws_url);
    try {
      await driven.open(pages.url("/tools"));
      const hang = await toolOf(browser.id, "hang");
      const calls = await Promise.allSettled(
        Array.from({ length: 40 }, () => a.webmcp.invoke(browser.id, { tool_ref: hang.tool_ref, input: {}, timeout_sec: 3 })),
      );
      const refused = calls.filter(
        (call) => call.status === "rejected" && /requests waiting on other nodes/.test((call.reason as { message?: string }).message ?? ""),
      );
      expect(refused.length).toBeGreaterThanOrEqual(8);
      for (const call of refused) expect((call as PromiseRejectedResult).reason).toMatchObject({ status: 429, code: "rate_limited" });
    } finally {
      await driven.disconnect();
    }
    await a.browsers.delete(browser.id);
  });

  it("checks another node's calls as a direct request: a body the spec refuses is 400, a browser no more is 404", async () => {
    await running("a", "b");
    const browser = await browserOnB();
    const [stored] = await storedRows<{ row: string }>({ dataDir: "", database }, "SELECT row_to_json(b)::text AS row FROM browsers b WHERE id = ?", [
      browser.id,
    ]);
    const row = JSON.parse(stored?.row ?? "{}") as Record<string, unknown>;
    // What a node holding the secret sends, as a node of another version or a broken one might.
    const channel = await PeerChannel.open(nodes.get("b")?.server.url ?? "", asNode("a").opening("b", PEER_CHANNEL_PATH), {
      timeoutMs: 10_000,
      maxAnswerBytes: 1 << 20,
    });
    try {
      const call = async (op: string, browserRow: object, body?: string) => {
        const answer = await channel.send({ op, request_id: "nodes-test", browser: browserRow, headers: {} }, body, 30_000).answer;
        return [answer.status, (JSON.parse(String(answer.body)) as { code: string }).code];
      };
      expect(await call("invokeWebMcpTool", row, JSON.stringify({ input: {} }))).toEqual([400, "bad_request"]);
      expect(await call("invokeWebMcpTool", row, "null")).toEqual([400, "bad_request"]);
      expect(await call("invokeWebMcpTool", row, "{")).toEqual([400, "bad_request"]);
      expect(await call("deleteBrowser", { ...row, id: "brw_aaaaaaaaaaaaaaaaaaaaaaaaaa" })).toEqual([404, "not_found"]);
      expect(await call("deleteProject", row)).toEqual([404, "not_found"]);
      // A row another node claims is not this node's: refused, never served.
      expect(await call("listWebMcpTools", { ...row, node_id: "a" })).toEqual([409, "conflict"]);
    } finally {
      channel.close();
    }
    await clientOf("a").browsers.delete(browser.id);
    expect(nodes.get("b")?.server.stdout()).not.toMatch(/"level":50/);
  });

  it("counts a forwarded request once, at the node it reached, and never trusts a client's peer headers", async () => {
    const limited = await freshDatabase();
    const strict = ["--rate-limit", "1", "--rate-limit-burst", "10", "--auth-failure-limit", "1", "--auth-failure-burst", "2"];
    const r1 = await startNode("r1", strict, limited);
    const limitedKey = r1.server.printedKey as string;
    await startNode("r2", strict, limited);
    const via = (id: string) => createClient({ baseUrl: nodes.get(id)?.server.url ?? "", apiKey: limitedKey, projectId: null, maxRetries: 0 });
    const browser = await via("r1").browsers.create();
    const owner = (await storedRows<{ node_id: string }>({ dataDir: "", database: limited }, "SELECT node_id FROM browsers WHERE id = ?", [browser.id]))[0]
      ?.node_id as string;
    const other = owner === "r1" ? "r2" : "r1";
    // Requests until the key's budget on a node is spent (the limit refills 1 a second, so a few more may pass).
    const spend = async (id: string) => {
      for (let served = 0; served < 40; served++) {
        const answer = await via(id)
          .webmcp.listTools(browser.id)
          .then(
            () => "ok",
            (error: { status?: number }) => error.status,
          );
        if (answer === 429) return served;
      }
      throw new Error(`${id} never answered 429`);
    };
    // Through the other node: every one of them forwarded to the owner.
    expect(await spend(other)).toBeGreaterThanOrEqual(9);
    // Were they counted by the owner too, its budget would be spent; it is whole.
    expect(await spend(owner)).toBeGreaterThanOrEqual(9);
    // A client that sends the peer headers itself is counted as itself: with the budget spent, it is refused.
    const forged = { "x-browser-service-peer": "not-the-secret", "x-browser-service-client": "203.0.113.9", "x-browser-service-scope": "e30" };
    const ownerUrl = nodes.get(owner)?.server.url as string;
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      const answer = await fetch(`${ownerUrl}/browsers/${browser.id}/webmcp/tools`, { headers: { ...forged, authorization: `Bearer ${limitedKey}` } });
      statuses.push(answer.status);
    }
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(4);
    const wrongKey = () => fetch(`${ownerUrl}/org/projects`, { headers: { ...forged, authorization: "Bearer bsk_wrongwrongwrongwrongwrongwrongwron" } });
    expect((await wrongKey()).status).toBe(401);
    expect((await wrongKey()).status).toBe(401);
    expect((await wrongKey()).status).toBe(429);
    // The address it really came from (127.0.0.1) is the one blocked, whatever it declared.
    const plain = await fetch(`${ownerUrl}/org/projects`, { headers: { authorization: "Bearer bsk_wrongwrongwrongwrongwrongwrongwron" } });
    expect(plain.status).toBe(429);
    await expect
      .poll(
        () =>
          via(owner)
            .browsers.delete(browser.id)
            .then(
              () => "deleted",
              (error: { status?: number }) => error.status,
            ),
        { timeout: 30_000 },
      )
      .toBe("deleted");
  });
});

/** A listener a client would like a node to reach: it counts the connections it gets. */
async function trap(): Promise<{ port: number; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server = createNetServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: (server.address() as { port: number }).port,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Sends `text` as it is to node `id` (it asks the node to close) and resolves with the answer's status and body once it does. */
function rawTo(url: string, text: string): Promise<{ status: number; body: string }> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), "127.0.0.1");
    let answer = "";
    socket.setEncoding("latin1").on("data", (chunk: string) => (answer += chunk));
    socket.on("error", reject);
    // An upgrade accepted keeps its connection: what came within a few seconds is the answer.
    socket.setTimeout(5_000, () => socket.destroy());
    socket.on("close", () => resolve({ status: Number(answer.split(" ")[1]), body: answer.slice(answer.indexOf("\r\n\r\n") + 4) }));
    socket.write(text);
  });
}

/** A request as raw text, `Connection: close` added (`Connection: Upgrade` to one that asks to upgrade). */
const rawRequest = (line: string, headers: Record<string, string>, body = "") =>
  `${line}\r\n${Object.entries({
    ...headers,
    ...(body === "" ? {} : { "content-length": String(Buffer.byteLength(body)) }),
    connection: headers.upgrade === undefined ? "close" : "Upgrade",
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("")}\r\n${body}`;

interface CapturedRequest {
  line: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * A TCP relay to node `target`'s port that keeps what each connection sends: advertised
 * as that node's URL, it sees every request the other nodes send it, as one listening on
 * the nodes' network would.
 */
async function capturingRelay(targetPort: () => number) {
  const streams: Buffer[][] = [];
  const sockets = new Set<Socket>();
  const server = createNetServer((from) => {
    const chunks: Buffer[] = [];
    streams.push(chunks);
    const to = connect(targetPort(), "127.0.0.1");
    sockets.add(from).add(to);
    from.on("data", (chunk: Buffer) => chunks.push(chunk));
    from.pipe(to).pipe(from);
    const end = () => {
      from.destroy();
      to.destroy();
    };
    for (const socket of [from, to]) {
      socket.on("error", end);
      socket.on("close", end);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    /** The requests captured, each connection's read up to its first upgrade. */
    requests(): CapturedRequest[] {
      const found: CapturedRequest[] = [];
      for (const chunks of streams) {
        let text = Buffer.concat(chunks).toString("latin1");
        while (text.includes("\r\n\r\n")) {
          const headEnd = text.indexOf("\r\n\r\n");
          const [line = "", ...lines] = text.slice(0, headEnd).split("\r\n");
          const headers = Object.fromEntries(lines.map((each) => [each.slice(0, each.indexOf(":")).toLowerCase(), each.slice(each.indexOf(":") + 1).trim()]));
          const length = Number(headers["content-length"] ?? 0);
          found.push({ line, headers, body: text.slice(headEnd + 4, headEnd + 4 + length) });
          if (headers.upgrade !== undefined) break;
          text = text.slice(headEnd + 4 + length);
        }
      }
      return found;
    },
    /** Stops relaying: the nodes' kept-alive connections through it end too. */
    close: () => {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** An API key scoped to `projectId`, issued by the command line on the shared database. */
function projectKey(projectId: string, on = database): string {
  const dataDir = tempDataDir();
  try {
    return execFileSync(process.execPath, [SERVER_BIN, "keys", "create", "--database", on, "--data-dir", dataDir, "--project", projectId], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const browsersIn = async (projectId: string) =>
  (await storedRows<{ n: number }>({ dataDir: "", database }, "SELECT count(*)::int AS n FROM browsers WHERE project_id = ?", [projectId]))[0]?.n;

describe("a client that names where a node should send its request", () => {
  it("is refused at the edge (400) on every route and upgrade, and a listener it names receives nothing; a create placed on another node goes to that node", async () => {
    await running("a", "b");
    const a = clientOf("a");
    const project = await a.projects.create({ name: `tenant-${Date.now()}` });
    const tenantKey = projectKey(project.id);
    const tenant = (id: string) => createClient({ baseUrl: nodes.get(id)?.server.url ?? "", apiKey: tenantKey, projectId: null, maxRetries: 0 });
    // a runs one browser and b none: a places the next create on b.
    const first = await tenant("a").browsers.create();
    expect(await nodeOf(first.id)).toBe("a");
    const listener = await trap();
    const aUrl = nodes.get("a")?.server.url as string;
    const aHost = new URL(aUrl).host;
    const elsewhere = `http://127.0.0.1:${listener.port}`;
    const asTenant = { host: aHost, authorization: `Bearer ${tenantKey}` };
    const refused = async (line: string, headers: Record<string, string> = {}, body = "") => {
      const answer = await rawTo(aUrl, rawRequest(line, { ...asTenant, ...headers }, body));
      expect(answer.status, line).toBe(400);
      expect((JSON.parse(answer.body) as { details: { code: string }[] }).details[0]?.code).toBe("invalid_request_target");
    };
    await refused(`POST ${elsewhere}/browsers HTTP/1.1`, { "content-type": "application/json" }, "{}");
    // Naming b itself is no better: a node's target comes from the nodes' table alone.
    await refused(`POST http://127.0.0.1:${nodes.get("b")?.port}/browsers HTTP/1.1`, { "content-type": "application/json" }, "{}");
    expect(await browsersIn(project.id)).toBe(1);
    // The same create as a path goes to b.
    const placed = await tenant("a").browsers.create();
    expect(await nodeOf(placed.id)).toBe("b");
    // Every request bound for b's browser, and its upgrades, asked through a with a URL as target.
    const websocket = { upgrade: "websocket", connection: "Upgrade", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==", "sec-websocket-version": "13" };
    await refused(`GET ${elsewhere}/browsers/${placed.id} HTTP/1.1`);
    await refused(`GET ${elsewhere}/browsers/${placed.id}/webmcp/tools HTTP/1.1`);
    await refused(`POST ${elsewhere}/browsers/${placed.id}/webmcp/invoke HTTP/1.1`, { "content-type": "application/json" }, '{"tool_ref":"x","input":{}}');
    await refused(`DELETE ${elsewhere}/browsers/${placed.id} HTTP/1.1`);
    await refused(`GET ${elsewhere}/browsers/${placed.id}/cdp HTTP/1.1`, websocket);
    await refused(`GET ${elsewhere}/browsers/${placed.id}/live HTTP/1.1`, { ...websocket, "sec-websocket-protocol": "browser-service.live-view" });
    await refused(`GET ${elsewhere}/_peer/channel HTTP/1.1`, { upgrade: "browser-service-peer/1", connection: "Upgrade" });
    expect(listener.connections()).toBe(0);
    // And with paths, all of it reaches b's browser through a.
    expect((await tenant("a").webmcp.listTools(placed.id)).tools).toEqual([]);
    await tenant("a").browsers.delete(placed.id);
    await tenant("a").browsers.delete(first.id);
    expect(listener.connections()).toBe(0);
    await listener.close();
  });
});

describe("what a node sends another", () => {
  it("carries no secret and no client key, and a captured one authorises nothing: replayed, altered or sent to another node, it is a plain client's", async () => {
    const relay = await capturingRelay(() => nodes.get("b")?.port as number);
    await running("a", "c");
    await startNode("b", ["--advertise-url", relay.url]);
    const a = clientOf("a");
    const project = await a.projects.create({ name: `captured-${Date.now()}` });
    // a runs one browser, b and c none: a places the next create on b, through the relay.
    const first = await a.browsers.create({ name: "first" }, { projectId: project.id });
    const placed = await a.browsers.create({ name: "placed" }, { projectId: project.id });
    expect([await nodeOf(first.id), await nodeOf(placed.id)]).toEqual(["a", "b"]);
    expect((await a.webmcp.listTools(placed.id, { projectId: project.id })).tools).toEqual([]);
    // DevTools through a, with the browser's token and with an API key: a checks either, b sees neither.
    const token = new URL(placed.cdp_ws_url).searchParams.get("token") as string;
    const onA = `ws://127.0.0.1:${nodes.get("a")?.port}/browsers/${placed.id}/cdp`;
    for (const [url, headers] of [
      [`${onA}?token=${token}`, {}],
      [onA, { authorization: `Bearer ${key}` }],
    ] as const) {
      const ws = new WebSocket(url, { headers, perMessageDeflate: false });
      await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
      const answer = new Promise<string>((resolve) => ws.once("message", (data) => resolve(String(data))));
      ws.send(JSON.stringify({ id: 1, method: "Browser.getVersion" }));
      expect(JSON.parse(await answer)).toMatchObject({ id: 1, result: { product: expect.stringMatching(/Chrome/) } });
      ws.close();
    }
    const captured = relay.requests();
    const upgrades = captured.filter((each) => each.line.includes("/cdp"));
    expect(upgrades.map((each) => [each.line, each.headers.authorization, each.headers["x-browser-service-opens"]])).toEqual([
      [`GET /browsers/${placed.id}/cdp HTTP/1.1`, undefined, placed.id],
      [`GET /browsers/${placed.id}/cdp HTTP/1.1`, undefined, placed.id],
    ]);
    const create = captured.find((each) => each.line === "POST /browsers HTTP/1.1") as CapturedRequest;
    const opening = captured.find((each) => each.line === "GET /_peer/channel HTTP/1.1") as CapturedRequest;
    expect(create.headers["x-browser-service-proof"]).toMatch(/^v1;from=a;to=b;/);
    expect(opening.headers["x-browser-service-proof"]).toMatch(/^v1;from=a;to=b;/);
    const everything = captured.map((each) => JSON.stringify(each)).join("\n");
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(key as string);
    expect(everything).not.toContain(token);
    expect(create.headers.authorization).toBeUndefined();

    const before = await browsersIn(project.id);
    const send = (to: string, request: CapturedRequest) => {
      const { "content-length": _length, connection: _connection, ...headers } = request.headers;
      return rawTo(nodes.get(to)?.server.url as string, rawRequest(request.line, headers, request.body));
    };
    const forgedScope = Buffer.from(
      JSON.stringify({ credential: { keyId: "k", orgId: "o", projectId: null }, org: { id: "o" }, project: { id: "p" } }),
    ).toString("base64url");
    for (const [why, to, request] of [
      ["replayed as it is", "b", create],
      ["with another path", "b", { ...create, line: "POST /browsers?x=1 HTTP/1.1" }],
      ["with another body", "b", { ...create, body: '{"name":"altered"}' }],
      ["with another scope", "b", { ...create, headers: { ...create.headers, "x-browser-service-scope": forgedScope } }],
      ["sent to another node", "c", create],
    ] as const) {
      const answer = await send(to, request);
      expect([why, answer.status, (JSON.parse(answer.body) as { code: string }).code]).toEqual([why, 401, "unauthorized"]);
    }
    expect(await browsersIn(project.id)).toBe(before);
    // A DevTools upgrade a checked, replayed: b asks for a credential, which it never carried.
    const devtools = upgrades[0] as CapturedRequest;
    const reopenedDevtools = await send("b", devtools);
    expect([reopenedDevtools.status, (JSON.parse(reopenedDevtools.body) as { code: string }).code], reopenedDevtools.body).toEqual([401, "unauthorized"]);
    // The channel's opening, replayed: the path is unknown to anyone but the node it was made for, once.
    const reopened = await send("b", opening);
    expect(reopened.status).toBe(404);
    for (const browser of [first, placed]) await a.browsers.delete(browser.id, { projectId: project.id });
    await relay.close();
  });

  it("is a plain client's when it carries the secret itself, or a proof from a node not in the table; a node's scope names an active project", async () => {
    await running("a", "b", "c");
    const a = clientOf("a");
    const victim = await a.projects.create({ name: `victim-${Date.now()}` });
    const tenantProject = await a.projects.create({ name: `tenant-${Date.now()}` });
    const tenantKey = projectKey(tenantProject.id);
    const target = await a.browsers.create({}, { projectId: victim.id });
    const bUrl = nodes.get("b")?.server.url as string;
    const [org] = await storedRows<{ id: string; default_project_id: string }>({ dataDir: "", database }, "SELECT id, default_project_id FROM organizations");
    const scopeOf = (projectId: string) =>
      Buffer.from(
        JSON.stringify({ credential: { keyId: "key_forged", orgId: org?.id, projectId: null }, org, project: { id: projectId, status: "active" } }),
      ).toString("base64url");
    // c leaves: its row is gone from the nodes' table.
    await nodes.get("c")?.server.stop();
    const seen = (headers: Record<string, string>) => fetch(`${bUrl}/browsers?limit=100`, { headers });
    const ids = async (answer: Response) => ((await answer.json()) as { id: string }[]).map((browser) => browser.id);

    // The secret itself, as nodes once sent it, with an org-wide scope naming the victim's project.
    const leaked = { "x-browser-service-peer": SECRET, "x-browser-service-scope": scopeOf(victim.id), "x-browser-service-placed": "b" };
    expect((await seen(leaked)).status).toBe(401);
    const asTenant = await seen({ ...leaked, authorization: `Bearer ${tenantKey}` });
    expect(asTenant.status).toBe(200);
    expect(await ids(asTenant)).not.toContain(target.id);
    const projects = await fetch(`${bUrl}/org/projects`, { headers: { ...leaked, authorization: `Bearer ${tenantKey}` } });
    expect(((await projects.json()) as { id: string }[]).map((each) => each.id)).toEqual([tenantProject.id]);
    const deleted = await fetch(`${bUrl}/browsers/${target.id}`, { method: "DELETE", headers: { ...leaked, authorization: `Bearer ${tenantKey}` } });
    expect(deleted.status).toBe(404);
    expect((await a.browsers.get(target.id, { projectId: victim.id })).status).toBe("running");

    // Valid proofs, made with the secret, from nodes the table does not hold: one that left, one that never was.
    const proof = (from: string, projectId: string) =>
      asNode(from).sign({ method: "GET", path: "/browsers?limit=100", to: "b", claims: { scope: scopeOf(projectId), client: "203.0.113.9" } });
    expect((await seen(proof("ghost", victim.id))).status).toBe(401);
    // b reads the table at each renewal (a fifth of the lease): from then on, c is no node.
    await expect.poll(async () => (await seen(proof("c", victim.id))).status, { timeout: 10_000, interval: 100 }).toBe(401);
    // The same proof from a live node is one (what holds the secret is a node): so it is the table that refused them.
    const fromA = await seen(proof("a", victim.id));
    expect(fromA.status).toBe(200);
    expect(await ids(fromA)).toContain(target.id);
    // A node's scope is checked: its project must exist and be active.
    const archived = await a.projects.create({ name: `archived-${Date.now()}` });
    await a.projects.update(archived.id, { status: "archived" });
    for (const projectId of [archived.id, "proj_aaaaaaaaaaaaaaaaaaaaaaaa"]) {
      const answer = await seen(proof("a", projectId));
      expect([answer.status, ((await answer.json()) as { code: string }).code]).toEqual([404, "project_not_found"]);
    }
    await a.browsers.delete(target.id, { projectId: victim.id });
  });

  it("lets the secret be rotated: nodes that accept each other's secret work together while one signs with the new one", async () => {
    const rotating = await freshDatabase();
    const OLD = SECRET;
    const NEW = "the-new-secret-of-every-node-0123456789ab";
    const r1 = await startNode("rot1", ["--node-secret", OLD, "--node-secret-accept", NEW], rotating);
    await startNode("rot2", ["--node-secret", NEW, "--node-secret-accept", OLD], rotating);
    const via = (id: string) =>
      createClient({ baseUrl: nodes.get(id)?.server.url ?? "", apiKey: r1.server.printedKey as string, projectId: null, maxRetries: 0 });
    const owner = async (browserId: string) =>
      (await storedRows<{ node_id: string }>({ dataDir: "", database: rotating }, "SELECT node_id FROM browsers WHERE id = ?", [browserId]))[0]?.node_id;
    // rot1 runs one browser, rot2 none: rot1 places the next on rot2, and each reaches the other's browser.
    const first = await via("rot1").browsers.create();
    const second = await via("rot1").browsers.create();
    expect([await owner(first.id), await owner(second.id)]).toEqual(["rot1", "rot2"]);
    expect((await via("rot1").webmcp.listTools(second.id)).tools).toEqual([]);
    expect((await via("rot2").webmcp.listTools(first.id)).tools).toEqual([]);
    await via("rot2").browsers.delete(first.id);
    await via("rot1").browsers.delete(second.id);
    for (const id of ["rot1", "rot2"]) {
      rmSync(nodes.get(id)?.dataDir as string, { recursive: true, force: true });
      nodes.delete(id);
    }
  });

  it("answers a live view without its token alike, whether the browser runs on another node or does not exist", async () => {
    await running("a", "b");
    const browser = await browserOnB();
    const shown = await clientOf("a").browsers.get(browser.id);
    const closeOf = (path: string) =>
      new Promise<string>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${nodes.get("a")?.port}${path}`, ["browser-service.live-view"]);
        ws.on("close", (code, reason) => resolve(`${code} ${reason.toString()}`));
        ws.on("error", reject);
      });
    const onB = await closeOf(new URL(shown.live_view_url).pathname);
    expect(onB).toMatch(/^4401 /);
    expect(await closeOf("/browsers/brw_aaaaaaaaaaaaaaaaaaaaaaaa/live")).toBe(onB);
    await clientOf("a").browsers.delete(browser.id);
  });
});
