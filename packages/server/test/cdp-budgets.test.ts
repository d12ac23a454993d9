import { PageServer } from "@browser-service/test-pages";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CdpEndpointLimits } from "../src/index.js";
import { type CdpMessage, CdpRawClient } from "./support/cdp-raw-client.js";
import { startTestServer, type TestServer } from "./support/test-server.js";

// The budgets of DevTools clients, from the side of a client that sends too much. The
// rates run on a clock the test holds still: while it stands, a client in debt gets
// nothing more through whatever else happens, and once it moves, everything held arrives.

const MIB = 1024 * 1024;
const OFF = { messageRate: 0, byteRate: 0, projectMessageRate: 0, projectByteRate: 0 };

let pages: PageServer;
const servers: TestServer[] = [];

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/plain", "<!doctype html><title>Plain</title><p>plain</p>");
});

afterAll(async () => {
  for (const server of servers) {
    expect(server.mismatches).toEqual([]);
    await server.close();
  }
  await pages.close();
});

/** A server whose DevTools clock stands until the test moves it. */
async function serverWith(limits: Partial<CdpEndpointLimits>): Promise<{ t: TestServer; advance(ms: number): void }> {
  let now = 0;
  const t = await startTestServer({ cdpLimits: { ...OFF, ...limits, clock: () => now } });
  servers.push(t);
  return { t, advance: (ms) => void (now += ms) };
}

const answers = (client: CdpRawClient) => client.received.filter((message) => typeof message.id === "number");

describe("a client's own budget", () => {
  it("a client flooding past its message rate is slowed, and every command is answered, in order", async () => {
    const { t, advance } = await serverWith({ messageRate: 20 });
    const browser = await t.client().browsers.create();
    const flooder = await CdpRawClient.open(browser.cdp_ws_url);
    const other = await CdpRawClient.open(browser.cdp_ws_url);
    const ids = Array.from({ length: 100 }, () => flooder.post("Browser.getVersion"));
    // A second's worth (20) at once, and one more into debt; the rest waits.
    await expect.poll(() => answers(flooder).length).toBe(21);
    // Another client of the same browser is not held back, and meanwhile the flooder gets nothing more.
    expect((await other.send("Browser.getVersion")).result).toBeDefined();
    expect((await other.send("Browser.getVersion")).result).toBeDefined();
    expect(answers(flooder).length).toBe(21);
    // Time moves on: a second's worth more each time, until all are through.
    await expect.poll(() => (advance(1_000), answers(flooder).length)).toBe(100);
    expect(answers(flooder).map((message) => message.id)).toEqual(ids);
    expect(answers(flooder).every((message) => message.result !== undefined)).toBe(true);
    await flooder.close();
    await other.close();
  });

  it("a message larger than the byte rate still passes; the client then waits until the debt is paid", async () => {
    const { t, advance } = await serverWith({ byteRate: MIB });
    const browser = await t.client().browsers.create();
    const client = await CdpRawClient.open(browser.cdp_ws_url);
    const other = await CdpRawClient.open(browser.cdp_ws_url);
    expect((await client.send("Browser.getVersion", { padding: "x".repeat(2 * MIB) })).result).toMatchObject({ product: expect.stringMatching(/Chrome/) });
    const held = client.send("Browser.getVersion");
    expect((await other.send("Browser.getVersion")).result).toBeDefined();
    expect(answers(client).length).toBe(1);
    // The 2 MiB message left a debt of just over 1 MiB: paid back in just over a second.
    advance(2_000);
    expect((await held).result).toBeDefined();
    await client.close();
    await other.close();
  });
});

describe("a project's budget", () => {
  it("is shared by the connections of every browser of the project, and no other project's", async () => {
    const { t, advance } = await serverWith({ projectMessageRate: 10 });
    const client = t.client();
    const other = await client.projects.create({ name: `budget-other-${Date.now()}` });
    const [x, y] = [await client.browsers.create(), await client.browsers.create()];
    const z = await client.browsers.create({}, { projectId: other.id });
    const onX = await CdpRawClient.open(x.cdp_ws_url);
    const onY = await CdpRawClient.open(y.cdp_ws_url);
    const onZ = await CdpRawClient.open(z.cdp_ws_url);
    // The project's second's worth, and one more into debt, from one connection.
    const spent = await Promise.all(Array.from({ length: 11 }, () => onX.send("Browser.getVersion")));
    expect(spent.every((answer) => answer.result !== undefined)).toBe(true);
    // The project's other browser waits; the other project does not.
    const held = onY.send("Browser.getVersion");
    expect((await onZ.send("Browser.getVersion")).result).toBeDefined();
    expect((await onZ.send("Browser.getVersion")).result).toBeDefined();
    expect(answers(onY)).toEqual([]);
    advance(1_000);
    expect((await held).result).toBeDefined();
    for (const each of [onX, onY, onZ]) await each.close();
    await client.browsers.delete(z.id, { projectId: other.id });
  });
});

describe("commands awaiting an answer", () => {
  it("past maxPending a command is answered with an error and not sent; answers make room again; other clients are not affected", async () => {
    const { t } = await serverWith({ maxPending: 5 });
    const browser = await t.client().browsers.create({ start_url: pages.url("/plain") });
    const waiter = await CdpRawClient.open(browser.cdp_ws_url);
    const other = await CdpRawClient.open(browser.cdp_ws_url);
    const session = await waiter.attachToPage();
    // The tab may still be loading its start_url, whose new document would answer the commands below.
    await expect
      .poll(
        async () =>
          (
            (await waiter.send("Runtime.evaluate", { expression: "document.readyState === 'complete' && document.title", returnByValue: true }, session))
              .result as { result: { value: unknown } }
          ).result.value,
      )
      .toBe("Plain");
    const never = { expression: "new Promise(() => {})", awaitPromise: true };
    const ids = Array.from({ length: 8 }, () => waiter.post("Runtime.evaluate", never, session));
    const refused: CdpMessage[] = await Promise.all(ids.slice(5).map((id) => waiter.answer(id)));
    for (const answer of refused)
      expect(answer.error).toMatchObject({ code: -32000, message: expect.stringContaining("already has 5 commands awaiting the browser's answer") });
    expect((await waiter.send("Browser.getVersion")).error).toMatchObject({ message: expect.stringContaining("already has 5 commands") });
    expect((await other.send("Browser.getVersion")).result).toBeDefined();
    // A navigation ends the page's JavaScript context: the browser answers the five waiting commands (with errors).
    const otherSession = await other.attachToPage();
    expect((await other.send("Page.navigate", { url: pages.url("/plain?again") }, otherSession)).result).toBeDefined();
    const settled = await Promise.all(ids.slice(0, 5).map((id) => waiter.answer(id)));
    expect(settled.every((answer) => answer.error !== undefined || answer.result !== undefined)).toBe(true);
    expect((await waiter.send("Browser.getVersion")).result).toBeDefined();
    await waiter.close();
    await other.close();
  });
});
