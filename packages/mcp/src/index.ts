/**
 * An MCP server that gives any MCP client the WebMCP tools of a whole browser service
 * browser: every tab and frame, each tool one MCP tool with a stable name, page text
 * fenced as untrusted, calls through the helpers' no-retry invocation, and
 * `notifications/tools/list_changed` as the browser's tools change. The
 * `browser-service-mcp` command serves it over stdio or Streamable HTTP; these exports
 * embed it.
 *
 * @packageDocumentation
 */
export { type Bridge, type BridgeOptions, bridgeIdentity, createBridge } from "./bridge.js";
export type { BrowserChoice, BrowserTarget } from "./browser-target.js";
export { type CallResult, pageOutputKey } from "./call-result.js";
export { type CallContext, callTool } from "./call-tool.js";
export { type BridgeConfig, helpText, minTokenLength, readConfig } from "./config.js";
export { ConfigError, McpBridgeError } from "./errors.js";
export { type HttpEndpoint, type HttpOptions, mcpPath, serveHttp } from "./http-server.js";
export { type McpInputSchema, mcpInputSchema, schemaCaps } from "./input-schema.js";
export { listingFrame } from "./listing-frame.js";
export {
  LiveViewApp,
  type LiveViewContents,
  liveViewResource,
  liveViewResourceUri,
  mcpAppMimeType,
  mcpAppsExtension,
  showBrowserTool,
  showBrowserToolName,
} from "./live-view-app.js";
export { type McpTool, toMcpTool } from "./mcp-tool.js";
export { createSessionServer, type ServerIdentity, serverInstructions } from "./session-server.js";
export { CatalogStdioServerTransport } from "./stdio-transport.js";
export { type CatalogEntry, type CatalogState, ToolCatalog, type ToolCatalogOptions } from "./tool-catalog.js";
export { describeTool, descriptionCaps, descriptionLabel } from "./tool-description.js";
export { maxToolNameLength, registrationKey, sanitizeToolName, ToolNames } from "./tool-names.js";
