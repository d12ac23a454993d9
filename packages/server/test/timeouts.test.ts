import { existsSync, rmSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { describe, expect, it } from "vitest";
import type { LaunchedBrowser, LaunchOptions } from "../src/index.js";
import { storedRows } from "./support/stored-rows.js";
import { startTestServer } from "./support/test-server.js";
import { processExists, TrackingLauncher } from "./support/tracking-launcher.js";

/** A raw connection that sends `head` and then as much of a body as the test says. */
async function rawRequest(url: string, head: string): Promise<{ socket: Socket; closed: Promise<string> }> {
  const { port } = new URL(url);
  const socket = connect(Number(port), "127.0.0.1");
  await new Promise((resolve) => socket.once("connect", resolve));
  let received = "";
  socket.setEncoding("utf8").on("data", (chunk: string) => (received += chunk));
  const closed = new Promise<string>((resolve) => socket.once("close", () => resolve(received)));
  socket.write(head);
  return { socket, closed };
}

const postHead = (key: string, length: number) =>
  `POST /org/projects HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;

describe("request bodies", () => {
  it("answers 408 request_timeout and closes the connection of a request whose body stalls past the idle timeout", async () => {
    const t = await startTestServer({ bodyIdleTimeoutSec: 1 });
    try {
      const { socket, closed } = await rawRequest(t.url, `${postHead(t.orgKey, 100)}{"name":"sta`);
      const answer = await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({ code: "request_timeout", message: expect.stringContaining("1 s") });
      expect(socket.destroyed).toBe(true);
      // The server goes on answering.
      expect((await t.client().limits.get()).max_concurrent_sessions).toBeGreaterThan(0);
    } finally {
      await t.close();
    }
  });

  it("applies to a request that asked to upgrade (Upgrade: h2c), which the API serves as a plain request", async () => {
    const t = await startTestServer({ bodyIdleTimeoutSec: 1 });
    try {
      const head = postHead(t.orgKey, 100).replace("\r\n\r\n", "\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n");
      const { closed } = await rawRequest(t.url, `${head}{"name":"sta`);
      const answer = await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4))).toMatchObject({ code: "request_timeout" });
    } finally {
      await t.close();
    }
  });

  it("lets a slow body through as long as bytes keep arriving", async () => {
    const t = await startTestServer({ bodyIdleTimeoutSec: 1 });
    try {
      const body = JSON.stringify({ name: `slow-${Date.now()}` });
      const { socket, closed } = await rawRequest(t.url, postHead(t.orgKey, Buffer.byteLength(body)));
      // Four pieces, 600 ms apart: 1.8 s in all, never 1 s idle.
      for (const piece of [body.slice(0, 5), body.slice(5, 10), body.slice(10, 15), body.slice(15)]) {
        await new Promise((resolve) => setTimeout(resolve, 600));
        socket.write(piece);
      }
      await new Promise((resolve) => setTimeout(resolve, 300));
      socket.end();
      expect(await closed).toMatch(/^HTTP\/1\.1 201/);
    } finally {
      await t.close();
    }
  });
});

describe("shutdown", () => {
  it("closes browsers and the database even while a request is stuck", async () => {
    const launcher = new TrackingLauncher();
    // No idle timeout: the stuck request would otherwise be closed by it.
    const t = await startTestServer({ launcher, bodyIdleTimeoutSec: 0 });
    await t.client().browsers.create();
    const pid = launcher.latest().pid as number;
    const { closed } = await rawRequest(t.url, `${postHead(t.orgKey, 100)}{"na`);
    await t.close();
    expect(processExists(pid)).toBe(false);
    // The stuck request's connection was closed without an answer.
    expect(await closed).toBe("");
  });

  it("ends even while a request that asked to upgrade trickles its body, on a socket Node no longer counts as the server's", async () => {
    const launcher = new TrackingLauncher();
    const t = await startTestServer({ launcher });
    await t.client().browsers.create();
    const pid = launcher.latest().pid as number;
    // The idle timeout never fires: a byte arrives every 300 ms; no credential is needed.
    const head =
      "POST /auth/hosted/session HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\nContent-Length: 1000\r\nConnection: upgrade\r\nUpgrade: foo\r\n\r\n{";
    const { socket, closed } = await rawRequest(t.url, head);
    socket.on("error", () => undefined);
    const trickle = setInterval(() => socket.writable && socket.write(" "), 300);
    try {
      await t.close();
    } finally {
      clearInterval(trickle);
    }
    expect(processExists(pid)).toBe(false);
    expect(await closed).toBe("");
  });

  it("waits for a create that outlives the grace: its browser is closed, its profile removed, its row deleted", async () => {
    // Each launch is held, Chromium already running, until the test lets it go on.
    let letGo!: () => void;
    const held = new Promise<void>((resolve) => (letGo = resolve));
    class HeldLauncher extends TrackingLauncher {
      override async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
        const browser = await super.launch(options);
        await held;
        return browser;
      }
    }
    const launcher = new HeldLauncher();
    const t = await startTestServer({ launcher });
    const create = fetch(`${t.url}/browsers`, {
      method: "POST",
      headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
      body: "{}",
    }).then(
      (response) => response.status,
      () => "connection closed",
    );
    await expect.poll(() => launcher.launched.length).toBe(1);
    const { pid, userDataDir } = launcher.latest();
    const closing = t.close({ keepData: true });
    // Past the grace for requests, the server closed the create's connection; the create goes on.
    expect(await create).toBe("connection closed");
    letGo();
    await closing;
    expect(processExists(pid as number)).toBe(false);
    expect(existsSync(userDataDir as string)).toBe(false);
    try {
      expect(await storedRows(t, "SELECT id, status FROM browsers")).toEqual([]);
    } finally {
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });
});
