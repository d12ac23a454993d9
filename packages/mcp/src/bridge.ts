import { createRequire } from "node:module";
import { type BrowserServiceClient, createClient } from "@browser-service/client";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { type BrowserChoice, type BrowserTarget, openBrowser } from "./browser-target.js";
import type { CallContext } from "./call-tool.js";
import { ConsoleFeed } from "./console-feed.js";
import { LiveViewApp, showBrowserTool } from "./live-view-app.js";
import { createSessionServer, type ServerIdentity, type SessionOptions } from "./session-server.js";
import { ToolCatalog } from "./tool-catalog.js";

const { version } = createRequire(import.meta.url)("../package.json") as { version: string };

/** The name and version the bridge gives MCP clients. */
export const bridgeIdentity: ServerIdentity = { name: "browser-service-mcp", version };

/** Options of {@link createBridge}. */
export interface BridgeOptions {
  /** A client of the service; default `createClient()` (the `BROWSER_SERVICE_*` variables). */
  client?: BrowserServiceClient;
  /** The browser to serve, or one to create. Default: create a blank one. */
  browser?: BrowserChoice;
  /** Project of the browser (an id); default the client's. */
  projectId?: string;
  /** Keep a browser the bridge created when it closes. Default false: it is deleted. */
  keep?: boolean;
  /** Milliseconds between two reads of the tool snapshot. Default 1000. */
  pollIntervalMs?: number;
  /** `timeout_sec` of each invocation, 1..120. Default 30. */
  timeoutSec?: number;
  /** Where the bridge reports what happens in the background. Default: nowhere. */
  log?: (message: string) => void;
}

/** A bridge from one browser's WebMCP tools to MCP sessions. */
export interface Bridge {
  /** The browser served. */
  browser: BrowserTarget;
  /** Its tools as MCP tools, kept current. */
  catalog: ToolCatalog;
  /**
   * A new MCP server for one session (connect it to any SDK transport). It offers
   * `logging`: the browser's console lines, when its `console` telemetry category is on.
   */
  createServer(session?: SessionOptions): Server;
  /** Stops polling and following the console, and deletes the browser if the bridge created it (unless kept). */
  close(): Promise<void>;
}

/**
 * Opens (or creates) the browser, reads its tools once, and starts polling them
 * (`If-None-Match`, every `pollIntervalMs`). Each MCP session gets its own server from
 * `createServer()`; all of them share the catalog, so a change found by any read is
 * announced to every session, and one stream of the browser's console lines, followed
 * while some session is initialized and open.
 */
export async function createBridge(options: BridgeOptions = {}): Promise<Bridge> {
  const client = options.client ?? createClient();
  const browser = await openBrowser(client, options.browser ?? { create: {} }, options.projectId);
  const catalog = new ToolCatalog(client, browser.id, {
    ownTools: [showBrowserTool],
    ...(options.projectId !== undefined && { projectId: options.projectId }),
    ...(options.log !== undefined && { log: options.log }),
  });
  const context: CallContext = {
    client,
    browser: browser.id,
    timeoutSec: options.timeoutSec ?? 30,
    ...(options.projectId !== undefined && { projectId: options.projectId }),
  };
  const liveView = new LiveViewApp(client, browser.id, options.projectId);
  const consoleFeed = new ConsoleFeed(client, browser.id, {
    ...(options.projectId !== undefined && { projectId: options.projectId }),
    ...(options.log !== undefined && { log: options.log }),
  });
  try {
    await catalog.refresh();
  } catch (error) {
    options.log?.(`could not read the browser's tools yet: ${(error as Error).message}`);
  }
  catalog.start(options.pollIntervalMs ?? 1000);
  let closing: Promise<void> | undefined;
  return {
    browser,
    catalog,
    createServer: (session = {}) => createSessionServer(catalog, context, bridgeIdentity, { ...session, liveView, console: consoleFeed }),
    close() {
      closing ??= (async () => {
        catalog.stop();
        consoleFeed.close();
        if (browser.created && !options.keep) {
          await client.browsers.delete(browser.id, options.projectId === undefined ? {} : { projectId: options.projectId });
          options.log?.(`deleted browser ${browser.id}`);
        }
      })();
      return closing;
    },
  };
}
