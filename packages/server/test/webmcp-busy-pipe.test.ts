import { once } from "node:events";
import { PageServer } from "@browser-service/test-pages";
import type { WebMcpTool } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { chromiumBrowserPids } from "./support/chromium-processes.js";
import { useTestServer } from "./support/test-server.js";
import { drive, waitForTools } from "./support/webmcp-driver.js";

// A browser that reads its DevTools pipe slower than commands arrive (here: not at all,
// stopped) holds at most 64 MiB of them; past that, commands are refused unsent. An
// invocation refused so was never sent: the caller is told to retry, not that the server failed.

const TOOL_PAGE = `<!doctype html><title>tool</title><script>
  document.modelContext.registerTool({ name: "echo", description: "Echoes.", execute: async (input) => input });
</script>`;
// 1 MiB of padding per command: 70 of them pass the pipe's 64 MiB bound while the browser reads none.
const PAD = "x".repeat(1024 * 1024);

let pages: PageServer;
beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/tool", TOOL_PAGE);
});
afterAll(async () => {
  await pages?.close();
});

// Budgets wide enough for one client to fill the pipe, as many clients together could.
const t = useTestServer(() => ({ cdpLimits: { byteRate: 1 << 30, projectByteRate: 1 << 30, messageRate: 100_000, projectMessageRate: 100_000 } }));

describe("an invocation while the browser's DevTools pipe is full", () => {
  it("is 429 rate_limited with Retry-After, as nothing was sent, and goes through once the browser reads again", async () => {
    const client = t.client();
    const browser = await client.browsers.create();
    const driven = await drive(browser.cdp_ws_url);
    // A second DevTools client: the one that fills the pipe.
    const ws = new WebSocket(browser.cdp_ws_url, { perMessageDeflate: false });
    const opened = once(ws, "open");
    try {
      await driven.open(pages.url("/tool"));
      const [echo] = (await waitForTools(client, browser.id, (tools) => tools.length === 1)) as [WebMcpTool];
      const pids = chromiumBrowserPids(process.pid);
      expect(pids).toHaveLength(1);
      const pid = pids[0] as number;
      await opened;
      const full = new Promise<void>((resolve) =>
        ws.on("message", (data) => {
          if (String(data).includes("not reading commands as fast")) resolve();
        }),
      );
      process.kill(pid, "SIGSTOP");
      try {
        for (let id = 1; id <= 70; id++) ws.send(JSON.stringify({ id, method: "Browser.getVersion", params: { pad: PAD } }));
        await full;
        const refused = await client.webmcp.invoke(browser.id, { tool_ref: echo.tool_ref, input: { a: 1 } }).catch((error: unknown) => error);
        expect(refused).toMatchObject({ status: 429, code: "rate_limited", message: expect.stringContaining("was not sent") });
        expect((refused as { headers: Headers }).headers.get("retry-after")).toBe("1");
      } finally {
        process.kill(pid, "SIGCONT");
      }
      // The browser reads again: the pipe drains, and the same invocation runs.
      await expect
        .poll(
          () =>
            client.webmcp.invoke(browser.id, { tool_ref: echo.tool_ref, input: { a: 1 } }).then(
              (result) => result.status,
              (error: { status: number }) => error.status,
            ),
          { timeout: 30_000 },
        )
        .toBe("completed");
    } finally {
      ws.close();
      await driven.disconnect();
    }
  });
});
