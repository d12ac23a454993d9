import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserServiceClient, createClient } from "@browser-service/client";
import { type BrowserServiceServer, createServer } from "@browser-service/server";
import { PageServer } from "@browser-service/test-pages";
import type { WebMcpTool } from "@browser-service/types";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  type CallToolResult,
  type LoggingMessageNotification,
  LoggingMessageNotificationSchema,
  type Tool,
  ToolListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { chromium, type Page, type Browser as PlaywrightBrowser } from "playwright-core";
import { afterAll, afterEach, beforeAll } from "vitest";
import { showBrowserToolName } from "../../src/live-view-app.js";
import { servePages } from "./pages.js";

/** The pages' tools of a listing: every tool but the bridge's own. */
export const pageTools = (tools: Tool[]) => tools.filter((tool) => tool.name !== showBrowserToolName);

/** The `browser-service-mcp` command, as published (it runs the built `dist`). */
export const binPath = fileURLToPath(new URL("../../bin/browser-service-mcp.mjs", import.meta.url));

/** The two transports every end-to-end test runs over. */
export type TransportKind = "stdio" | "http";

/** The reference server in-process with one real Chromium browser, the test pages, and Playwright playing the user. */
export interface Harness {
  server: BrowserServiceServer;
  baseUrl: string;
  apiKey: string;
  client: BrowserServiceClient;
  /** Id of the browser the bridges serve. */
  browser: string;
  pages: PageServer;
  user: PlaywrightBrowser;
  /** Opens a tab on `url` (loaded). */
  open(url: string): Promise<Page>;
  /** The environment a bridge process gets: the service's URL and key, nothing else of this process's. */
  env(extra?: Record<string, string>): Record<string, string>;
  /** Closes every tab opened since the last call, waits until no tools are left, and resets the run counts. */
  reset(): Promise<void>;
}

/** An MCP client of a bridge process, with the list_changed notifications it has received. */
export interface BridgeSession {
  client: Client;
  /** How many `notifications/tools/list_changed` arrived so far. */
  listChanged(): number;
  /** Waits (bounded) for the next notification after `seen` arrived ones. */
  nextListChanged(seen: number): Promise<void>;
  /** Every `notifications/message` (log message) received so far, in order. */
  logs(): LoggingMessageNotification["params"][];
  /** The pages' tools listed now (the bridge's own `show_browser` left out; live-view.test.ts covers it). */
  tools(): Promise<Tool[]>;
  /** Lists until `ready` accepts the pages' tools (pages register after they load). */
  waitForTools(ready: (tools: Tool[]) => boolean): Promise<Tool[]>;
  /** Calls a tool. */
  call(name: string, input?: Record<string, unknown>): Promise<CallToolResult>;
  /** The bridge's standard error so far. */
  stderr(): string;
  /** For HTTP: the endpoint and token. */
  http?: { url: string; token: string };
  close(): Promise<void>;
}

/** The harness of one test file: started before its tests, reset after each, closed after all. */
export function useHarness(): Harness {
  const h = {} as Harness;
  let close: () => Promise<void> = async () => undefined;
  beforeAll(async () => {
    const started = await startHarness();
    Object.assign(h, started.harness);
    close = started.close;
  });
  afterEach(() => h.reset());
  afterAll(() => close());
  return h;
}

