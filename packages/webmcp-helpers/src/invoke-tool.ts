import { type BrowserServiceClient, ConflictError, NotFoundError, OutcomeUnknownError, timeoutSecMarginMs } from "@browser-service/client";
import type { WebMcpTool } from "@browser-service/types";
import { listTools } from "./discovery.js";
import { InputInvalidError } from "./errors.js";
import { completedResult, type InvocationResult, outcomeUnknownResult } from "./invocation-result.js";
import { type CheckedInvoke, checkInvokeOptions, type InvokeToolOptions } from "./invoke-options.js";
import { compileInputSchema } from "./schema/input-schema.js";
import type { SchemaLimits } from "./schema/limits.js";
import { selectTool } from "./selection.js";
import { ToolNotFoundError } from "./selection-errors.js";

type RequestOptions = { projectId?: string | null; signal?: AbortSignal };

/**
 * The tool to invoke: selected from a snapshot taken now, or the caller's. A `tool_ref`
 * string is looked up in a fresh snapshot only to read its schema; a ref that the
 * snapshot lacks is gone, and nothing is sent.
 */
async function resolveTool(client: BrowserServiceClient, browser: string, target: CheckedInvoke["target"], request: RequestOptions): Promise<WebMcpTool> {
  if (target.kind === "toolRef" && typeof target.toolRef !== "string") return target.toolRef;
  const tools = await listTools(client, browser, request);
  if (target.kind === "select") return selectTool(tools, target.criteria);
  const ref = target.toolRef;
  const tool = tools.find((candidate) => candidate.tool_ref === ref);
  if (!tool) throw ToolNotFoundError.forToolRef(ref as string, tools);
  return tool;
}

/** Throws `UnsafeSchemaError`, `ValidationLimitError` or `InputInvalidError` unless `input` matches. */
function checkInput(tool: WebMcpTool, input: Record<string, unknown>, limits: Partial<SchemaLimits> | undefined): void {
  const { valid, problems } = compileInputSchema(tool.input_schema, limits).validate(input);
  if (!valid) throw new InputInvalidError(problems);
}

/** 404 `tool_not_found` and 409 `tool_ref_stale`: the only answers after which no invocation began. */
const noInvocationBegan = (error: unknown) =>
  (error instanceof ConflictError && error.code === "tool_ref_stale") || (error instanceof NotFoundError && error.code === "tool_not_found");

/**
 * Invokes one WebMCP tool of `browser` (its id or name), following the service's rules:
 *
 * 1. Checks the options before any request (`UsageError`): exactly one of `select` and
 *    `toolRef`, `timeoutSec` 1..120, `input` a JSON object of at most 1 MiB.
 * 2. With `select`, discovers again and selects (`ToolNotFoundError`,
 *    `AmbiguousToolError`); with `toolRef`, uses the caller's choice.
 * 3. Checks `input` against the tool's page-provided `input_schema` with the safe
 *    validator (`UnsafeSchemaError`, `ValidationLimitError`, `InputInvalidError`).
 * 4. Sends it once, with an HTTP timeout longer than `timeoutSec`. Nothing is retried.
 * 5. Returns how it ended, `completed`, `canceled`, `error`, `awaiting_submission` or
 *    `outcome_unknown` (the 504: the tool may have run; see `OutcomeUnknownResult`).
 *
 * On 409 `tool_ref_stale` or 404 `tool_not_found`, which mean that no invocation began,
 * a `select` call discovers, selects and checks once more; a `toolRef` call throws the
 * client's error. Any other error of the service is thrown as the client's `APIError`.
 */
export async function invokeTool(client: BrowserServiceClient, browser: string, options: InvokeToolOptions): Promise<InvocationResult> {
  const { target, timeoutSec, input } = checkInvokeOptions(options);
  const request: RequestOptions = {
    ...(options.projectId !== undefined && { projectId: options.projectId }),
    ...(options.signal !== undefined && { signal: options.signal }),
  };
  let rediscovered = false;
  for (;;) {
    const tool = await resolveTool(client, browser, target, request);
    checkInput(tool, input, options.limits);
    try {
      const body = await client.webmcp.invoke(
        browser,
        { tool_ref: tool.tool_ref, input, timeout_sec: timeoutSec },
        // The service answers within timeout_sec, a 504 included; the margin lets that answer arrive.
        { ...request, timeoutMs: timeoutSec * 1000 + timeoutSecMarginMs, maxRetries: 0 },
      );
      return completedResult(tool, body, rediscovered);
    } catch (error) {
      if (error instanceof OutcomeUnknownError) return outcomeUnknownResult(tool, error, rediscovered);
      if (target.kind !== "select" || rediscovered || !noInvocationBegan(error)) throw error;
      rediscovered = true;
    }
  }
}
