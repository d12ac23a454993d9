import { limits, type WebMcpTool } from "@browser-service/types";
import { checkCriteria, type ToolCriteria } from "./criteria.js";
import { UsageError } from "./errors.js";
import type { SchemaLimits } from "./schema/limits.js";

/** Which tool `invokeTool` runs: chosen by criteria from a fresh snapshot, or named by the caller. */
export type InvokeTarget =
  | {
      /** Criteria for `selectTool` over a snapshot taken just before invoking. */
      select: ToolCriteria;
      toolRef?: never;
    }
  | {
      /**
       * The tool, from a snapshot the caller just took, or its `tool_ref`. A string is
       * looked up in a fresh snapshot to read its `input_schema`. If the service calls it
       * stale or unknown, the error is thrown: the caller chose this registration, so the
       * helper never chooses another.
       */
      toolRef: string | WebMcpTool;
      select?: never;
    };

/** Options of `invokeTool`. */
export type InvokeToolOptions = InvokeTarget & {
  /** The tool's input, a JSON object of at most 1 MiB serialized. Default `{}`. */
  input?: Record<string, unknown>;
  /** Seconds the service waits for the tool's result, an integer from 1 to 120. Default 60. */
  timeoutSec?: number;
  /** Bounds of the safe validator that checks `input` against the page's schema. */
  limits?: Partial<SchemaLimits>;
  /** Project of the browser: an id, or `null` for the client's default. */
  projectId?: string | null;
  /** Aborts discovery or the request; an invocation already sent may still run. */
  signal?: AbortSignal;
};

/** The largest serialized `input` the service takes (413 `payload_too_large` above): the spec's `x-max-bytes` of `input`, 1 MiB. */
export const maxInputBytes: number = limits.schemas.WebMcpInvokeRequest.input.maxBytes;

// The spec's range of `timeout_sec`, and the service's wait when it is left out.
const TIMEOUT = limits.schemas.WebMcpInvokeRequest.timeout_sec;

/** {@link InvokeToolOptions} checked, with the input as the JSON the service will receive. */
export interface CheckedInvoke {
  target: { kind: "select"; criteria: ToolCriteria } | { kind: "toolRef"; toolRef: string | WebMcpTool };
  timeoutSec: number;
  /** `JSON.parse(JSON.stringify(input))`: what is validated and sent. */
  input: Record<string, unknown>;
}

/**
 * Checks `invokeTool`'s options before anything is sent: exactly one of `select` and
 * `toolRef` (`invalid_target`), criteria that can match (`invalid_criteria`), a
 * `toolRef` that is a tool or a `tool_ref` (`invalid_target`), `timeoutSec` an integer
 * 1..120 (`invalid_timeout`),
 * `input` a plain object (`input_not_object`) that serializes (`input_not_serializable`)
 * to at most 1 MiB (`input_too_large`).
 */
export function checkInvokeOptions(options: InvokeToolOptions): CheckedInvoke {
  const { select, toolRef, input = {}, timeoutSec = TIMEOUT.default } = options;
  if ((select === undefined) === (toolRef === undefined)) {
    throw new UsageError(
      "invalid_target",
      "Pass exactly one of select (criteria, to choose from a fresh snapshot) and toolRef (a tool or tool_ref you chose).",
    );
  }
  if (select !== undefined) checkCriteria(select);
  const isTool = typeof toolRef === "object" && toolRef !== null && typeof toolRef.tool_ref === "string" && typeof toolRef.input_schema === "object";
  if (toolRef !== undefined && !isTool && !(typeof toolRef === "string" && toolRef !== "")) {
    throw new UsageError("invalid_target", "toolRef must be a tool from a snapshot (listTools) or its non-empty tool_ref string.");
  }
  if (!Number.isInteger(timeoutSec) || timeoutSec < TIMEOUT.minimum || timeoutSec > TIMEOUT.maximum) {
    throw new UsageError(
      "invalid_timeout",
      `timeoutSec must be an integer from ${TIMEOUT.minimum} to ${TIMEOUT.maximum} (seconds); got ${String(timeoutSec)}.`,
    );
  }
  if (typeof input !== "object" || input === null || Array.isArray(input)) {
    throw new UsageError(
      "input_not_object",
      `input must be a JSON object ({} when the tool takes none); got ${Array.isArray(input) ? "an array" : String(input)}.`,
    );
  }
  let serialized: string;
  try {
    serialized = JSON.stringify(input);
  } catch (cause) {
    throw new UsageError("input_not_serializable", `input cannot be serialized as JSON: ${(cause as Error).message}`, { cause });
  }
  const bytes = new TextEncoder().encode(serialized).byteLength;
  if (bytes > maxInputBytes) {
    throw new UsageError("input_too_large", `input is ${bytes} bytes serialized; the service takes at most ${maxInputBytes}. Nothing was sent.`);
  }
  return {
    target: select !== undefined ? { kind: "select", criteria: select } : { kind: "toolRef", toolRef: toolRef as string | WebMcpTool },
    timeoutSec,
    input: JSON.parse(serialized) as Record<string, unknown>,
  };
}
