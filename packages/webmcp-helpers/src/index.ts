/**
 * Helpers for WebMCP on the browser service: fresh discovery, selection of one tool by
 * where it is registered (tab, window, frame, origin, URL), invocation that is checked
 * before it is sent and never retried, a validator for page-provided input schemas that
 * bounds its own work, and rendering of page-provided text for a model as untrusted data.
 *
 * @packageDocumentation
 */

export type { Ambiguity, AmbiguousCandidate, SourceField } from "./ambiguity.js";
export { registrationOrigin, type ToolCriteria } from "./criteria.js";
export { type DescribeOptions, describeToolsForModel } from "./describe-tools.js";
export { type DiscoveryOptions, listTools } from "./discovery.js";
export { InputInvalidError, type InputProblem, UnsafeSchemaError, UsageError, ValidationLimitError, WebMcpHelpersError } from "./errors.js";
export type {
  AwaitingSubmissionResult,
  CanceledResult,
  CompletedResult,
  ErrorResult,
  InvocationResult,
  OutcomeUnknownResult,
} from "./invocation-result.js";
export { type InvokeTarget, type InvokeToolOptions, maxInputBytes } from "./invoke-options.js";
export { invokeTool } from "./invoke-tool.js";
export { compileInputSchema, type InputSchema, type InputValidation } from "./schema/input-schema.js";
export { defaultSchemaLimits, type SchemaLimits } from "./schema/limits.js";
export { findTools, selectTool } from "./selection.js";
export { AmbiguousToolError, ToolNotFoundError } from "./selection-errors.js";
export type { ToolSourceSummary } from "./tool-source.js";
export { type CleanOptions, cleanPageText, fenceUntrusted, untrustedClose, untrustedOpen } from "./untrusted-text.js";
