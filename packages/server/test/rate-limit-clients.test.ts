import { once } from "node:events";
import { readdirSync, rmSync } from "node:fs";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { connect, type Socket } from "node:net";
import type { Browser } from "@browser-service/types";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { clientKey, TrustProxyError, trustedProxies } from "../src/http/client-key.js";
import { createServer } from "../src/index.js";
import { RATE_LIMIT_OFF, tempDataDir, useTestServer } from "./support/test-server.js";

// Who a failed authentication is counted against. Browsers run by the server send from
// 127.0.0.1 like the clients on the same machine, and a page can send requests without a
// credential (an <img>, a form) or with a wrong one (a WebSocket to ?token=wrong), so
// these tests are written from a hostile page's side: what it sends must not lock out
// the keys and tokens used from its address.

const WRONG_KEY = { authorization: "Bearer bsk_thisIsNotAKeyThisIsNotAKey1234" };
const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const WRONG_TOKEN = "B".repeat(43);

/** A clock the test moves by hand: no bucket refills unless a test says so. */
let now = 0;
const clock = () => now;
/** Every failed-authentication allowance in these servers: two at once, one a second. */
const TWO_FAILURES = { rate: 1, burst: 2 };

/** Local ports of connections a fake "browser" opened, by browser name: what the lead's egress proxy will answer for real. */
const browserPorts = new Map<number, string>();
const fakeBrowserOfConnection = (remoteAddress: string, remotePort: number) => (remoteAddress === "127.0.0.1" ? browserPorts.get(remotePort) : undefined);

/** A connection to `url`'s server that the fake hook names as browser `name`'s. */
async function browserConnection(url: string, name: string): Promise<Socket> {
  const socket = connect(Number(new URL(url).port), "127.0.0.1");
  await once(socket, "connect");
  browserPorts.set(socket.localPort as number, name);
  return socket;
}

/** The status of one HTTP GET of `path`, on `socket` when given. */
function status(url: string, path: string, headers: Record<string, string> = {}, socket?: Socket): Promise<number> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    // Without an agent: an agent opens its own connections, whatever createConnection says.
    const request = httpRequest({ host: "127.0.0.1", port, path, headers, ...(socket ? { createConnection: () => socket } : { agent: false }) }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
    });
    request.on("error", reject);
    request.end();
  });
}

