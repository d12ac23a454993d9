import type { BrowserServiceClient } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import type { Browser, WebMcpTool } from "@browser-service/types";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HeldDevTools, HoldingLauncher } from "./support/held-devtools.js";
import { useTestServer } from "./support/test-server.js";
import { type DrivenBrowser, drive, waitForTools } from "./support/webmcp-driver.js";

// An invocation whose wait ends (timeout, caller gone) before Chromium acknowledged
// `WebMCP.invokeTool` has no id yet to cancel. The server's own DevTools channel holds
// that acknowledgement back, so that the wait ends first whatever the timing; the cancel
// must follow once it arrives.

const HANGING_PAGE = `<!doctype html><title>hanging</title><script>
  const report = (name) => fetch("/runs/" + name, { method: "POST" });
  document.modelContext.registerTool({
    name: "hang", description: "Never ends.",
    execute: (input, client) => {
      report("hang-started");
      client?.signal?.addEventListener("abort", () => report("abort-signal"));
      return new Promise(() => {});
    },
  });
</script>`;

const INVOKE = "WebMCP.invokeTool";
const CANCEL = "WebMCP.cancelInvocation";

let pages: PageServer;
let launcher: HoldingLauncher;
let client: BrowserServiceClient;
let browser: Browser;
let driven: DrivenBrowser;
let devtools: HeldDevTools;
let hang: WebMcpTool;

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/hanging", HANGING_PAGE);
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages?.close();
});

const t = useTestServer(() => {
  launcher = new HoldingLauncher();
  // A short body idle timeout: the caller's wait must not be cut off by it.
  return { launcher, bodyIdleTimeoutSec: 1 };
});

beforeAll(async () => {
  client = t.client();
  browser = await client.browsers.create({ name: "cancel" });
  devtools = launcher.devtools();
  driven = await drive(browser.cdp_ws_url);
  await driven.open(pages.url("/hanging"));
  [hang] = (await waitForTools(client, browser.id, (tools) => tools.length === 1)) as [WebMcpTool];
});

afterEach(() => {
  devtools.stop();
  pages.resetRuns();
});

afterAll(async () => {
  devtools?.stop();
  await driven?.disconnect();
});

/** Holds back the acknowledgement of the next invocation; resolves once the tool runs in the page. */
async function invokeWithAckHeld(start: () => Promise<unknown>): Promise<{ answer: Promise<unknown>; cancelsBefore: number }> {
  devtools.hold({ answersTo: [INVOKE] });
  const cancelsBefore = devtools.sent(CANCEL);
  const answer = start();
  await devtools.until(() => devtools.held().some((held) => held.method === INVOKE));
  await expect.poll(() => pages.runs("hang-started")).toBe(1);
  return { answer, cancelsBefore };
}

describe("an invocation whose wait ends before the browser acknowledged it", () => {
  it("on a timeout answers 504 saying a cancel will follow, and sends it once the acknowledgement arrives", async () => {
    const { answer, cancelsBefore } = await invokeWithAckHeld(() =>
      client.webmcp.invoke(browser.id, { tool_ref: hang.tool_ref, input: {}, timeout_sec: 1 }).catch((caught: unknown) => caught),
    );
    const error = await answer;
    expect(error).toMatchObject({ status: 504, code: "outcome_unknown", details: [{ code: "cancellation_pending" }] });
    expect((error as { invocationId?: string }).invocationId).toBeUndefined();
    expect(devtools.sent(CANCEL)).toBe(cancelsBefore);

    expect(devtools.release((held) => held.method === INVOKE)).toBe(1);
    await expect.poll(() => devtools.sent(CANCEL)).toBe(cancelsBefore + 1);
    await expect.poll(() => pages.runs("abort-signal")).toBe(1);
  });

  it("when the caller disconnects, sends the cancel once the acknowledgement arrives", async () => {
    const caller = new AbortController();
    const { answer, cancelsBefore } = await invokeWithAckHeld(() =>
      fetch(`${t.url}/browsers/${browser.id}/webmcp/invoke`, {
        method: "POST",
        headers: { authorization: `Bearer ${t.orgKey}`, "content-type": "application/json" },
        body: JSON.stringify({ tool_ref: hang.tool_ref, input: {}, timeout_sec: 120 }),
        signal: caller.signal,
      }).catch((caught: unknown) => caught),
    );
    caller.abort();
    await answer;
    expect(devtools.sent(CANCEL)).toBe(cancelsBefore);

    // Released only after the server has seen the caller go: its wait has ended by then.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(devtools.release((held) => held.method === INVOKE)).toBe(1);
    await expect.poll(() => devtools.sent(CANCEL)).toBe(cancelsBefore + 1);
    await expect.poll(() => pages.runs("abort-signal")).toBe(1);
  });
});
