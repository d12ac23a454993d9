import type { CompiledError } from "./compiled.js";
import { type Finding, summaryFinding } from "./finding.js";
import type { Branch, Hint } from "./hints.js";

type Alternatives = Extract<Hint, { kind: "oneOf" | "anyOf" }>;

/** "must have exactly one of mode, id, name", or the shapes when some require several keys. */
function exactlyOne(branches: readonly Branch[]): string {
  const required = branches.map((branch) => branch.required ?? []);
  if (required.every((keys) => keys.length === 1)) return `must have exactly one of ${required.map((keys) => keys[0]).join(", ")}`;
  return `must match exactly one of these shapes: ${required.map((keys) => `{${keys.join(", ")}}`).join(", ")}`;
}

// The sentence depends on the hint only, which comes from the generated code.
const summaries = new WeakMap<Alternatives, string>();

function summary(hint: Alternatives, error: CompiledError): Finding[] {
  let expected = summaries.get(hint);
  if (expected === undefined) {
    expected =
      hint.shape === "exactlyOne"
        ? exactlyOne(hint.branches)
        : `must match ${hint.kind === "anyOf" ? "at least" : "exactly"} one of its ${hint.branches.length} alternatives`;
    summaries.set(hint, expected);
  }
  return [summaryFinding(error, expected)];
}

/**
 * A failed `oneOf`/`anyOf`, from its alternatives' findings (by alternative): for a
 * nullable value, the other alternative's (with `null` also acceptable); for a value of
 * the wrong type, the types accepted; for an "exactly one of" object, the findings of the
 * one alternative whose required keys are all there, else which keys it takes; otherwise
 * one sentence.
 */
export function alternativesFindings(byBranch: readonly (readonly Finding[])[], hint: Alternatives, error: CompiledError): readonly Finding[] {
  // Several alternatives matched (the value satisfied more than one): no finding explains it.
  if (Array.isArray(error.params["passingSchemas"])) return summary(hint, error);
  const at = error.instancePath;

  if (hint.shape === "nullable") {
    const other = byBranch[hint.branches.findIndex((branch) => !branch.isNull)] ?? [];
    const aboutValue = (finding: Finding): boolean => finding.pointer === at && ["const", "enum", "type"].includes(finding.rule);
    return other.map((finding) => (aboutValue(finding) ? { ...finding, orNull: true } : finding));
  }
  const typeErrors = byBranch.map((findings) => findings.find((finding) => finding.rule === "type" && finding.pointer === at));
  if (typeErrors.every((finding) => finding !== undefined)) {
    const types = [...new Set(typeErrors.flatMap((finding) => finding!.params["type"] as string | string[]))];
    return [{ pointer: at, at, schemaPath: error.schemaPath, rule: "type", params: { type: types } }];
  }
  if (hint.shape === "exactlyOne") {
    const complete = byBranch.filter((findings) => !findings.some((finding) => finding.rule === "required" && finding.at === at));
    if (complete.length === 1) return complete[0]!;
  }
  return summary(hint, error);
}