/** Asks for a DevTools WebSocket: `"open"` (then closes it) or the refusal's status. */
function upgrade(url: string, headers: Record<string, string> = {}, socket?: Socket): Promise<number | "open"> {
  const ws = new WebSocket(url, { headers, ...(socket ? { createConnection: () => socket } : {}) });
  return new Promise((resolve, reject) => {
    ws.once("open", () => {
      ws.close();
      resolve("open");
    });
    ws.once("unexpected-response", (_request, response: IncomingMessage) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    ws.once("error", reject);
  });
}

function withToken(url: string, token: string | null): string {
  const parsed = new URL(url);
  if (token === null) parsed.searchParams.delete("token");
  else parsed.searchParams.set("token", token);
  return parsed.toString();
}

describe("failed authentications, on a server with a browser (real HTTP and DevTools upgrades from 127.0.0.1)", () => {
  const t = useTestServer({
    rateLimits: { perKey: RATE_LIMIT_OFF, authFailuresPerAddress: TWO_FAILURES, clock, browserOfConnection: fakeBrowserOfConnection },
  });
  let browser: Browser;
  let bare: string;

  beforeAll(async () => {
    browser = await t.client().browsers.create();
    bare = withToken(browser.cdp_ws_url, null);
  });

  afterEach(() => {
    // A quiet minute between tests: every bucket is full again.
    now += 60_000;
  });

  it("without a credential are never counted: a flood of them leaves a valid org key and a valid browser token working", async () => {
    for (let i = 0; i < 20; i++) {
      expect(await status(t.url, "/org/limits")).toBe(401);
      expect(await status(t.url, "/org/limits", { authorization: "" })).toBe(401);
      expect(await upgrade(bare)).toBe(401);
    }
    for (let i = 0; i < 10; i++) expect(await status(t.url, "/org/limits", bearer(t.orgKey))).toBe(200);
    expect(await upgrade(browser.cdp_ws_url)).toBe("open");
    expect(await upgrade(bare, bearer(t.orgKey))).toBe("open");
  });

  it("with a wrong credential block every credential from the address, API and DevTools alike; requests without one still get 401", async () => {
    expect(await status(t.url, "/org/limits", WRONG_KEY)).toBe(401);
    expect(await upgrade(withToken(browser.cdp_ws_url, WRONG_TOKEN))).toBe(401);
    // The allowance is spent: a right credential must look exactly like a wrong one.
    expect(await status(t.url, "/org/limits", WRONG_KEY)).toBe(429);
    expect(await status(t.url, "/org/limits", bearer(t.orgKey))).toBe(429);
    expect(await upgrade(withToken(browser.cdp_ws_url, WRONG_TOKEN))).toBe(429);
    expect(await upgrade(browser.cdp_ws_url)).toBe(429);
    expect(await upgrade(withToken(browser.cdp_ws_url, ""))).toBe(429); // an empty ?token= is a credential
    expect(await upgrade(bare, bearer(t.orgKey))).toBe(429);
    expect(await status(t.url, "/org/limits")).toBe(401);
    now += 1_000;
    expect(await status(t.url, "/org/limits", bearer(t.orgKey))).toBe(200);
  });

  it("from the server's own browser count under that browser: its page blocks itself, never its address", async () => {
    for (let i = 0; i < 10; i++) {
      expect([401, 429]).toContain(await status(t.url, "/org/limits", WRONG_KEY, await browserConnection(t.url, "brw_hostile")));
      expect([401, 429]).toContain(await upgrade(withToken(browser.cdp_ws_url, WRONG_TOKEN), {}, await browserConnection(t.url, "brw_hostile")));
    }
    // Counted, not waved through: the hostile browser's own credentials are refused now.
    expect(await status(t.url, "/org/limits", bearer(t.orgKey), await browserConnection(t.url, "brw_hostile"))).toBe(429);
    expect(await upgrade(browser.cdp_ws_url, {}, await browserConnection(t.url, "brw_hostile"))).toBe(429);
    // Its address, 127.0.0.1, kept its whole allowance...
    expect(await status(t.url, "/org/limits", bearer(t.orgKey))).toBe(200);
    expect(await upgrade(browser.cdp_ws_url)).toBe("open");
    expect(await status(t.url, "/org/limits", WRONG_KEY)).toBe(401);
    expect(await status(t.url, "/org/limits", WRONG_KEY)).toBe(401);
    // ...and so did another browser on it.
    expect(await status(t.url, "/org/limits", bearer(t.orgKey), await browserConnection(t.url, "brw_other"))).toBe(200);
  });

  it("ignore X-Forwarded-For without --trust-proxy: forged addresses all count as the peer's", async () => {
    expect(await status(t.url, "/org/limits", { ...WRONG_KEY, "x-forwarded-for": "198.51.100.1" })).toBe(401);
    expect(await status(t.url, "/org/limits", { ...WRONG_KEY, "x-forwarded-for": "198.51.100.2" })).toBe(401);
    expect(await status(t.url, "/org/limits", { ...bearer(t.orgKey), "x-forwarded-for": "198.51.100.3" })).toBe(429);
    expect(await upgrade(browser.cdp_ws_url, { "x-forwarded-for": "198.51.100.4" })).toBe(429);
  });
});

describe("behind a trusted proxy (--trust-proxy loopback: the test is the proxy)", () => {
  const t = useTestServer({ trustProxy: ["loopback"], rateLimits: { perKey: RATE_LIMIT_OFF, authFailuresPerAddress: TWO_FAILURES, clock } });

  const via = (client: string) => ({ "x-forwarded-for": client });
  // No browser: a blocked client is refused before the browser is looked up, anyone else gets the wrong token's 401.
  const cdp = (url: string) => `${url.replace("http:", "ws:")}/browsers/brw_none/cdp?token=${WRONG_TOKEN}`;

  it("counts each client X-Forwarded-For names, over HTTP and for the DevTools upgrade; what a client writes itself is not believed", async () => {
    expect(await status(t.url, "/org/limits", { ...WRONG_KEY, ...via("203.0.113.9") })).toBe(401);
    expect(await status(t.url, "/org/limits", { ...WRONG_KEY, ...via("203.0.113.9") })).toBe(401);
    expect(await status(t.url, "/org/limits", { ...bearer(t.orgKey), ...via("203.0.113.9") })).toBe(429);
    expect(await upgrade(cdp(t.url), via("203.0.113.9"))).toBe(429);
    // The client put 198.51.100.7 in front; the proxy appended the address it saw.
    expect(await status(t.url, "/org/limits", { ...bearer(t.orgKey), ...via("198.51.100.7, 203.0.113.9") })).toBe(429);

    // Other clients behind the same proxy, and the proxy itself, are not blocked.
    expect(await status(t.url, "/org/limits", { ...bearer(t.orgKey), ...via("198.51.100.7") })).toBe(200);
    expect(await upgrade(cdp(t.url), via("198.51.100.7"))).toBe(401);
    expect(await status(t.url, "/org/limits", bearer(t.orgKey))).toBe(200);
    // IPv6 clients still count by their /64.
    expect(await status(t.url, "/org/limits", { ...WRONG_KEY, ...via("2001:db8:0:1::1") })).toBe(401);
    expect(await status(t.url, "/org/limits", { ...WRONG_KEY, ...via("2001:db8:0:1::2") })).toBe(401);
    expect(await status(t.url, "/org/limits", { ...bearer(t.orgKey), ...via("2001:db8:0:1::3") })).toBe(429);
  });
});

describe("X-Forwarded-For from a peer that is not a trusted proxy (--trust-proxy 10.0.0.0/8, the test sends from 127.0.0.1)", () => {
  const t = useTestServer({ trustProxy: ["10.0.0.0/8"], rateLimits: { perKey: RATE_LIMIT_OFF, authFailuresPerAddress: TWO_FAILURES, clock } });

  it("changes nothing: a guesser forging a new address for each guess is still counted as its peer", async () => {
    expect(await status(t.url, "/org/limits", { ...WRONG_KEY, "x-forwarded-for": "198.51.100.1" })).toBe(401);
    expect(await status(t.url, "/org/limits", { ...WRONG_KEY, "x-forwarded-for": "10.0.0.5" })).toBe(401);
    expect(await status(t.url, "/org/limits", { ...WRONG_KEY, "x-forwarded-for": "198.51.100.2" })).toBe(429);
    const cdp = `${t.url.replace("http:", "ws:")}/browsers/brw_none/cdp?token=${WRONG_TOKEN}`;
    expect(await upgrade(cdp, { "x-forwarded-for": "198.51.100.3" })).toBe(429);
  });
});

describe("the client key of a request", () => {
  const request = (remoteAddress: string | undefined, remotePort: number | undefined, forwardedFor?: string) =>
    ({ socket: { remoteAddress, remotePort }, headers: forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor } }) as unknown as IncomingMessage;

  it("asks the browser hook about the connection first, and uses what it names over any address", () => {
    const asked: [string, number][] = [];
    const browserOfConnection = (address: string, port: number) => {
      asked.push([address, port]);
      return port === 40001 ? "brw_1" : undefined;
    };
    const trustedProxy = trustedProxies(["loopback"]);
    expect(clientKey(request("127.0.0.1", 40001, "203.0.113.9"), { browserOfConnection, trustedProxy })).toBe("browser:brw_1");
    expect(clientKey(request("127.0.0.1", 40002, "203.0.113.9"), { browserOfConnection, trustedProxy })).toBe("203.0.113.9");
    expect(clientKey(request("::ffff:127.0.0.1", 40002), { browserOfConnection })).toBe("127.0.0.1");
    expect(asked).toEqual([
      ["127.0.0.1", 40001],
      ["127.0.0.1", 40002],
      ["::ffff:127.0.0.1", 40002],
    ]);
    // A closed socket has no peer: never a browser's, and no address.
    expect(clientKey(request(undefined, undefined), { browserOfConnection })).toBe("unknown");
  });

  it("never makes a key of what a trusted proxy passes on that is no address", () => {
    const trustedProxy = trustedProxies(["127.0.0.1"]);
    expect(clientKey(request("127.0.0.1", 1, "x".repeat(10_000)), { trustedProxy })).toBe("127.0.0.1");
    expect(clientKey(request("127.0.0.1", 1, "203.0.113.9, not-an-address"), { trustedProxy })).toBe("127.0.0.1");
    expect(clientKey(request("127.0.0.1", 1, "not-an-address, 203.0.113.9"), { trustedProxy })).toBe("203.0.113.9");
  });

  it("refuses proxies it cannot tell from clients: everyone, hop counts, names, bad ranges", () => {
    for (const entries of [[], ["true"], ["*"], ["2"], ["proxy.example.org"], ["10.0.0.0/33"], ["10.0.0.0/8/8"], ["0x7f.1"]]) {
      expect(() => trustedProxies(entries)).toThrow(TrustProxyError);
    }
    expect(() => trustedProxies(["10.0.0.0/8", "192.168.1.1", "fd00::/8", "loopback", "linklocal", "uniquelocal", "10.0.0.0/255.0.0.0"])).not.toThrow();
  });

  it("an unusable trustProxy stops createServer before it claims the data directory", async () => {
    const dataDir = tempDataDir();
    try {
      await expect(createServer({ dataDir, trustProxy: ["true"] })).rejects.toMatchObject({ name: "TrustProxyError", code: "invalid_trust_proxy" });
      expect(readdirSync(dataDir)).toEqual([]);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