/** Starts the server, a browser, the pages and Playwright. */
export async function startHarness(): Promise<{ harness: Harness; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "mcp-bridge-test-"));
  // Rate limits off: tests send requests faster than any client would.
  const server = await createServer({
    dataDir,
    host: "127.0.0.1",
    port: 0,
    allowPrivateNetwork: true,
    rateLimits: { perKey: { rate: 0, burst: 1 }, authFailuresPerAddress: { rate: 0, burst: 1 } },
  });
  const baseUrl = await server.listen();
  const apiKey = server.firstStart?.key.secret ?? (await server.issueApiKey()).secret;
  const client = createClient({ baseUrl, apiKey, projectId: null, maxRetries: 0 });
  const pages = await PageServer.start();
  servePages(pages);
  const browser = await client.browsers.create({ name: "mcp-test" });
  const user = await chromium.connectOverCDP(browser.cdp_ws_url);
  const context = user.contexts()[0];
  if (!context) throw new Error("The service's browser has no default context.");
  let tabs: Page[] = [];
  const harness: Harness = {
    server,
    baseUrl,
    apiKey,
    client,
    browser: browser.id,
    pages,
    user,
    async open(url) {
      const page = await context.newPage();
      tabs.push(page);
      await page.goto(url);
      return page;
    },
    env: (extra = {}) => ({ PATH: process.env.PATH ?? "", BROWSER_SERVICE_BASE_URL: baseUrl, BROWSER_SERVICE_API_KEY: apiKey, ...extra }),
    async reset() {
      for (const page of tabs) if (!page.isClosed()) await page.close();
      tabs = [];
      await waitForSnapshot(client, browser.id, (tools) => tools.length === 0);
      pages.resetRuns();
    },
  };
  return {
    harness,
    async close() {
      await user.close();
      await server.close();
      await pages.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const attempts = 400;
const intervalMs = 50;

/** Polls `check` (bounded) until it returns something other than `undefined`. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let attempt = 0; attempt < attempts; attempt++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
  throw new Error(`Timed out waiting for ${what}.`);
}

/** Lists the browser's tools through the client until `ready` accepts the snapshot. */
export function waitForSnapshot(client: BrowserServiceClient, browser: string, ready: (tools: WebMcpTool[]) => boolean): Promise<WebMcpTool[]> {
  return eventually("the tool snapshot", async () => {
    const { tools } = await client.webmcp.listTools(browser);
    return ready(tools) ? tools : undefined;
  });
}

/** Waits until the process prints a line matching `pattern` on standard error; returns the match. */
function waitForLine(child: ChildProcess, output: () => string, pattern: RegExp): Promise<RegExpMatchArray> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const match = output().match(pattern);
      if (match) {
        child.stderr?.off("data", check);
        child.off("exit", exited);
        resolve(match);
      }
    };
    const exited = (code: number | null) => reject(new Error(`The bridge exited (${code}) before printing ${pattern}:\n${output()}`));
    child.stderr?.on("data", check);
    child.once("exit", exited);
    check();
  });
}

/**
 * Starts `browser-service-mcp` for the harness's browser (or `options.browser`) with `args`, and connects the
 * official SDK's `Client` to it over `kind`: stdio (the SDK starts the process), or
 * Streamable HTTP (the process serves on a free port; the client sends the token).
 */
export async function startBridge(
  h: Harness,
  kind: TransportKind,
  args: string[] = [],
  options: { token?: string; env?: Record<string, string>; browser?: string } = {},
): Promise<BridgeSession> {
  const client = new Client({ name: "bridge-test", version: "1.0.0" });
  let changes = 0;
  const waiters = new Set<() => void>();
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
    changes++;
    for (const wake of waiters) wake();
  });
  const logs: LoggingMessageNotification["params"][] = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    logs.push(notification.params);
  });
  const bridgeArgs = ["--browser", options.browser ?? h.browser, ...args];
  let stderr = "";
  let http: BridgeSession["http"];
  let child: ChildProcess | undefined;
  if (kind === "stdio") {
    const transport = new StdioClientTransport({ command: process.execPath, args: [binPath, ...bridgeArgs], env: h.env(options.env), stderr: "pipe" });
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await client.connect(transport);
  } else {
    const token = options.token ?? "test-token-0123456789abcdef";
    child = spawn(process.execPath, [binPath, ...bridgeArgs, "--http", "0"], {
      env: h.env({ BROWSER_SERVICE_MCP_TOKEN: token, ...options.env }),
      stdio: ["ignore", "ignore", "pipe"],
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [, url] = (await waitForLine(child, () => stderr, /Streamable HTTP on (\S+)/)) as unknown as [string, string];
    http = { url, token };
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  }
  const session: BridgeSession = {
    client,
    listChanged: () => changes,
    logs: () => logs,
    nextListChanged(seen) {
      return eventually(`list_changed number ${seen + 1}`, () => (changes > seen ? true : undefined)).then(() => undefined);
    },
    async tools() {
      return pageTools((await client.listTools()).tools);
    },
    waitForTools(ready) {
      return eventually("the bridge's tool list", async () => {
        const tools = pageTools((await client.listTools()).tools);
        return ready(tools) ? tools : undefined;
      });
    },
    async call(name, input = {}) {
      // The SDK's own request timeout (60 s) is longer than any call of these tests.
      return (await client.callTool({ name, arguments: input })) as CallToolResult;
    },
    stderr: () => stderr,
    ...(http !== undefined && { http }),
    async close() {
      await client.close();
      if (child && child.exitCode === null) {
        const exited = new Promise((resolve) => child?.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
  return session;
}

/** The text of a call result (its text blocks, joined). */
export const textOf = (result: CallToolResult) => result.content.map((block) => (block.type === "text" ? block.text : `[${block.type}]`)).join("\n");
