import { APIError, type BrowserServiceClient, ConflictError, NotFoundError } from "@browser-service/client";
import type { WebMcpTool } from "@browser-service/types";
import { invokeTool, listTools, registrationOrigin, selectTool, ToolNotFoundError, WebMcpHelpersError } from "@browser-service/webmcp-helpers";
import { type CallResult, callResult, refusedResult, unknownFailureResult } from "./call-result.js";

/** What every call of one bridge shares. */
export interface CallContext {
  client: BrowserServiceClient;
  /** The browser's id. */
  browser: string;
  /** Project of the browser, as the client takes it. */
  projectId?: string | null;
  /** The `timeout_sec` of every invocation, 1..120. */
  timeoutSec: number;
}

/** 404 `tool_not_found` and 409 `tool_ref_stale`: the only answers after which no invocation began. */
const nothingRan = (error: unknown) =>
  (error instanceof ConflictError && error.code === "tool_ref_stale") || (error instanceof NotFoundError && error.code === "tool_not_found");

/** Criteria that pick the registration in the same slot: same name, window, tab, frame and origin. */
const sameSource = (tool: WebMcpTool) => ({
  name: tool.name,
  windowId: tool.source.window_id,
  tabId: tool.source.tab_id,
  frame: tool.source.frame === null ? ("top" as const) : tool.source.frame.frame_id,
  origin: registrationOrigin(tool),
});

/**
 * Invokes `tool` once through the helpers' `invokeTool` (input checked against the page's
 * schema by the safe validator, one request, never retried). When the service answers
 * that the `tool_ref` is stale (409) or unknown (404), which means nothing ran, the tool
 * is looked up once more, by the same source (name, window, tab, frame, origin), and
 * that registration is invoked; a second such answer ends the call. Any other failure of
 * the request itself leaves the outcome open, and the result says so.
 */
export async function callTool(context: CallContext, mcpName: string, tool: WebMcpTool, input: Record<string, unknown>, signal?: AbortSignal): Promise<CallResult> {
  const options = {
    input,
    timeoutSec: context.timeoutSec,
    ...(context.projectId !== undefined && { projectId: context.projectId }),
    ...(signal !== undefined && { signal }),
  };
  let target = tool;
  for (let attempt = 0; ; attempt++) {
    try {
      return callResult(await invokeTool(context.client, context.browser, { ...options, toolRef: target }));
    } catch (error) {
      if (error instanceof WebMcpHelpersError) return refusedResult(`The input for ${mcpName} was refused (${error.code}).`, error.message);
      if (nothingRan(error) && attempt === 0) {
        const found = await findAgain(context, mcpName, target, options);
        if ("result" in found) return found.result;
        target = found.tool;
        continue;
      }
      if (nothingRan(error)) return gone(mcpName);
      // Answers below 500 are refusals before any invocation began; anything else (a 5xx,
      // a dropped connection, a timeout) may have come after the tool started.
      if (error instanceof APIError && error.status < 500) return refusedResult(`The service refused the call of ${mcpName} (${error.status} ${error.code}).`, error.message);
      return unknownFailureResult(mcpName, error instanceof Error ? error.message : String(error));
    }
  }
}

/** The registration now in `tool`'s slot, or the result to return when there is none (nothing ran either way). */
async function findAgain(context: CallContext, mcpName: string, tool: WebMcpTool, options: { projectId?: string | null; signal?: AbortSignal }): Promise<{ tool: WebMcpTool } | { result: CallResult }> {
  try {
    const tools = await listTools(context.client, context.browser, {
      ...(options.projectId !== undefined && { projectId: options.projectId }),
      ...(options.signal !== undefined && { signal: options.signal }),
    });
    return { tool: selectTool(tools, sameSource(tool)) };
  } catch (error) {
    if (error instanceof ToolNotFoundError) return { result: gone(mcpName) };
    const detail = error instanceof Error ? error.message : String(error);
    return { result: refusedResult(`The registration behind ${mcpName} went away, and looking it up again failed.`, detail) };
  }
}

const gone = (name: string): CallResult => ({
  content: [{ type: "text", text: `The tool ${name} is no longer registered where it was (its page navigated or closed), and nothing ran. List the tools again before choosing one.` }],
  isError: true,
});
