import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserServiceClient, createClient } from "@browser-service/client";
import { type BrowserServiceServer, createServer } from "@browser-service/server";
import { PageServer } from "@browser-service/test-pages";
import type { WebMcpTool } from "@browser-service/types";
import { chromium, type Page, type Browser as PlaywrightBrowser } from "playwright-core";
import { afterAll, afterEach, beforeAll } from "vitest";
import { servePages } from "./pages.js";

/**
 * The reference server in-process on 127.0.0.1 with one real Chromium browser, the test
 * pages, and Playwright attached over the browser's `cdp_ws_url` to play the user
 * (opening tabs, navigating, cancelling).
 */
export interface Harness {
  server: BrowserServiceServer;
  client: BrowserServiceClient;
  /** A client with its own options (same server and key). */
  clientWith(options: { timeoutMs?: number }): BrowserServiceClient;
  /** Id of the browser the tests use. */
  browser: string;
  cdpWsUrl: string;
  pages: PageServer;
  user: PlaywrightBrowser;
  /** Opens a tab on `url` (loaded). */
  open(url: string): Promise<Page>;
  /** Closes every tab opened since the last call, waits until no tools are left, and resets the run counts. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The harness of one test file: started before its tests, reset after each, closed after
 * all. The returned object is filled in when `beforeAll` has run.
 */
export function useHarness(): Harness {
  const h = {} as Harness;
  beforeAll(async () => {
    Object.assign(h, await startHarness());
  });
  afterEach(() => h.reset());
  afterAll(() => h.close());
  return h;
}

/** Starts the server, a browser, the pages and Playwright. */
export async function startHarness(): Promise<Harness> {
  const dataDir = mkdtempSync(join(tmpdir(), "webmcp-helpers-test-"));
  // Rate limits off: tests send requests faster than any client would, and their outcome must not depend on the machine's speed.
  const server = await createServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    allowPrivateNetwork: true,
    rateLimits: { perKey: { rate: 0, burst: 1 }, authFailuresPerAddress: { rate: 0, burst: 1 } },
  });
  const baseUrl = await server.listen();
  const apiKey = server.firstStart?.key.secret ?? (await server.issueApiKey()).secret;
  const clientWith = (options: { timeoutMs?: number }) => createClient({ baseUrl, apiKey, projectId: null, maxRetries: 0, ...options });
  const client = clientWith({});
  const pages = await PageServer.start();
  servePages(pages);
  const browser = await client.browsers.create({ name: "helpers-test" });
  const user = await chromium.connectOverCDP(browser.cdp_ws_url);
  const context = user.contexts()[0];
  if (!context) throw new Error("The service's browser has no default context.");
  let tabs: Page[] = [];
  return {
    server,
    client,
    clientWith,
    browser: browser.id,
    cdpWsUrl: browser.cdp_ws_url,
    pages,
    user,
    async open(url) {
      const page = await context.newPage();
      tabs.push(page);
      await page.goto(url);
      return page;
    },
    async reset() {
      for (const page of tabs) if (!page.isClosed()) await page.close();
      tabs = [];
      await waitForTools(client, browser.id, (tools) => tools.length === 0);
      pages.resetRuns();
    },
    async close() {
      await user.close();
      await server.close();
      await pages.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const pollAttempts = 400;
const pollIntervalMs = 50;

/**
 * Lists the browser's tools until `ready` accepts the snapshot. Pages register tools
 * after they load, so a test waits for the state it needs; the attempts are bounded and
 * a miss fails with the last snapshot.
 */
export async function waitForTools(client: BrowserServiceClient, browser: string, ready: (tools: WebMcpTool[]) => boolean): Promise<WebMcpTool[]> {
  let tools: WebMcpTool[] = [];
  for (let attempt = 0; attempt < pollAttempts; attempt++) {
    tools = (await client.webmcp.listTools(browser)).tools;
    if (ready(tools)) return tools;
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
  }
  throw new Error(`The tool snapshot never reached the expected state; the last one:\n${JSON.stringify(tools, null, 2)}`);
}

/** Waits until the page at `url` has registered `count` tools (in every tab showing it). */
export function waitForPage(h: Harness, url: string, count: number): Promise<WebMcpTool[]> {
  return waitForTools(h.client, h.browser, (tools) => tools.filter((tool) => tool.source.page_url === url).length === count);
}
