import type { BrowserServiceClient } from "@browser-service/client";
import type { WebMcpTool } from "@browser-service/types";

/** A client whose every `webmcp.listTools` answer passes through `afterList` first. */
export interface HookedClient {
  client: BrowserServiceClient;
  /** How many snapshots were taken through it. */
  listCalls(): number;
}

/**
 * Wraps a real client so that a test can act between a discovery and the invocation that
 * follows it (navigate the tab, say), which is how a `tool_ref` goes stale in real use.
 * `afterList` may return a replacement snapshot; requests still go to the real server.
 */
export function hookListTools(client: BrowserServiceClient, afterList: (tools: WebMcpTool[], call: number) => Promise<WebMcpTool[] | undefined>): HookedClient {
  let calls = 0;
  const webmcp: BrowserServiceClient["webmcp"] = {
    ...client.webmcp,
    async listTools(browser, options) {
      const call = ++calls;
      const answer = await client.webmcp.listTools(browser, options);
      return { tools: (await afterList(answer.tools, call)) ?? answer.tools };
    },
  };
  return { client: { ...client, webmcp }, listCalls: () => calls };
}
