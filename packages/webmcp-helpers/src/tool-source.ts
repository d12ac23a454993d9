import type { WebMcpTool } from "@browser-service/types";
import { registrationOrigin } from "./criteria.js";
import { cleanPageText } from "./untrusted-text.js";

/**
 * Where one tool is registered, flattened for errors and listings: the browser's own
 * fields (`window_id`, `tab_id`, URLs, `frame_id`) plus the registering origin.
 */
export interface ToolSourceSummary {
  /** The tool's `tool_ref`, for passing as `toolRef` while this snapshot is fresh. */
  toolRef: string;
  /** The page-provided name. */
  name: string;
  /** `source.window_id`. */
  windowId: number;
  /** `source.tab_id`. */
  tabId: number;
  /** `source.page_url`: the tab's top-level URL. */
  pageUrl: string;
  /** The page-provided title of the tab. */
  title: string;
  /** `"top"` for the top-level document, else the frame's id and URL. */
  frame: "top" | { frameId: number; url: string };
  /** Origin of the registering document (the frame's when in a frame). */
  origin: string;
}

/** The {@link ToolSourceSummary} of a tool. */
export function summarizeSource(tool: WebMcpTool): ToolSourceSummary {
  const { window_id, tab_id, page_url, page_title, frame } = tool.source;
  return {
    toolRef: tool.tool_ref,
    name: tool.name,
    windowId: window_id,
    tabId: tab_id,
    pageUrl: page_url,
    title: page_title,
    frame: frame ? { frameId: frame.frame_id, url: frame.url } : "top",
    origin: registrationOrigin(tool),
  };
}

/**
 * One line for people: `"search" in tab 3 of window 1, frame 12 (http://localhost:9000/w)
 * of http://127.0.0.1:4000/shop, origin http://localhost:9000`. Page-provided parts
 * are cleaned and cut, since messages end up in logs and prompts.
 */
export function describeSource(tool: WebMcpTool): string {
  const { window_id, tab_id, page_url, frame } = tool.source;
  const url = (text: string) => cleanPageText(text, { maxLength: 200 });
  const where = frame ? `frame ${frame.frame_id} (${url(frame.url)}) of ${url(page_url)}` : `top-level document ${url(page_url)}`;
  return `${JSON.stringify(cleanPageText(tool.name, { maxLength: 80 }))} in tab ${tab_id} of window ${window_id}, ${where}, origin ${registrationOrigin(tool)}`;
}
