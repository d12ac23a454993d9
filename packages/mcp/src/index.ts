/**
 * An MCP server that gives any MCP client the WebMCP tools of a whole browser service
 * browser: every tab and frame, each tool one MCP tool with a stable name, page text
 * fenced as untrusted, calls through the helpers' no-retry invocation, and
 * `notifications/tools/list_changed` as the browser's tools change. The
 * `browser-service-mcp` command serves it over stdio or Streamable HTTP; these exports
 * embed it in a program. How tools are named, described and listed is the bridge's own
 * and not exported: it may change in any release.
 *
 * @packageDocumentation
 */
export { type Bridge, type BridgeOptions, bridgeIdentity, createBridge } from "./bridge.js";
export type { BrowserChoice, BrowserTarget } from "./browser-target.js";
export { type BridgeConfig, helpText, readConfig } from "./config.js";
export { ConfigError, McpBridgeError } from "./errors.js";
export { type HttpEndpoint, type HttpOptions, mcpPath, serveHttp } from "./http-server.js";
export { liveViewResourceUri, mcpAppMimeType, showBrowserToolName } from "./live-view-app.js";
export type { McpTool } from "./mcp-tool.js";
export type { ServerIdentity, SessionOptions } from "./session-server.js";
export { CatalogStdioServerTransport } from "./stdio-transport.js";
export type { CatalogEntry, CatalogState, ToolCatalog } from "./tool-catalog.js";
