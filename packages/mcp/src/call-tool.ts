import { APIError, type BrowserServiceClient, ConflictError, NotFoundError } from "@browser-service/client";
import type { WebMcpTool } from "@browser-service/types";
import { invokeTool, listTools, WebMcpHelpersError } from "@browser-service/webmcp-helpers";
import { type CallResult, callResult, fencedName, pageChangedResult, refusedResult, unknownFailureResult } from "./call-result.js";
import { registrationKey } from "./tool-names.js";

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

/**
 * Invokes `tool` once through the helpers' `invokeTool` (input checked against the page's
 * schema by the safe validator, one request, never retried). When the service answers
 * that the `tool_ref` is stale (409) or unknown (404), which means nothing ran, the tool
 * is looked up once more, and only a registration with the same identity
 * ({@link registrationKey}: the same tool of the same document, as after a reload) is
 * invoked; anything else registered there now is another tool, which the client never
 * saw, and the result says the page changed. A second such answer ends the call. Any
 * other failure of the request itself leaves the outcome open, and the result says so.
 */
export async function callTool(
  context: CallContext,
  mcpName: string,
  tool: WebMcpTool,
  input: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<CallResult> {
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
      if (error instanceof WebMcpHelpersError) return refusedResult(`The input for ${fencedName(mcpName)} was refused (${error.code}).`, error.message);
      if (nothingRan(error) && attempt === 0) {
        const found = await findAgain(context, mcpName, target, options);
        if ("result" in found) return found.result;
        target = found.tool;
        continue;
      }
      if (nothingRan(error)) return pageChangedResult(mcpName);
      // Answers below 500 are refusals before any invocation began; anything else (a 5xx,
      // a dropped connection, a timeout) may have come after the tool started.
      if (error instanceof APIError && error.status < 500)
        return refusedResult(`The service refused the call of ${fencedName(mcpName)} (${error.status} ${error.code}).`, error.message);
      return unknownFailureResult(mcpName, error instanceof Error ? error.message : String(error));
    }
  }
}

/** The registration that is `tool` again (a reload), or the result to return when there is none (nothing ran either way). */
async function findAgain(
  context: CallContext,
  mcpName: string,
  tool: WebMcpTool,
  options: { projectId?: string | null; signal?: AbortSignal },
): Promise<{ tool: WebMcpTool } | { result: CallResult }> {
  let tools: WebMcpTool[];
  try {
    tools = await listTools(context.client, context.browser, {
      ...(options.projectId !== undefined && { projectId: options.projectId }),
      ...(options.signal !== undefined && { signal: options.signal }),
    });
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    return { result: refusedResult(`The registration behind ${fencedName(mcpName)} went away, and looking it up again failed.`, detail) };
  }
  const key = registrationKey(tool);
  const { window_id, tab_id } = tool.source;
  const same = tools.filter(
    (each) => each.name === tool.name && each.source.window_id === window_id && each.source.tab_id === tab_id && registrationKey(each) === key,
  );
  return same.length === 1 ? { tool: same[0] as WebMcpTool } : { result: pageChangedResult(mcpName) };
}
