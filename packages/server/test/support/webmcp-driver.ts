import type { BrowserServiceClient } from "@browser-service/client";
import type { WebMcpTool, WebMcpToolList } from "@browser-service/types";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";

/** A browser of the service driven as a user drives it: Playwright over its `cdp_ws_url`. */
export interface DrivenBrowser {
  playwright: Browser;
  context: BrowserContext;
  /** Opens a new tab on `url` and waits for it to load. */
  open(url: string): Promise<Page>;
  /** Disconnects Playwright (the browser keeps running). */
  disconnect(): Promise<void>;
}

/** Connects Playwright to a service browser's DevTools URL. */
export async function drive(cdpWsUrl: string): Promise<DrivenBrowser> {
  const playwright = await chromium.connectOverCDP(cdpWsUrl);
  const context = playwright.contexts()[0];
  if (!context) throw new Error("The browser has no default context.");
  return {
    playwright,
    context,
    async open(url) {
      const page = await context.newPage();
      await page.goto(url);
      return page;
    },
    disconnect: () => playwright.close(),
  };
}

const POLL_ATTEMPTS = 400;
const POLL_INTERVAL_MS = 50;

/**
 * Lists a browser's tools until `ready` accepts the snapshot, and returns that snapshot.
 * Pages register tools asynchronously, so a test waits for the state it needs; the
 * number of attempts is bounded and a miss fails with the last snapshot.
 */
export async function waitForTools(client: BrowserServiceClient, browser: string, ready: (tools: WebMcpTool[]) => boolean): Promise<WebMcpTool[]> {
  let tools: WebMcpTool[] = [];
  for (let attempt = 0; attempt < POLL_ATTEMPTS; attempt++) {
    tools = (await client.webmcp.listTools(browser)).tools;
    if (ready(tools)) return tools;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  throw new Error(`The tool snapshot never reached the expected state; last snapshot:\n${JSON.stringify(tools, null, 2)}`);
}

/**
 * Lists a browser's tools until `ready` accepts the whole answer (tools and `omitted`),
 * for tests of what a snapshot leaves out; at most `attempts` reads, 100 ms apart.
 */
export async function waitForList(
  client: BrowserServiceClient,
  browser: string,
  ready: (list: WebMcpToolList) => boolean,
  attempts = 600,
): Promise<WebMcpToolList> {
  let list: WebMcpToolList = { tools: [] };
  for (let attempt = 0; attempt < attempts; attempt++) {
    list = await client.webmcp.listTools(browser);
    if (ready(list)) return list;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`The snapshot never reached the expected state: ${list.tools.length} tools, omitted ${JSON.stringify(list.omitted)}`);
}

/** How many registrations a snapshot says it left out for `reason` (0 when it names none). */
export const omittedCount = (list: WebMcpToolList, reason: string): number => list.omitted?.find((each) => each.reason === reason)?.count ?? 0;

/** The tools named `name` in a snapshot. */
export function named(tools: WebMcpTool[], name: string): WebMcpTool[] {
  return tools.filter((tool) => tool.name === name);
}
