/**
 * Helpers for WebMCP on the browser service: fresh discovery, selection of one tool by
 * where it is registered (tab, window, frame, origin, URL), invocation that is checked
 * before it is sent and never retried, a validator for page-provided input schemas that
 * bounds its own work, and rendering of page-provided text for a model as untrusted data.
 *
 * @packageDocumentation
 */
export { listTools, type DiscoveryOptions } from "./discovery.js";
export { findTools, selectTool } from "./selection.js";
export { registrationOrigin, type ToolCriteria } from "./criteria.js";
export { invokeTool } from "./invoke-tool.js";
export { maxInputBytes, type InvokeTarget, type InvokeToolOptions } from "./invoke-options.js";
export type {
  AwaitingSubmissionResult,
  CanceledResult,
  CompletedResult,
  ErrorResult,
  InvocationResult,
  OutcomeUnknownResult,
} from "./invocation-result.js";
export { describeToolsForModel, type DescribeOptions } from "./describe-tools.js";
export { cleanPageText, fenceUntrusted, untrustedClose, untrustedOpen, type CleanOptions } from "./untrusted-text.js";
export { compileInputSchema, type InputSchema, type InputValidation } from "./schema/input-schema.js";
export { defaultSchemaLimits, type SchemaLimits } from "./schema/limits.js";
export { InputInvalidError, UnsafeSchemaError, UsageError, ValidationLimitError, WebMcpHelpersError, type InputProblem } from "./errors.js";
export { AmbiguousToolError, ToolNotFoundError } from "./selection-errors.js";
export type { AmbiguousCandidate, Ambiguity, SourceField } from "./ambiguity.js";
export type { ToolSourceSummary } from "./tool-source.js";
