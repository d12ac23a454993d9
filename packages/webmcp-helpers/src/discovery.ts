import type { BrowserServiceClient } from "@browser-service/client";
import type { WebMcpTool } from "@browser-service/types";

/** Per-call options passed through to the client (project, abort signal, headers). */
export type DiscoveryOptions = Parameters<BrowserServiceClient["webmcp"]["listTools"]>[1];

/**
 * A fresh browser-wide snapshot of the tools registered across every tab and frame of
 * `browser` (its id or name). Nothing here is cached: each call asks the service, and a
 * `tool_ref` is only good until its document navigates or closes, so discover again
 * before each selection. An empty array means the pages offer no tools right now.
 */
export async function listTools(client: BrowserServiceClient, browser: string, options?: DiscoveryOptions): Promise<WebMcpTool[]> {
  const { tools } = await client.webmcp.listTools(browser, options);
  return tools;
}
