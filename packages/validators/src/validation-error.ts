import type { ValidationIssue } from "./result.js";

/** How many issues the message of a {@link ValidationError} spells out; `issues` has them all. */
const listed = 3;

function summarize(issues: readonly ValidationIssue[]): string {
  const shown = issues.slice(0, listed).map((issue) => issue.message);
  const more = issues.length > listed ? ` (and ${issues.length - listed} more)` : "";
  const count = issues.length === 1 ? "" : ` with ${issues.length} issues`;
  return `Validation failed${count}: ${shown.join(" ")}${more}`;
}

/** Thrown by the `assertX` functions: the value does not satisfy the schema. */
export class ValidationError extends Error {
  /** Stable code of this error. */
  readonly code = "validation_failed";
  override readonly name = "ValidationError";
  /** Every problem found, in the order found. */
  readonly issues: readonly ValidationIssue[];

  constructor(issues: readonly ValidationIssue[]) {
    super(summarize(issues));
    this.issues = issues;
  }
}
