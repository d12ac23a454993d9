import type { Browser } from "@browser-service/types";
import { afterEach, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { IdleTimeouts } from "../src/browsers/idle-timeouts.js";
import { startTestServer, useTestServer } from "./support/test-server.js";

// A browser nobody uses ends by itself after its `timeout_seconds`, as DELETE ends it.
// The logic runs on a fake clock; one real, short timeout runs end to end.

describe("the idle timeouts", () => {
  it("end a browser neither held nor asked for during its timeout, once, and never one still held", async () => {
    let now = 0;
    const ended: [string, number][] = [];
    const idle = new IdleTimeouts({ clock: () => now, sweepMs: 0, end: async (id, idleMs) => void ended.push([id, idleMs]) });
    idle.watch("quiet", 10);
    idle.watch("asked", 10);
    idle.watch("held", 10);
    const release = idle.hold("held");
    now = 9_000;
    idle.touch("asked");
    idle.sweep();
    expect(ended).toEqual([]);
    now = 10_000;
    idle.sweep();
    expect(ended).toEqual([["quiet", 10_000]]);
    // Held for a day: still active; released, its time starts then.
    now = 86_400_000;
    idle.sweep();
    expect(ended.map(([id]) => id)).toEqual(["quiet", "asked"]);
    release();
    release();
    now += 9_999;
    idle.sweep();
    expect(ended.map(([id]) => id)).toEqual(["quiet", "asked"]);
    now += 1;
    idle.sweep();
    idle.sweep();
    expect(ended.map(([id]) => id)).toEqual(["quiet", "asked", "held"]);
    // Forgotten (deleted or crashed meanwhile): never ended again, and nothing to touch or hold.
    idle.watch("gone", 10);
    idle.forget("gone");
    idle.touch("gone");
    idle.hold("gone")();
    now += 60_000;
    idle.sweep();
    expect(ended).toHaveLength(3);
    idle.close();
  });
});

describe("a browser's timeout_seconds", () => {
  let now = 0;
  // A heartbeat of a second: short for the test, and long enough that a loaded machine's clients answer in time.
  const t = useTestServer({ browserTimeouts: { clock: () => now, sweepMs: 10 }, cdpLimits: { heartbeatMs: 1_000 }, liveView: { heartbeatMs: 1_000 } });
  const sockets: WebSocket[] = [];
  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.terminate();
    const client = t.client();
    for (const browser of await client.browsers.list({ limit: 100 })) await client.browsers.delete(browser.id);
  });

  /** Moves the fake clock on, and waits for a sweep or two to see it. */
  const pass = async (seconds: number) => {
    now += seconds * 1000;
    await new Promise((resolve) => setTimeout(resolve, 60));
  };
  /** A DevTools client or a live view viewer of `browser`, open; `autoPong: false` answers no ping. */
  const connectTo = (browser: Browser, kind: "devtools" | "live view", autoPong: boolean) => {
    const socket =
      kind === "devtools"
        ? new WebSocket(browser.cdp_ws_url, { perMessageDeflate: false, autoPong })
        : new WebSocket(
            browser.live_view_url.replace("http:", "ws:").split("#")[0] as string,
            ["browser-service.live-view", `token.${new URLSearchParams(new URL(browser.live_view_url).hash.slice(1)).get("token")}`],
            { autoPong },
          );
    sockets.push(socket);
    return new Promise<WebSocket>((resolve, reject) => socket.once("open", () => resolve(socket)).once("error", reject));
  };
  /** Whether the project lists the browser: a list is not activity on it. */
  const listed = async (browser: Browser) => (await t.client().browsers.list({ limit: 100 })).some((each) => each.id === browser.id);

  it("is 60 when omitted, shown on the record, and refused outside 10 to 259200 with the rule named", async () => {
    const client = t.client();
    expect((await client.browsers.create()).timeout_seconds).toBe(60);
    const chosen = await client.browsers.create({ timeout_seconds: 259_200 });
    expect(chosen.timeout_seconds).toBe(259_200);
    expect((await client.browsers.get(chosen.id)).timeout_seconds).toBe(259_200);
    for (const timeout_seconds of [9, 259_201, 1.5, "60", null]) {
      const response = await fetch(`${t.url}/browsers`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
        body: JSON.stringify({ timeout_seconds }),
      });
      const body = (await response.json()) as { code: string; details: { message: string; field?: string }[] };
      expect([response.status, body.code], String(timeout_seconds)).toEqual([400, "bad_request"]);
      expect(JSON.stringify(body.details), String(timeout_seconds)).toContain("timeout_seconds");
    }
  });

  it("ends a browser nobody uses as DELETE does: its id 404, its slot free, its token dead", async () => {
    const client = t.client();
    await client.projects.updateLimits("Default", { max_concurrent_sessions: 1 });
    try {
      const browser = await client.browsers.create({ timeout_seconds: 10, telemetry: {} });
      await pass(9);
      expect(await listed(browser)).toBe(true);
      await pass(1);
      await expect.poll(() => listed(browser)).toBe(false);
      await expect(client.browsers.get(browser.id)).rejects.toMatchObject({ status: 404 });
      // Its telemetry, kept after it ended, says why it ended.
      const system = await client.telemetry.events(browser.id, { category: ["system"] });
      expect(system.map((envelope) => [envelope.event.type, Number(envelope.event.data?.idle_ms) >= 10_000])).toEqual([["system_timeout", true]]);
      const refused = await new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(browser.cdp_ws_url);
        ws.once("unexpected-response", (_request, response) => {
          resolve(response.statusCode ?? 0);
          ws.terminate();
        });
        ws.once("open", () => reject(new Error("a timed-out browser's token opened DevTools")));
        ws.once("error", () => undefined);
      });
      expect(refused).toBe(401);
      // Its slot is the project's one: the next create gets it.
      expect((await client.browsers.create({ timeout_seconds: 10 })).status).toBe("running");
    } finally {
      await client.projects.updateLimits("Default", { max_concurrent_sessions: 0 });
    }
  });

  it("counts a read of the browser and its WebMCP requests as activity; a list of the project's browsers is not", async () => {
    const client = t.client();
    const browser = await client.browsers.create({ timeout_seconds: 10 });
    await pass(8);
    await client.browsers.get(browser.id);
    await pass(8);
    await client.webmcp.listTools(browser.id);
    await pass(8);
    expect(await listed(browser)).toBe(true);
    await pass(2);
    await expect.poll(() => listed(browser)).toBe(false);
  });

  it("keeps a browser with a DevTools client or a live view viewer connected, and starts its time when the last one leaves", async () => {
    const client = t.client();
    for (const connect of ["devtools", "live view"] as const) {
      const browser = await client.browsers.create({ timeout_seconds: 10 });
      const socket = await connectTo(browser, connect, true);
      await pass(3_600);
      expect(await listed(browser), connect).toBe(true);
      const closed = new Promise((resolve) => socket.once("close", resolve));
      socket.close();
      await closed;
      await pass(9);
      expect(await listed(browser), connect).toBe(true);
      await pass(1);
      await expect.poll(() => listed(browser)).toBe(false);
    }
  });

  it("lets go of a DevTools client or viewer that stops answering (a machine asleep, frozen or gone), and the browser's time starts", async () => {
    const client = t.client();
    for (const connect of ["devtools", "live view"] as const) {
      const browser = await client.browsers.create({ timeout_seconds: 10 });
      const open = (autoPong: boolean) => connectTo(browser, connect, autoPong);
      // One that answers pings stays; one that does not (its process frozen, say) is closed.
      const answering = await open(true);
      const silent = await open(false);
      const closed = new Promise((resolve) => silent.once("close", resolve));
      await closed;
      expect(answering.readyState, connect).toBe(WebSocket.OPEN);
      const left = new Promise((resolve) => answering.once("close", resolve));
      answering.close();
      await left;
      await pass(10);
      await expect.poll(() => listed(browser)).toBe(false);
    }
  });
});

describe("a browser's timeout, on the real clock", () => {
  it("ends it about timeout_seconds after its last activity", async () => {
    const server = await startTestServer();
    try {
      const client = server.client();
      const browser = await client.browsers.create({ timeout_seconds: 10 });
      const started = Date.now();
      await expect
        .poll(async () => (await client.browsers.list({ limit: 100 })).some((each) => each.id === browser.id), { timeout: 30_000, interval: 250 })
        .toBe(false);
      // Not before its time (the sweep runs each second, so within a second or two after).
      expect(Date.now() - started).toBeGreaterThanOrEqual(9_500);
    } finally {
      await server.close();
    }
  });
});
