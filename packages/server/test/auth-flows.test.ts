import { type LoginSites, startLoginSites } from "@browser-service/test-pages/login-sites";
import type { ManagedAuth } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FollowedStream, followBody } from "./support/event-stream.js";
import { managedAuth, writeFixtures } from "./support/fixtures.js";
import { startTestServer, tempDataDir, useTestServer } from "./support/test-server.js";
import { drive } from "./support/webmcp-driver.js";

// Login flows on real forms: a robot in a sandboxed Chromium signs in to the local login
// sites (tools/test-pages), types what the connection's credential holds, asks for the
// rest, and leaves the profile signed in. `localhost` and `127.0.0.1` are two domains.

let sites: LoginSites;
beforeAll(async () => {
  sites = await startLoginSites();
});
afterAll(async () => {
  await sites?.close();
});
const t = useTestServer({ authFlowSeconds: 120 });

const TERMINAL = new Set(["SUCCESS", "FAILED", "EXPIRED", "CANCELED"]);
let made = 0;

/** A connection for `site` on `localhost` (its login page given), with a credential of `values` unless `null`. */
async function connect(
  site: string,
  values: Record<string, string> | null,
  extra: Record<string, unknown> = {},
  totpSecret?: string,
  credentialDomain = "localhost",
): Promise<ManagedAuth> {
  const client = t.client();
  const name = `${site}-${++made}`;
  if (values !== null) {
    await client.credentials.create({ name, domain: credentialDomain, values, ...(totpSecret === undefined ? {} : { totp_secret: totpSecret }) });
  }
  return client.authConnections.create({
    domain: "localhost",
    profile_name: name,
    login_url: sites.url("localhost", `/${site}/login`),
    ...(values === null ? {} : { credential: { name } }),
    ...extra,
  });
}

/** The connection's events as this project's client follows them. */
async function follow(id: string): Promise<FollowedStream> {
  const controller = new AbortController();
  return followBody(await t.client().authConnections.follow(id, { signal: controller.signal }), controller);
}

const step = (name: string) => (event: Record<string, unknown>) => event.flow_step === name || TERMINAL.has(String(event.flow_status));

/** The text of the account page a browser with `profileName` gets. */
async function accountPage(profileName: string, site: string): Promise<string> {
  const browser = await t.client().browsers.create({ profile: { name: profileName } });
  const driver = await drive(browser.cdp_ws_url);
  try {
    const page = await driver.open(sites.url("localhost", `/${site}/account`));
    return await page.locator("main").innerText();
  } finally {
    await driver.disconnect();
    await t.client().browsers.delete(browser.id);
  }
}

const { user } = { user: { username: "ada@example.com", password: "correct horse battery", totpSecret: "JBSWY3DPEHPK3PXP" } };

