import { alternativesFindings } from "./alternatives.js";
import { takeBlock } from "./blocks.js";
import type { CompiledError } from "./compiled.js";
import { conditionedFindings, forbiddenFinding } from "./conditions.js";
import { type Finding, plainFinding } from "./finding.js";
import { hints } from "./generated/hints.js";

/**
 * Ajv's errors as findings: each `oneOf`/`anyOf` failure replaced by what is useful of
 * its alternatives' errors, each `if` failure by its branch's errors with the condition,
 * each `not` failure by what it forbids.
 */
export function findingsOf(errors: readonly CompiledError[]): Finding[] {
  const findings: Finding[] = [];
  for (const error of errors) {
    const keyword = error.keyword;
    // Only these keywords have hints; looking the others up would cost time for nothing.
    const hint = keyword === "oneOf" || keyword === "if" || keyword === "not" || keyword === "anyOf" ? hints[error.schemaPath] : undefined;
    if (hint?.kind === "if") {
      const part = error.params["failingKeyword"] === "else" ? 1 : 0;
      const block = takeBlock(findings, error.instancePath, hint, part)[part]!;
      for (const finding of conditionedFindings(block, hint, error)) findings.push(finding);
    } else if (hint?.kind === "oneOf" || hint?.kind === "anyOf") {
      for (const finding of alternativesFindings(takeBlock(findings, error.instancePath, hint), hint, error)) findings.push(finding);
    } else if (hint?.kind === "not") {
      findings.push(forbiddenFinding(hint, error));
    } else {
      findings.push(plainFinding(error));
    }
  }
  return findings;
}
