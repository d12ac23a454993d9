import type { CompiledError } from "./compiled.js";
import { findingsOf } from "./findings.js";
import { messageOf } from "./messages.js";
import type { ValidationIssue } from "./result.js";

/** Ajv's errors as issues, in the order found. */
export function toIssues(errors: readonly CompiledError[]): ValidationIssue[] {
  return findingsOf(errors).map((finding) => ({ pointer: finding.pointer, rule: finding.rule, message: messageOf(finding) }));
}
