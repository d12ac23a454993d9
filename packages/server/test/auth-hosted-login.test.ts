import { once } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { type LoginSites, startLoginSites } from "@browser-service/test-pages/login-sites";
import type { ManagedAuth } from "@browser-service/types";
import { chromium, type Browser as ViewerBrowser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "./support/test-server.js";

// The hosted login page: a person opens a flow's hosted_url in their own browser (here a
// second Chromium, as a person's) and answers what the flow asks. Its code is single-use
// and its token reaches one connection's current flow, nothing else.

let sites: LoginSites;
let viewer: ViewerBrowser;
beforeAll(async () => {
  sites = await startLoginSites();
  viewer = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
});
afterAll(async () => {
  await viewer?.close();
  await sites?.close();
});
const t = useTestServer({ authFlowSeconds: 120 });

let made = 0;

/** A two-step connection with no credential: the flow asks a person for both steps. */
async function startLogin(): Promise<{ connection: ManagedAuth; hostedUrl: string }> {
  const client = t.client();
  const connection = await client.authConnections.create({
    domain: "localhost",
    profile_name: `hosted-${++made}`,
    login_url: sites.url("localhost", "/two-step/login"),
  });
  const started = await client.authConnections.login(connection.id);
  return { connection, hostedUrl: String(started.hosted_url) };
}

/** A password-site connection with a stored credential: its flows sign in with nobody's help. */
async function storedCredentialConnection(): Promise<ManagedAuth> {
  const client = t.client();
  const name = `hosted-${++made}`;
  await client.credentials.create({ name, domain: "localhost", values: { username: sites.user.username, password: sites.user.password } });
  return client.authConnections.create({ domain: "localhost", profile_name: name, login_url: sites.url("localhost", "/password/login"), credential: { name } });
}

const post = (path: string, body: unknown, token?: string) =>
  fetch(`${t.url}/auth/hosted${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
    body: JSON.stringify(body),
  });
const state = (token: string) => fetch(`${t.url}/auth/hosted/state`, { headers: { authorization: `Bearer ${token}` } });

async function exchange(hostedUrl: string): Promise<string> {
  const code = new URLSearchParams(new URL(hostedUrl).hash.slice(1)).get("code");
  const response = await post("/session", { code });
  expect(response.status).toBe(200);
  return ((await response.json()) as { token: string }).token;
}

describe("the hosted login page", () => {
  it("lets a person in their own browser answer each step until the profile is signed in", async () => {
    const { connection, hostedUrl } = await startLogin();
    const url = new URL(hostedUrl);
    // The code travels in the fragment: no request line, proxy or access log carries it.
    expect(url.search).toBe("");
    expect(url.pathname).toBe("/auth/hosted");
    const page = await viewer.newPage();
    try {
      const response = await page.goto(hostedUrl);
      expect(response?.headers()["content-security-policy"]).toContain("frame-ancestors 'none'");
      expect(response?.headers()["cache-control"]).toBe("no-store");
      await page.getByLabel(/email|user/i).fill(sites.user.username);
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByLabel(/password/i).fill(sites.user.password);
      await page.getByRole("button", { name: "Continue" }).click();
      await page.getByText("Signed in. You can close this page.").waitFor();
      // The spent code left the address bar at once.
      expect(new URL(page.url()).hash).toBe("");
    } finally {
      await page.close();
    }
    expect(await t.client().authConnections.get(connection.id)).toMatchObject({ status: "AUTHENTICATED", flow_status: "SUCCESS", hosted_url: null });
    // The code was spent by the page: it opens nothing a second time.
    const again = await post("/session", { code: new URLSearchParams(url.hash.slice(1)).get("code") });
    expect(again.status).toBe(401);
    expect(await again.json()).toMatchObject({ code: "unauthorized" });
  });

  it("gives a token that reads one flow and nothing of the connection's settings or credential", async () => {
    const { connection, hostedUrl } = await startLogin();
    const token = await exchange(hostedUrl);
    let view: Record<string, unknown> = {};
    for (let tries = 0; view.flow_step !== "AWAITING_INPUT" && tries < 200; tries++) {
      view = (await (await state(token)).json()) as Record<string, unknown>;
      if (view.flow_step !== "AWAITING_INPUT") await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(Object.keys(view).sort()).toEqual(
      [
        "choices",
        "domain",
        "error_message",
        "external_action_message",
        "fields",
        "flow_expires_at",
        "flow_status",
        "flow_step",
        "interaction_id",
        "live_view_url",
        "website_error",
      ].sort(),
    );
    // The spec's rules for a submit hold here too.
    const bad = await post("/submit", { field_values: { nope: "x" }, selected_choice_id: "y" }, token);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: "bad_request" });
    const unknown = await post("/submit", { field_values: { fld_unknown: "x" } }, token);
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({ code: "invalid_submission" });
    // Without the token, or with a made-up one, nothing is read or answered.
    for (const response of [
      await fetch(`${t.url}/auth/hosted/state`),
      await state("A".repeat(43)),
      await post("/submit", { field_values: { fld_identifier: "x" } }),
      await post("/submit", { field_values: { fld_identifier: "x" } }, `${token}x`),
    ]) {
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ code: "unauthorized", message: expect.any(String) });
    }
    // Without a live token the body is never read: malformed JSON is a 401, not a 400.
    const unread = await fetch(`${t.url}/auth/hosted/submit`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${"B".repeat(43)}` },
      body: `${"[".repeat(100_000)}not json`,
    });
    expect(unread.status).toBe(401);
    // The token is not an API key.
    const asKey = await fetch(`${t.url}/auth/connections/${connection.id}`, { headers: { authorization: `Bearer ${token}` } });
    expect(asKey.status).toBe(401);
    // A deleted connection takes its page's access with it.
    await t.client().authConnections.delete(connection.id);
    expect((await state(token)).status).toBe(401);
  });

  it("ends a page's access when a newer flow replaces its flow", async () => {
    const client = t.client();
    const connection = await storedCredentialConnection();
    const first = await client.authConnections.login(connection.id);
    const token = await exchange(String(first.hosted_url));
    let view: { flow_status?: string } = {};
    for (let tries = 0; view.flow_status !== "SUCCESS" && tries < 300; tries++) {
      view = (await (await state(token)).json()) as typeof view;
      if (view.flow_status !== "SUCCESS") await new Promise((resolve) => setTimeout(resolve, 100));
    }
    // Ended, the flow still reads for its page (to show the outcome)...
    expect(view.flow_status).toBe("SUCCESS");
    // ...until a newer flow of the connection starts: then the old page reads nothing.
    const second = await client.authConnections.login(connection.id);
    expect((await state(token)).status).toBe(401);
    const fresh = await exchange(String(second.hosted_url));
    expect((await state(fresh)).status).toBe(200);
    await client.authConnections.delete(connection.id);
  });

  it("takes no code once its flow has ended: a link that leaked later opens nothing", async () => {
    const client = t.client();
    const connection = await storedCredentialConnection();
    const started = await client.authConnections.login(connection.id);
    let record = await client.authConnections.get(connection.id);
    while (record.flow_status === "IN_PROGRESS") record = await client.authConnections.get(connection.id);
    expect(record).toMatchObject({ flow_status: "SUCCESS", hosted_url: null });
    const code = new URLSearchParams(new URL(String(started.hosted_url)).hash.slice(1)).get("code");
    const late = await post("/session", { code });
    expect(late.status).toBe(401);
    expect(await late.json()).toMatchObject({ code: "unauthorized" });
    await client.authConnections.delete(connection.id);
  });

  it("shows a hostile site's labels as text: markup in them never runs in the page", async () => {
    const markup = '<img src=x onerror="window.__pwned=1"><script>window.__pwned=2</script>';
    const escaped = markup.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
    const hostile = createServer((_request, response) => {
      response.writeHead(200, { "content-type": "text/html" });
      response.end(
        `<!doctype html><title>Sign in</title><form method="post"><label for="u">Email ${escaped}</label><input id="u" type="email" name="u"><label for="p">Password</label><input id="p" type="password" name="p"><button>Sign in</button></form>`,
      );
    });
    hostile.listen(0, "127.0.0.1");
    await once(hostile, "listening");
    const { port } = hostile.address() as AddressInfo;
    const page = await viewer.newPage();
    try {
      const client = t.client();
      const connection = await client.authConnections.create({
        domain: "localhost",
        profile_name: `hosted-${++made}`,
        login_url: `http://localhost:${port}/login`,
      });
      const started = await client.authConnections.login(connection.id);
      await page.goto(String(started.hosted_url));
      await page.getByText("window.__pwned=1", { exact: false }).first().waitFor();
      expect(await page.locator("label").first().textContent()).toContain(markup);
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await page.locator("#fields img, #fields script").count()).toBe(0);
      await client.authConnections.delete(connection.id);
    } finally {
      await page.close();
      hostile.close();
    }
  });

  it("refuses a code that is no string, too long, or never issued, with the service's error body", async () => {
    for (const body of [{}, { code: 7 }, { code: "x".repeat(200) }]) {
      const response = await post("/session", body);
      expect(response.status).toBe(400);
      expect(await response.json()).toMatchObject({ code: "bad_request" });
    }
    const never = await post("/session", { code: "never-issued-code" });
    expect(never.status).toBe(401);
    const huge = await fetch(`${t.url}/auth/hosted/session`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: "x".repeat(5000) }),
    });
    expect(huge.status).toBe(413);
  });
});
