import { fenceUntrusted, type InvocationResult } from "@browser-service/webmcp-helpers";
import { maxToolNameLength } from "./tool-names.js";

/** A `tools/call` result, as MCP defines it. */
export interface CallResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/**
 * The only key of a result's `structuredContent`: under it, the tool's output exactly
 * as the page returned it. The name says what it is, since a client hands structured
 * content to its model without the fence that the text content has.
 */
export const pageOutputKey = "untrusted_page_output";

const text = (value: string, isError: boolean): CallResult => ({ content: [{ type: "text", text: value }], ...(isError && { isError: true }) });

/** An MCP tool name in the bridge's text: derived from the page's name, so fenced like the rest of the page's words. */
export const fencedName = (name: string) => fenceUntrusted(name, { maxLength: maxToolNameLength });

/**
 * How an invocation ended, as a `tools/call` result. The text is the helpers' `forModel`
 * (page text fenced as untrusted) with the bridge's own words where the status needs
 * them:
 *
 * - `completed`: not an error; the output (any JSON value) is also `structuredContent`,
 *   as `{ untrusted_page_output: output }` ({@link pageOutputKey});
 * - `error`, `canceled`: `isError`, with the page's error text;
 * - `awaiting_submission`: not an error; the form was filled and not submitted;
 * - `outcome_unknown`: `isError`; the tool may have run and must not be called again
 *   blindly; the invocation id when the browser reported one.
 */
export function callResult(result: InvocationResult): CallResult {
  switch (result.status) {
    case "completed":
      return { ...text(result.forModel, false), ...(result.output !== undefined && { structuredContent: { [pageOutputKey]: result.output } }) };
    case "error":
    case "canceled":
      return text(result.forModel, true);
    case "awaiting_submission":
      return text(
        `${result.forModel} Nothing was submitted: the form waits in the browser for the user (or for a program driving the browser) to submit it.`,
        false,
      );
    case "outcome_unknown": {
      const id = result.invocationId === undefined ? "no invocation id was reported" : `invocation id ${result.invocationId}`;
      return text(
        `OUTCOME UNKNOWN (${id}). The tool may have run: its effect may have happened and was not rolled back. Do not call it again blindly; check the page (or ask the user) first.\n${result.forModel}`,
        true,
      );
    }
  }
}

/** A call that was refused before anything was sent; `detail` may quote the page's schema, so it is fenced. */
export function refusedResult(reason: string, detail: string): CallResult {
  return text(`${reason} Nothing was sent to the page.\n${fenceUntrusted(detail, { maxLength: 4000, multiline: true })}`, true);
}

/**
 * A call of a name whose registration is gone: its page navigated, closed, or now
 * registers a different tool. Nothing was sent to the browser, and since a name never
 * passes to another registration, the client must list the tools again to go on.
 */
export function pageChangedResult(name: string): CallResult {
  return text(
    `PAGE CHANGED: the tool ${fencedName(name)} that you listed is no longer registered (its page navigated, closed, or registered a different tool), and nothing was sent to the browser. List the tools again before choosing one; this name will never be given to another tool.`,
    true,
  );
}

/** A call whose request failed in a way that leaves open whether the tool ran; `detail` may quote the service, which may quote the page. */
export function unknownFailureResult(toolName: string, detail: string): CallResult {
  return text(
    `OUTCOME UNKNOWN: the request to invoke ${fencedName(toolName)} failed. The tool may have run. Do not call it again blindly; check the page (or ask the user) first. The error:\n${fenceUntrusted(detail, { maxLength: 500, multiline: true })}`,
    true,
  );
}
