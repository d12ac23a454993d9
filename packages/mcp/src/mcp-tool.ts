import type { WebMcpTool } from "@browser-service/types";
import { mcpInputSchema } from "./input-schema.js";
import { describeTool } from "./tool-description.js";

/** One tool as `tools/list` shows it (the MCP `Tool` shape). */
export interface McpTool {
  name: string;
  /** Only on the bridge's own tools: a page's title would be page text outside any fence. */
  title?: string;
  description: string;
  inputSchema: { type: "object"; [keyword: string]: unknown };
  annotations: {
    readOnlyHint?: boolean;
    destructiveHint?: boolean;
    /** Always true for a page's tool, which reaches whatever it likes. */
    openWorldHint: boolean;
  };
  /** Only on the bridge's own tools (the MCP Apps link of `show_browser`). */
  _meta?: Record<string, unknown>;
}

/**
 * The MCP tool for a page's tool, under `name`. It has no `title` (nor
 * `annotations.title`): a title is page text shown outside any fence, and the name,
 * limited to `A-Za-z0-9_-.`, already says what to call the tool. Hints are copied only
 * where the page gave them: `readOnlyHint` from `read_only`, `destructiveHint` from
 * `consequential` (absent, MCP clients assume a tool may be destructive);
 * `openWorldHint` is always true, since a page reaches whatever it likes.
 */
export function toMcpTool(name: string, tool: WebMcpTool): McpTool {
  const { schema, withheld } = mcpInputSchema(tool.input_schema);
  const { read_only, consequential } = tool.annotations ?? {};
  return {
    name,
    description: describeTool(tool, withheld),
    inputSchema: schema,
    annotations: {
      ...(read_only !== undefined && { readOnlyHint: read_only }),
      ...(consequential !== undefined && { destructiveHint: consequential }),
      openWorldHint: true,
    },
  };
}