describe("a login flow with a stored credential", () => {
  it("signs in on one page, saves the profile signed in, and can re-authenticate", async () => {
    const connection = await connect("password", { username: user.username, password: user.password });
    expect(connection).toMatchObject({ status: "NEEDS_AUTH", flow_status: null, can_reauth: false, can_reauth_reason: "no_prior_successful_login" });
    const started = await t.client().authConnections.login(connection.id);
    expect(started).toMatchObject({ id: connection.id, flow_type: "LOGIN" });
    expect(started.hosted_url).toMatch(/^http:\/\//);
    const stream = await follow(connection.id);
    const events = await stream.ended;
    expect(events[0]).toMatchObject({ event: "managed_auth_state", flow_status: "IN_PROGRESS" });
    expect(events.at(-1)).toMatchObject({ event: "managed_auth_state", flow_status: "SUCCESS", flow_step: "COMPLETED" });
    const done = await t.client().authConnections.get(connection.id);
    expect(done).toMatchObject({
      status: "AUTHENTICATED",
      flow_status: "SUCCESS",
      hosted_url: null,
      live_view_url: null,
      post_login_url: sites.url("localhost", "/password/account"),
      can_reauth: true,
    });
    expect(await accountPage(connection.profile_name, "password")).toContain("Signed in as ada@example.com");
    const timeline = await t.client().authConnections.timeline(connection.id);
    expect(timeline[0]).toMatchObject({ type: "login", status: "SUCCESS", step: "COMPLETED", browser_session_id: done.browser_session_id });
    // The flow's browser (the service's own, never readable) is gone: its slot is free again.
    await expect(t.client().browsers.get(String(done.browser_session_id))).rejects.toMatchObject({ status: 404 });
    expect((await t.client().limits.get()).concurrent_sessions_used).toBe(0);
  });

  it("captures the connection's browser.telemetry in its flow's browser, never the bodies that carry what it typed", async () => {
    // The API sets no connection's browser settings; a fixtures file does.
    const dataDir = tempDataDir();
    const fixtures = writeFixtures(dataDir, {
      auth_connections: [
        {
          project: "Default",
          ...managedAuth("mac_telemetry", {
            domain: "localhost",
            profile_name: "telemetry-profile",
            status: "NEEDS_AUTH",
            login_url: sites.url("localhost", "/password/login"),
            credential: { name: "telemetry-login" },
            browser: { telemetry: { browser: { network: { enabled: true }, page: { enabled: true } } } },
          }),
        },
      ],
    });
    const server = await startTestServer({ dataDir, fixtures, authFlowSeconds: 120 });
    try {
      const client = server.client();
      await client.credentials.create({ name: "telemetry-login", domain: "localhost", values: { username: user.username, password: user.password } });
      await client.authConnections.login("mac_telemetry");
      const controller = new AbortController();
      const events = await followBody(await client.authConnections.follow("mac_telemetry", { signal: controller.signal }), controller).ended;
      expect(events.at(-1)).toMatchObject({ flow_status: "SUCCESS" });
      const browserId = String((await client.authConnections.get("mac_telemetry")).browser_session_id);
      // The flow's browser is the service's own (no read of it), but what it captured is its project's to read.
      const captured = await client.telemetry.events(browserId, { limit: 1000 });
      expect(captured.map((envelope) => envelope.event.type)).toEqual(expect.arrayContaining(["page_navigation", "network_request", "network_response"]));
      const posts = captured.filter((envelope) => envelope.event.type === "network_request" && envelope.event.data?.method === "POST");
      expect(posts.length).toBeGreaterThan(0);
      for (const post of posts) expect(post.event.data?.post_data).toBeUndefined();
      expect(JSON.stringify(captured)).not.toContain(encodeURIComponent(user.password));
      expect(JSON.stringify(captured)).not.toContain(user.password);
      // Another project does not see it.
      const other = await client.projects.create({ name: `flow-telemetry-${Date.now()}` });
      await expect(client.telemetry.events(browserId, {}, { projectId: other.id })).rejects.toMatchObject({ status: 404 });
    } finally {
      await server.close();
    }
  });

  it("generates the TOTP code from the credential's secret and picks the authenticator when asked how", async () => {
    for (const site of ["totp", "mfa"]) {
      const connection = await connect(site, { username: user.username, password: user.password }, {}, user.totpSecret);
      await t.client().authConnections.login(connection.id);
      const last = (await (await follow(connection.id)).ended).at(-1);
      expect(last, site).toMatchObject({ flow_status: "SUCCESS" });
      expect(await t.client().authConnections.get(connection.id)).toMatchObject({ can_reauth: true, can_reauth_reason: "requirements_satisfiable" });
    }
  });

  it("ends FAILED with the site's words when it rejects the stored password, and keeps the profile as it was", async () => {
    const connection = await connect("password", { username: user.username, password: "wrong" });
    await t.client().authConnections.login(connection.id);
    await (await follow(connection.id)).ended;
    expect(await t.client().authConnections.get(connection.id)).toMatchObject({
      status: "NEEDS_AUTH",
      flow_status: "FAILED",
      error_code: "login_rejected",
      website_error: "Incorrect email or password.",
    });
    expect((await t.client().profiles.get(connection.profile_name)).size_bytes).toBe(0);
    // One try: a stored password the site refused is not typed again.
    expect(sites.submissions("password").filter((post) => post.fields.password === "wrong")).toHaveLength(1);
  });

  it("never types a credential on a domain the connection does not allow", async () => {
    const client = t.client();
    await client.credentials.create({ name: "lookalike-cred", domain: "localhost", values: { username: user.username, password: user.password } });
    const connection = await client.authConnections.create({
      domain: "localhost",
      profile_name: "lookalike",
      login_url: sites.url("127.0.0.1", "/lookalike/login"),
      credential: { name: "lookalike-cred" },
    });
    await client.authConnections.login(connection.id);
    await (await follow(connection.id)).ended;
    expect(await client.authConnections.get(connection.id)).toMatchObject({ flow_status: "FAILED", error_code: "domain_not_allowed" });
    expect(sites.submissions("lookalike")).toEqual([]);
  });
});

describe("a login flow that asks a person", () => {
  it("asks for each missing value under a new interaction, refuses stale ones, and saves what was typed", async () => {
    const client = t.client();
    const connection = await connect("two-step", null);
    await client.authConnections.login(connection.id);
    const stream = await follow(connection.id);
    const first = await stream.next(step("AWAITING_INPUT"));
    expect(first.fields).toEqual([expect.objectContaining({ id: "fld_username", type: "identifier", reason: "missing" })]);
    const asked = await client.authConnections.get(connection.id);
    expect(asked.interaction_id).toMatch(/^int_/);
    await expect(
      client.authConnections.submit(connection.id, { interaction_id: asked.interaction_id ?? "", field_values: { fld_password: "x" } }),
    ).rejects.toMatchObject({
      status: 400,
      code: "invalid_submission",
    });
    await client.authConnections.submit(connection.id, { interaction_id: asked.interaction_id ?? "", field_values: { fld_username: user.username } });
    const second = await stream.next((event) => event !== first && step("AWAITING_INPUT")(event) && JSON.stringify(event.fields).includes("fld_password"));
    expect(second.fields).toEqual([expect.objectContaining({ id: "fld_password", type: "password" })]);
    await expect(
      client.authConnections.submit(connection.id, { interaction_id: asked.interaction_id ?? "", field_values: { fld_password: user.password } }),
    ).rejects.toMatchObject({
      status: 409,
      code: "stale_interaction",
    });
    const now = await client.authConnections.get(connection.id);
    expect(now.interaction_id).not.toBe(asked.interaction_id);
    await client.authConnections.submit(connection.id, { interaction_id: now.interaction_id ?? "", field_values: { fld_password: user.password } });
    expect((await stream.ended).at(-1)).toMatchObject({ flow_status: "SUCCESS" });
    await expect(client.authConnections.submit(connection.id, { field_values: { fld_password: "again" } })).rejects.toMatchObject({
      status: 409,
      code: "flow_not_awaiting_input",
    });
    const done = await client.authConnections.get(connection.id);
    expect(done.credential?.name).toBeTruthy();
    const saved = await client.credentials.get(done.credential?.name ?? "");
    expect(saved.value_keys).toEqual(["password", "username"]);
    expect(done).toMatchObject({ can_reauth: true });
  });

  it("offers the verification methods as choices, then asks for the texted code (never saved)", async () => {
    const client = t.client();
    const connection = await connect("mfa", { username: user.username, password: user.password });
    await client.authConnections.login(connection.id);
    const stream = await follow(connection.id);
    const choosing = await stream.next(step("AWAITING_INPUT"));
    const choices = choosing.choices as { id: string; label: string; type: string; mfa_type?: string }[];
    expect(choices.map((choice) => [choice.type, choice.mfa_type])).toEqual([
      ["mfa_method", "totp"],
      ["mfa_method", "sms"],
    ]);
    await expect(client.authConnections.submit(connection.id, { selected_choice_id: "chc_9" })).rejects.toMatchObject({
      status: 400,
      code: "invalid_submission",
    });
    const sms = choices.find((choice) => choice.mfa_type === "sms");
    await client.authConnections.submit(connection.id, { selected_choice_id: sms?.id ?? "" });
    const code = await stream.next(
      (event) => step("AWAITING_INPUT")(event) && (TERMINAL.has(String(event.flow_status)) || JSON.stringify(event.fields ?? []).includes('"code"')),
    );
    expect(code.fields).toEqual([expect.objectContaining({ type: "code", input_mode: "numeric" })]);
    const fieldId = (code.fields as { id: string }[])[0]?.id ?? "";
    await client.authConnections.submit(connection.id, { field_values: { [fieldId]: "424242" } });
    expect((await stream.ended).at(-1)).toMatchObject({ flow_status: "SUCCESS" });
    const done = await client.authConnections.get(connection.id);
    expect(done).toMatchObject({ can_reauth: false, can_reauth_reason: "requires_sms_code" });
    expect((await client.credentials.get(connection.profile_name)).value_keys).toEqual(["password", "username"]);
  });

  it("follows an identity provider on another origin that the connection allows", async () => {
    const client = t.client();
    // The account is the identity provider's: so is the credential's domain.
    const connection = await connect("sso", { username: user.username, password: user.password }, { allowed_domains: ["127.0.0.1"] }, undefined, "127.0.0.1");
    await client.authConnections.login(connection.id);
    const stream = await follow(connection.id);
    const choosing = await stream.next(step("AWAITING_INPUT"));
    expect(choosing.choices).toEqual([expect.objectContaining({ type: "sso_provider", label: "Sign in with Example ID" })]);
    expect(choosing.pending_sso_buttons).toEqual([expect.objectContaining({ provider: "Example ID" })]);
    await client.authConnections.submit(connection.id, { selected_choice_id: (choosing.choices as { id: string }[])[0]?.id ?? "" });
    expect((await stream.ended).at(-1)).toMatchObject({ flow_status: "SUCCESS" });
    expect(sites.submissions("sso").map((post) => post.host)).toContain("127.0.0.1");
    expect(await accountPage(connection.profile_name, "sso")).toContain("Signed in as");
  });

  it("offers an account picker's accounts, and picks the same account again without asking", async () => {
    const client = t.client();
    const connection = await connect("workspace", { username: user.username, password: user.password });
    await client.authConnections.login(connection.id);
    const stream = await follow(connection.id);
    const choosing = await stream.next(step("AWAITING_INPUT"));
    const choices = choosing.choices as { id: string; label: string; type: string }[];
    expect(choices.map((choice) => [choice.type, choice.label])).toEqual([
      ["account", "Acme Corp"],
      ["account", "Beta Labs"],
    ]);
    expect(choosing.sign_in_options).toEqual(choices.map((choice) => ({ id: choice.id, label: choice.label, description: null })));
    await client.authConnections.submit(connection.id, { selected_choice_id: choices[1]?.id ?? "" });
    expect((await stream.ended).at(-1)).toMatchObject({ flow_status: "SUCCESS" });
    expect(await client.authConnections.get(connection.id)).toMatchObject({
      sign_in_options: [],
      can_reauth: true,
      can_reauth_reason: "requirements_satisfiable",
    });
    expect(await accountPage(connection.profile_name, "workspace")).toContain("to Beta Labs");
    // The session ends; the next login goes through the picker unattended, to the same account.
    sites.expireSessions();
    await client.authConnections.login(connection.id);
    const again = await (await follow(connection.id)).ended;
    expect(again.filter((event) => event.flow_step === "AWAITING_INPUT")).toEqual([]);
    expect(again.at(-1)).toMatchObject({ flow_status: "SUCCESS" });
    expect(sites.submissions("workspace").flatMap((post) => (post.fields.workspace === undefined ? [] : [post.fields.workspace]))).toEqual(["beta", "beta"]);
  });

  it("waits while a person approves an emailed link", async () => {
    const client = t.client();
    const connection = await connect("email-link", { username: user.username });
    await client.authConnections.login(connection.id);
    const stream = await follow(connection.id);
    const waiting = await stream.next(step("AWAITING_EXTERNAL_ACTION"));
    expect(waiting.external_action_message).toMatch(/Check your email/);
    const link = sites.pendingEmailLink();
    expect(link).toBeDefined();
    await fetch(String(link));
    expect((await stream.ended).at(-1)).toMatchObject({ flow_status: "SUCCESS" });
    expect(await client.authConnections.get(connection.id)).toMatchObject({ can_reauth: false, can_reauth_reason: "requires_external_action" });
  });
});

describe("a login flow's bounds", () => {
  it("refuses a second login while one runs, and ends the flow and its browser when the connection is deleted", async () => {
    const client = t.client();
    const connection = await connect("two-step", null);
    await client.authConnections.login(connection.id);
    await expect(client.authConnections.login(connection.id)).rejects.toMatchObject({ status: 409, code: "flow_in_progress" });
    const stream = await follow(connection.id);
    await stream.next(step("AWAITING_INPUT"));
    const browserId = (await client.authConnections.get(connection.id)).browser_session_id ?? "";
    await client.authConnections.delete(connection.id);
    await stream.ended;
    await expect(client.authConnections.get(connection.id)).rejects.toMatchObject({ status: 404 });
    await expect(client.browsers.get(browserId)).rejects.toMatchObject({ status: 404 });
  });
});

describe("auth connection records", () => {
  it("are created once per profile and domain, listed with filters, changed and checked", async () => {
    const client = t.client();
    const first = await client.authConnections.create({ domain: "WWW.Records.Example", profile_name: "records", allowed_domains: ["*.idp.example"] });
    expect(first).toMatchObject({
      domain: "records.example",
      allowed_domains: ["idp.example"],
      save_credentials: true,
      auto_reauth: true,
      health_checks: true,
    });
    await expect(client.authConnections.create({ domain: "records.example", profile_name: "records" })).rejects.toMatchObject({
      status: 409,
      code: "auth_connection_exists",
    });
    await expect(client.authConnections.create({ domain: "x.example", profile_name: "x", credential: { name: "no-such" } })).rejects.toMatchObject({
      status: 404,
      code: "credential_not_found",
    });
    expect((await client.profiles.get("records")).name).toBe("records");
    expect((await client.authConnections.list({ domain: "records.example" })).map((item) => item.id)).toEqual([first.id]);
    expect((await client.authConnections.list({ profile_name: "records" })).map((item) => item.id)).toEqual([first.id]);
    const changed = await client.authConnections.update(first.id, { login_url: "https://records.example/login", health_check_interval: 900 });
    expect(changed).toMatchObject({ login_url: "https://records.example/login", health_check_interval: 900 });
    // Stored entries never start with `*.` or `www.`, however short what remains.
    const roots = await client.authConnections.update(first.id, { allowed_domains: ["*.S", "www.com", "*.www.Idp.example", "idp.example"] });
    expect(roots.allowed_domains).toEqual(["s", "com", "idp.example"]);
    expect(await client.authConnections.update(first.id, { login_url: "" })).not.toHaveProperty("login_url");
    await expect(client.authConnections.submit(first.id, { field_values: { a: "b" } })).rejects.toMatchObject({ status: 409, code: "flow_not_awaiting_input" });
    const events = await fetch(`${t.url}/auth/connections/${first.id}/events`, { headers: { authorization: `Bearer ${t.orgKey}` } });
    expect(events.status).toBe(409);
    expect(await events.json()).toMatchObject({ code: "no_flow" });
    await client.authConnections.delete(first.id);
    await expect(client.authConnections.delete(first.id)).rejects.toMatchObject({ status: 404 });
  });
});
