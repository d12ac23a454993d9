import type { Finding } from "./finding.js";
import type { Hint } from "./hints.js";

/** Whether a JSON pointer (or schema path) is `base` or below it. */
const isWithin = (pointer: string, base: string): boolean =>
  pointer.length === base.length
    ? pointer === base
    : pointer.length > base.length && pointer.charCodeAt(base.length) === 47 && pointer.lastIndexOf(base, 0) === 0;

/** The groups of schema paths of a hint's parts: one per alternative, or `then` and `else`. */
const groupsOf = (hint: Hint): readonly (readonly string[])[] =>
  hint.kind === "if" ? [hint.then, hint.else] : hint.kind === "not" ? [] : hint.branches.map((branch) => branch.paths);

// Schema paths are long, and both they and the hints come from the generated code, so
// which part of a hint a schema path falls under is worked out once and remembered.
const partsByHint = new WeakMap<Hint, Map<string, number>>();

/** The index of the part of a hint (alternative, or 0 for `then` and 1 for `else`) that a schema path falls under, or -1. */
function partOf(hint: Hint, schemaPath: string): number {
  let parts = partsByHint.get(hint);
  if (!parts) partsByHint.set(hint, (parts = new Map()));
  let part = parts.get(schemaPath);
  if (part === undefined) {
    part = groupsOf(hint).findIndex((paths) => paths.some((path) => isWithin(schemaPath, path)));
    parts.set(schemaPath, part);
  }
  return part;
}

/**
 * Removes the findings that a compound keyword's parts produced, and returns them by part
 * (alternative, or `then` and `else`): Ajv reports them just before the keyword's own
 * error, about the same value or values inside it, from the parts' schema paths. With
 * `only`, the block ends at a finding of another part.
 */
export function takeBlock(findings: Finding[], at: string, hint: Hint, only?: number): Finding[][] {
  const parts: Finding[][] = groupsOf(hint).map(() => []);
  let start = findings.length;
  while (start > 0) {
    const finding = findings[start - 1]!;
    const part = partOf(hint, finding.schemaPath);
    if (part < 0 || (only !== undefined && part !== only) || !isWithin(finding.at, at)) break;
    parts[part]!.push(finding);
    start--;
  }
  findings.length = start;
  // Collected from the end.
  for (const part of parts) part.reverse();
  return parts;
}
