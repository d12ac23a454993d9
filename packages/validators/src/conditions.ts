import type { CompiledError } from "./compiled.js";
import type { Finding } from "./finding.js";
import type { Clause, Hint } from "./hints.js";

type Condition = Extract<Hint, { kind: "if" }>;
type Forbidden = Extract<Hint, { kind: "not" }>;

const describeClauses = (at: string, clauses: readonly Clause[]): string =>
  clauses.map((clause) => `${at}${clause.pointer} ${clause.condition ?? "is present"}`).join(" and ");

/** The findings of a `then` (or `else`), each with the condition that made it apply. */
export function conditionedFindings(block: readonly Finding[], hint: Condition, error: CompiledError): Finding[] {
  const condition =
    hint.when === null
      ? "as a condition of the schema requires"
      : `${error.params["failingKeyword"] === "else" ? "unless" : "when"} ${describeClauses(error.instancePath, hint.when)}`;
  return block.map((finding) => ({ ...finding, conditions: [...(finding.conditions ?? []), condition] }));
}

/**
 * A failed `not`: what it forbids of the value (`must not match the pattern ...`) when the
 * generator could say it, else "is not allowed", about the one property whose presence it
 * forbids when there is one.
 */
export function forbiddenFinding(hint: Forbidden, error: CompiledError): Finding {
  const base = { at: error.instancePath, schemaPath: error.schemaPath, rule: "not", params: error.params };
  if (hint.expected !== undefined) return { ...base, pointer: error.instancePath, expected: hint.expected };
  if (hint.clauses === null) return { ...base, pointer: error.instancePath, expected: "must not match the schema that forbids it" };
  const present = hint.clauses.filter((clause) => clause.condition === undefined);
  const subject = present.length === 1 ? present[0] : undefined;
  const others = hint.clauses.filter((clause) => clause !== subject);
  return {
    ...base,
    pointer: `${error.instancePath}${subject?.pointer ?? ""}`,
    expected: "is not allowed",
    conditions: others.length > 0 ? [`when ${describeClauses(error.instancePath, others)}`] : [],
  };
}
