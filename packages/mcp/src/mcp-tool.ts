import type { WebMcpTool } from "@browser-service/types";
import { describeTool, toolTitle } from "./tool-description.js";
import { mcpInputSchema } from "./input-schema.js";

/** One tool as `tools/list` shows it (the MCP `Tool` shape). */
export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: "object"; [keyword: string]: unknown };
  annotations: {
    title: string;
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    openWorldHint: true;
  };
}

/**
 * The MCP tool for a page's tool, under `name`. Hints are copied only where the page
 * gave them: `readOnlyHint` from `read_only`, `destructiveHint` from `consequential`
 * (absent, MCP clients assume a tool may be destructive); `openWorldHint` is always
 * true, since a page reaches whatever it likes.
 */
export function toMcpTool(name: string, tool: WebMcpTool): McpTool {
  const { schema, withheld } = mcpInputSchema(tool.input_schema);
  const title = toolTitle(tool);
  const { read_only, consequential } = tool.annotations ?? {};
  return {
    name,
    title,
    description: describeTool(tool, withheld),
    inputSchema: schema,
    annotations: {
      title,
      ...(read_only !== undefined && { readOnlyHint: read_only }),
      ...(consequential !== undefined && { destructiveHint: consequential }),
      openWorldHint: true,
    },
  };
}
