import type { WebMcpTool } from "@browser-service/types";
import { explainAmbiguity } from "./ambiguity.js";
import { compileCriteria, type ToolCriteria } from "./criteria.js";
import { AmbiguousToolError, ToolNotFoundError } from "./selection-errors.js";

/**
 * Every tool of a snapshot that matches all the criteria given, in snapshot order.
 * Throws `UsageError` (`invalid_criteria`) for an unknown criterion or a value of the
 * wrong type.
 */
export function findTools(tools: readonly WebMcpTool[], criteria: ToolCriteria): WebMcpTool[] {
  return tools.filter(compileCriteria(criteria));
}

/**
 * The one tool of a snapshot that matches the criteria. Throws `ToolNotFoundError`
 * (`no_matching_tool`) when none does and `AmbiguousToolError` (`ambiguous_tool`),
 * listing every candidate and the criteria that would settle it, when several do: it
 * never guesses between registrations in different tabs or frames.
 */
export function selectTool(tools: readonly WebMcpTool[], criteria: ToolCriteria): WebMcpTool {
  const matches = findTools(tools, criteria);
  if (matches.length === 1) return matches[0] as WebMcpTool;
  if (matches.length === 0) throw ToolNotFoundError.forCriteria(criteria, [...tools]);
  throw new AmbiguousToolError(criteria, explainAmbiguity(matches, criteria));
}
