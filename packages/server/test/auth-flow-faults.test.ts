import { rmSync } from "node:fs";
import { createClient } from "@browser-service/client";
import { type LoginSites, startLoginSites } from "@browser-service/test-pages/login-sites";
import type { ManagedAuth } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spawnServer } from "./support/child-server.js";
import { followEvents } from "./support/event-stream.js";
import { tempDataDir, useTestServer } from "./support/test-server.js";

// Login flows that cannot finish: a site that never answers expires on time, and a flow
// whose server is killed or stopped never reads IN_PROGRESS again.

let sites: LoginSites;
const dirs: string[] = [];
beforeAll(async () => {
  sites = await startLoginSites();
});
afterAll(async () => {
  await sites?.close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const TERMINAL = new Set(["SUCCESS", "FAILED", "EXPIRED", "CANCELED"]);

async function until<T>(read: () => Promise<T>, ready: (value: T) => boolean): Promise<T> {
  for (;;) {
    const value = await read();
    if (ready(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe("a login flow on a site that never answers", () => {
  const t = useTestServer({ authFlowSeconds: 10 });

  it("ends EXPIRED at flow_expires_at, its browser ended", async () => {
    const client = t.client();
    const connection = await client.authConnections.create({ domain: "localhost", profile_name: "tortoise", login_url: sites.url("localhost", "/slow/login") });
    const started = await client.authConnections.login(connection.id);
    const stream = await followEvents(`${t.url}/auth/connections/${connection.id}/events`, { authorization: `Bearer ${t.orgKey}` });
    const last = (await stream.ended).at(-1);
    expect(last).toMatchObject({ event: "managed_auth_state", flow_status: "EXPIRED" });
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(started.flow_expires_at));
    const record = await client.authConnections.get(connection.id);
    expect(record).toMatchObject({ flow_status: "EXPIRED", hosted_url: null, live_view_url: null, status: "NEEDS_AUTH" });
    // An expired flow is superseded by the next login at once, even while its browser is
    // still ending (saving nothing into the profile the new one opens).
    expect((await client.authConnections.login(connection.id)).flow_type).toBe("LOGIN");
    await client.authConnections.delete(connection.id);
    // The flows' browsers (the service's own, never listed) have all ended: their slots are free.
    const limits = await until(
      () => client.limits.get(),
      (read) => read.concurrent_sessions_used === 0,
    );
    expect(limits.concurrent_sessions_used).toBe(0);
  });
});

describe("a login flow whose server ends", () => {
  for (const how of ["killed", "stopped"] as const) {
    it(`reads FAILED with flow_interrupted once its server is ${how}, and a new login starts`, async () => {
      const dataDir = tempDataDir();
      dirs.push(dataDir);
      let server = await spawnServer(dataDir);
      const key = server.printedKey as string;
      const clientOf = (url: string) => createClient({ baseUrl: url, apiKey: key, maxRetries: 0, projectId: null });
      const connection = await clientOf(server.url).authConnections.create({
        domain: "localhost",
        profile_name: `ended-${how}`,
        login_url: sites.url("localhost", "/two-step/login"),
      });
      await clientOf(server.url).authConnections.login(connection.id);
      await until(
        () => clientOf(server.url).authConnections.get(connection.id),
        (record: ManagedAuth) => record.flow_step === "AWAITING_INPUT",
      );
      if (how === "killed") await server.kill();
      else expect(await server.stop()).toBe(0);
      server = await spawnServer(dataDir);
      try {
        const client = clientOf(server.url);
        const after = await client.authConnections.get(connection.id);
        expect(after).toMatchObject({ flow_status: "FAILED", error_code: "flow_interrupted", hosted_url: null, live_view_url: null });
        expect(TERMINAL.has(String(after.flow_status))).toBe(true);
        expect((await client.authConnections.timeline(connection.id))[0]).toMatchObject({ type: "login", status: "FAILED" });
        expect((await client.authConnections.login(connection.id)).flow_type).toBe("LOGIN");
      } finally {
        await server.stop();
      }
    });
  }
});
