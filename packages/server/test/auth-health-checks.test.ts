import { type LoginSites, startLoginSites } from "@browser-service/test-pages/login-sites";
import type { ManagedAuth, ManagedAuthTimelineEvent } from "@browser-service/types";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { useTestServer } from "./support/test-server.js";

// Health checks on schedule: this server checks every connection each second
// (`authCheckSeconds`) instead of its interval, against the local login sites, whose
// sessions the test can end (`expireSessions`) or whose server it can stop.

let sites: LoginSites;
beforeAll(async () => {
  sites = await startLoginSites();
});
afterAll(async () => {
  await sites?.close();
});
const t = useTestServer({ authFlowSeconds: 120, authCheckSeconds: 1 });

let made = 0;
const connections: string[] = [];
// Each connection is checked every second: one left behind would keep a browser busy.
afterEach(async () => {
  for (const id of connections.splice(0))
    await t
      .client()
      .authConnections.delete(id)
      .catch(() => undefined);
});
const TERMINAL = new Set(["SUCCESS", "FAILED", "EXPIRED", "CANCELED"]);

/** A connection on the `password` site of `siteServer`, logged in with a stored credential. */
async function loggedIn(extra: Record<string, unknown> = {}, siteServer: LoginSites = sites): Promise<ManagedAuth> {
  const client = t.client();
  const name = `checked-${++made}`;
  await client.credentials.create({ name, domain: "localhost", values: { username: siteServer.user.username, password: siteServer.user.password } });
  const connection = await client.authConnections.create({
    domain: "localhost",
    profile_name: name,
    login_url: siteServer.url("localhost", "/password/login"),
    credential: { name },
    ...extra,
  });
  connections.push(connection.id);
  await client.authConnections.login(connection.id);
  const done = await until(connection.id, (record) => TERMINAL.has(String(record.flow_status)));
  expect(done).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED" });
  return done;
}

