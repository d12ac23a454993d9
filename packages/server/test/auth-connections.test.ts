import type { ManagedAuth } from "@browser-service/types";
import { afterEach, describe, expect, it, vi } from "vitest";
import { connectionAt } from "../src/auth-connections/flow-expiry.js";
import { managedAuth, writeFixtures } from "./support/fixtures.js";
import { tempDataDir, useTestServer } from "./support/test-server.js";

const EXPIRES_AT = "2031-05-01T12:00:00Z";
const expiresAtMs = Date.parse(EXPIRES_AT);

// A login flow waiting for input, due to expire at EXPIRES_AT.
const waiting = managedAuth("mac_waiting", {
  flow_status: "IN_PROGRESS",
  flow_step: "AWAITING_INPUT",
  flow_type: "LOGIN",
  flow_expires_at: EXPIRES_AT,
  hosted_url: "https://login.example.org/hosted/abc",
  live_view_url: "https://live.example.org/view/abc",
  browser_session_id: "brw_flow",
  interaction_id: "int_1",
  fields: [{ id: "f1", ref: "password", type: "password", reason: "missing" }],
}) as ManagedAuth;
const externalAction = managedAuth("mac_external", {
  flow_status: "IN_PROGRESS",
  flow_step: "AWAITING_EXTERNAL_ACTION",
  flow_type: "REAUTH",
  flow_expires_at: EXPIRES_AT,
  hosted_url: "https://login.example.org/hosted/def",
  live_view_url: "https://live.example.org/view/def",
  external_action_message: "Approve the sign-in on your phone.",
});
const succeeded = managedAuth("mac_done", { flow_status: "SUCCESS", flow_step: "COMPLETED", flow_type: "LOGIN", flow_expires_at: EXPIRES_AT });
const noExpiry = managedAuth("mac_open", {
  flow_status: "IN_PROGRESS",
  flow_step: "DISCOVERING",
  flow_type: "LOGIN",
  hosted_url: "https://login.example.org/h",
  live_view_url: "https://live.example.org/v",
});
const noFlow = managedAuth("mac_idle");

// Every answer, expired ones included, is a valid ManagedAuth (rule 4 needs the URLs only while IN_PROGRESS).
const t = useTestServer(() => {
  const dataDir = tempDataDir();
  const fixtures = writeFixtures(dataDir, {
    auth_connections: [waiting, externalAction, succeeded, noExpiry, noFlow].map((record) => ({ project: "Default", ...record })),
  });
  return { dataDir, fixtures };
});

afterEach(() => {
  vi.useRealTimers();
});

/** Sets the clock the in-process server reads (only `Date`: timers and I/O run as usual). */
function clockAt(ms: number): void {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(ms);
}

describe("GET /auth/connections/{id}: a login flow and time", () => {
  it("IN_PROGRESS before flow_expires_at: served as stored", async () => {
    clockAt(expiresAtMs - 1);
    expect(await t.client().authConnections.get("mac_waiting")).toEqual(waiting);
    expect(await t.client().authConnections.get("mac_external")).toEqual(externalAction);
  });

  it("IN_PROGRESS → EXPIRED once flow_expires_at is reached: the URLs of a flow in progress become null, the rest stays", async () => {
    for (const at of [expiresAtMs, expiresAtMs + 86_400_000]) {
      clockAt(at);
      expect(await t.client().authConnections.get("mac_waiting")).toEqual({ ...waiting, flow_status: "EXPIRED", hosted_url: null, live_view_url: null });
      // external_action_message stays with its step, as the schema's rule 3 wants.
      expect(await t.client().authConnections.get("mac_external")).toEqual({
        ...externalAction,
        flow_status: "EXPIRED",
        hosted_url: null,
        live_view_url: null,
      });
    }
  });

  it("leaves a finished flow, a flow without flow_expires_at and a connection without a flow as they are", async () => {
    clockAt(expiresAtMs + 86_400_000);
    const client = t.client();
    expect(await client.authConnections.get("mac_done")).toEqual(succeeded);
    expect(await client.authConnections.get("mac_open")).toEqual(noExpiry);
    expect(await client.authConnections.get("mac_idle")).toEqual(noFlow);
  });
});

describe("connectionAt", () => {
  it("reads every RFC 3339 form of flow_expires_at: lower-case t and z, offsets, fractions", () => {
    const record = { ...waiting, flow_expires_at: "2031-05-01t14:00:00.500+02:00" };
    expect(connectionAt(record, expiresAtMs + 499).flow_status).toBe("IN_PROGRESS");
    expect(connectionAt(record, expiresAtMs + 500).flow_status).toBe("EXPIRED");
    expect(connectionAt({ ...waiting, flow_expires_at: "2031-05-01t12:00:00z" }, expiresAtMs).flow_status).toBe("EXPIRED");
  });
});
