import type { WebMcpTool } from "@browser-service/types";

let refs = 0;

/** A tool as the service lists it, registered in tab `tab` (top-level, or in frame `frame`). */
export function tool(
  name: string,
  tab: number,
  options: {
    frame?: { id: number; url: string };
    pageUrl?: string;
    description?: string;
    title?: string;
    inputSchema?: Record<string, unknown>;
    annotations?: WebMcpTool["annotations"];
  } = {},
): WebMcpTool {
  const {
    frame,
    pageUrl = `http://127.0.0.1:9000/tab${tab}`,
    description = `The ${name} tool.`,
    title = `Tab ${tab}`,
    inputSchema = { type: "object", properties: {} },
  } = options;
  return {
    tool_ref: `wmt_test${++refs}`,
    name,
    description,
    input_schema: inputSchema,
    ...(options.annotations !== undefined && { annotations: options.annotations }),
    source: { window_id: 7, tab_id: tab, page_url: pageUrl, page_title: title, frame: frame === undefined ? null : { frame_id: frame.id, url: frame.url } },
  };
}