/** Reads connection `id` until `ready` holds (bounded by the test's timeout). */
async function until(id: string, ready: (record: ManagedAuth) => boolean): Promise<ManagedAuth> {
  for (;;) {
    const record = await t.client().authConnections.get(id);
    if (ready(record)) return record;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function timeline(id: string): Promise<ManagedAuthTimelineEvent[]> {
  return t.client().authConnections.timeline(id, { limit: 100 });
}

const checkedAfter = (time: string | null | undefined) => (record: ManagedAuth) =>
  record.last_auth_check_at != null && (time == null || Date.parse(record.last_auth_check_at) > Date.parse(time));

describe("health checks", () => {
  it("find a valid session and keep the connection AUTHENTICATED, moving last_auth_check_at", async () => {
    const connection = await loggedIn();
    expect(connection).not.toHaveProperty("health_check_unavailable_reason");
    const first = await until(connection.id, checkedAfter(undefined));
    const second = await until(connection.id, checkedAfter(first.last_auth_check_at));
    expect(second.status).toBe("AUTHENTICATED");
    expect(second.last_auth_at).toBe(second.last_auth_check_at);
    const checks = (await timeline(connection.id)).filter((event) => event.type === "health_check");
    expect(checks.length).toBeGreaterThanOrEqual(2);
    expect(checks[0]).toMatchObject({ status: "AUTHENTICATED", previous_status: "AUTHENTICATED", browser_session_id: expect.any(String) });
    // It says when it ended: what a check costs is read off the timeline.
    expect(Date.parse(String(checks[0]?.updated_at))).toBeGreaterThan(Date.parse(String(checks[0]?.timestamp)));
    expect(checks[0]).not.toHaveProperty("error_code");
    // The check's browser is the service's own: no key reads it.
    await expect(t.client().browsers.get(String(checks[0]?.browser_session_id))).rejects.toMatchObject({ status: 404 });
  });

  it("re-authenticate with the stored credential when the site ended the session", async () => {
    const connection = await loggedIn();
    await until(connection.id, checkedAfter(undefined));
    const before = (await timeline(connection.id)).filter((event) => event.type === "reauth").length;
    expect(before).toBe(0);
    sites.expireSessions();
    const reauthed = await until(connection.id, (record) => record.flow_type === "REAUTH" && TERMINAL.has(String(record.flow_status)));
    expect(reauthed).toMatchObject({ flow_status: "SUCCESS", status: "AUTHENTICATED", can_reauth: true });
    const events = await timeline(connection.id);
    const expired = events.find((event) => event.type === "health_check" && event.status === "NEEDS_AUTH");
    expect(expired).toMatchObject({ previous_status: "AUTHENTICATED" });
    const reauth = events.find((event) => event.type === "reauth");
    expect(reauth).toMatchObject({ status: "SUCCESS" });
    expect(Date.parse(String(reauth?.timestamp))).toBeGreaterThanOrEqual(Date.parse(String(expired?.timestamp)));
  });

  it("try a stored password the site rejected no more: an account is not locked by retries", async () => {
    const connection = await loggedIn();
    await t.client().credentials.update(connection.profile_name, { values: { password: "no longer right" } });
    sites.expireSessions();
    const rejected = await until(connection.id, (record) => record.flow_type === "REAUTH" && TERMINAL.has(String(record.flow_status)));
    expect(rejected).toMatchObject({
      flow_status: "FAILED",
      error_code: "login_rejected",
      status: "NEEDS_AUTH",
      can_reauth: false,
      can_reauth_reason: "requires_customer_input",
    });
    const later = await until(connection.id, checkedAfter(rejected.last_auth_check_at));
    await until(connection.id, checkedAfter(later.last_auth_check_at));
    expect((await timeline(connection.id)).filter((event) => event.type === "reauth")).toHaveLength(1);
  });

  it("mark NEEDS_AUTH without re-authenticating when auto_reauth is off", async () => {
    const connection = await loggedIn({ auto_reauth: false });
    await until(connection.id, checkedAfter(undefined));
    sites.expireSessions();
    const expired = await until(connection.id, (record) => record.status === "NEEDS_AUTH");
    expect(expired.flow_type).toBe("LOGIN");
    await until(connection.id, checkedAfter(expired.last_auth_check_at));
    expect((await timeline(connection.id)).filter((event) => event.type === "reauth")).toEqual([]);
  });

  it("keep the status when the site does not answer (inconclusive), and name what is missing before any login", async () => {
    const elsewhere = await startLoginSites();
    let connection: ManagedAuth;
    try {
      connection = await loggedIn({}, elsewhere);
    } finally {
      await elsewhere.close();
    }
    const checked = await until(connection.id, checkedAfter(undefined));
    const later = await until(connection.id, checkedAfter(checked.last_auth_check_at));
    expect(later.status).toBe("AUTHENTICATED");
    const check = (await timeline(connection.id)).find((event) => event.type === "health_check");
    expect(check).toMatchObject({ status: "AUTHENTICATED", error_code: "page_unavailable" });

    const never = await t.client().authConnections.create({ domain: "never.example", profile_name: "never-logged-in" });
    connections.push(never.id);
    expect(never.health_check_unavailable_reason).toBe("no_auth_check_url");
    const seen = await until(never.id, checkedAfter(undefined));
    expect(seen).toMatchObject({ status: "NEEDS_AUTH", health_check_unavailable_reason: "no_auth_check_url" });
    expect((await timeline(never.id))[0]).toMatchObject({ type: "health_check", status: "NEEDS_AUTH", error_code: "no_auth_check_url" });
    // Checks turned off: the reason is omitted and no check runs any more.
    const off = await t.client().authConnections.update(never.id, { health_checks: false });
    expect(off).not.toHaveProperty("health_check_unavailable_reason");
    const count = (await timeline(never.id)).length;
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect((await timeline(never.id)).length).toBe(count);
  });
});
