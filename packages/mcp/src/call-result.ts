import { cleanPageText, fenceUntrusted, type InvocationResult } from "@browser-service/webmcp-helpers";

/** A `tools/call` result, as MCP defines it. */
export interface CallResult {
  [key: string]: unknown;
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

const text = (value: string, isError: boolean): CallResult => ({ content: [{ type: "text", text: value }], ...(isError && { isError: true }) });

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * How an invocation ended, as a `tools/call` result. The text is the helpers' `forModel`
 * (page text fenced as untrusted) with the bridge's own words where the status needs
 * them:
 *
 * - `completed`: not an error; an object output is also `structuredContent`;
 * - `error`, `canceled`: `isError`, with the page's error text;
 * - `awaiting_submission`: not an error; the form was filled and not submitted;
 * - `outcome_unknown`: `isError`; the tool may have run and must not be called again
 *   blindly; the invocation id when the browser reported one.
 */
export function callResult(result: InvocationResult): CallResult {
  switch (result.status) {
    case "completed":
      return { ...text(result.forModel, false), ...(isPlainObject(result.output) && { structuredContent: result.output }) };
    case "error":
    case "canceled":
      return text(result.forModel, true);
    case "awaiting_submission":
      return text(`${result.forModel} Nothing was submitted: the form waits in the browser for the user (or for a program driving the browser) to submit it.`, false);
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

/** A call whose request failed in a way that leaves open whether the tool ran. */
export function unknownFailureResult(toolName: string, detail: string): CallResult {
  return text(
    `OUTCOME UNKNOWN: the request to invoke ${toolName} failed (${cleanPageText(detail, { maxLength: 500 })}). The tool may have run. Do not call it again blindly; check the page (or ask the user) first.`,
    true,
  );
}
