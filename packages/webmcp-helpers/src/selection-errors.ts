import type { WebMcpTool } from "@browser-service/types";
import type { Ambiguity, AmbiguousCandidate, SourceField } from "./ambiguity.js";
import { formatCriteria, type ToolCriteria } from "./criteria.js";
import { WebMcpHelpersError } from "./errors.js";
import { describeSource, summarizeSource, type ToolSourceSummary } from "./tool-source.js";
import { cleanPageText } from "./untrusted-text.js";

// Messages name tools and list candidates; past this many, the rest is on the error.
const listedInMessage = 20;

const emptySnapshot =
  "The snapshot has no WebMCP tools: the page may lack WebMCP support, may not have registered its tools yet, or may use an outdated WebMCP API. Discover again once the page has loaded.";

const listed = <T>(items: T[], line: (item: T) => string) =>
  items
    .slice(0, listedInMessage)
    .map((item) => `\n  - ${line(item)}`)
    .join("") + (items.length > listedInMessage ? `\n  … and ${items.length - listedInMessage} more (see the error's fields)` : "");

// Criteria can quote page text (a name from an ambiguity); clean it like any page text.
const shown = (criteria: ToolCriteria) => cleanPageText(formatCriteria(criteria), { maxLength: 600 });

/**
 * No tool in the snapshot matches (`no_matching_tool`), or a `tool_ref` given to
 * `invokeTool` is not in a fresh snapshot (`tool_ref_not_listed`: its registration is
 * gone). Nothing was invoked.
 */
export class ToolNotFoundError extends WebMcpHelpersError {
  override readonly name: string = "ToolNotFoundError";
  /** The criteria that matched nothing (`{}` for a `tool_ref` lookup). */
  declare readonly criteria: ToolCriteria;
  /** How many tools the snapshot had; 0 means the page offers none (yet). */
  declare readonly snapshotSize: number;
  /** Tools with the requested `name` that failed another criterion, to show what is there. */
  declare readonly sameName: ToolSourceSummary[];

  /** @param code - `no_matching_tool` or `tool_ref_not_listed`. */
  constructor(code: "no_matching_tool" | "tool_ref_not_listed", message: string, criteria: ToolCriteria, tools: WebMcpTool[]) {
    const sameName = criteria.name === undefined ? [] : tools.filter((tool) => tool.name === criteria.name);
    const names = [...new Set(tools.map((tool) => tool.name))];
    const hint =
      tools.length === 0
        ? ` ${emptySnapshot}`
        : sameName.length
          ? `\nTools named ${JSON.stringify(cleanPageText(criteria.name ?? "", { maxLength: 80 }))} are registered at:${listed(sameName, describeSource)}`
          : `\nThe snapshot's tool names:${listed(names, (name) => JSON.stringify(cleanPageText(name, { maxLength: 80 })))}`;
    super(code, `${message}${hint}`);
    this.criteria = criteria;
    this.snapshotSize = tools.length;
    this.sameName = sameName.map(summarizeSource);
  }

  /** The error for criteria that matched none of `tools`. */
  static forCriteria(criteria: ToolCriteria, tools: WebMcpTool[]): ToolNotFoundError {
    return new ToolNotFoundError("no_matching_tool", `No tool matches ${shown(criteria)} among the ${tools.length} tools of the snapshot.`, criteria, tools);
  }

  /** The error for a `tool_ref` that a fresh snapshot does not list. */
  static forToolRef(toolRef: string, tools: WebMcpTool[]): ToolNotFoundError {
    return new ToolNotFoundError(
      "tool_ref_not_listed",
      `The tool_ref ${JSON.stringify(cleanPageText(toolRef, { maxLength: 120 }))} is not in a fresh snapshot: its registration is gone (its document navigated or closed, or it was unregistered). Nothing was invoked; discover and select again.`,
      {},
      tools,
    );
  }
}

function candidateLine(candidate: AmbiguousCandidate, differing: SourceField[]): string {
  const fields = (differing.length ? differing : (["windowId", "tabId", "frame"] as SourceField[])).map((field) => {
    const value =
      field === "frame"
        ? candidate.frame === "top"
          ? "top"
          : `${candidate.frame.frameId} (${candidate.frame.url})`
        : field === "title"
          ? JSON.stringify(candidate.title)
          : String(candidate[field]);
    return `${field} ${cleanPageText(value, { maxLength: 200 })}`;
  });
  const select = candidate.criteria ? ` → ${shown(candidate.criteria)}` : ` → toolRef ${JSON.stringify(cleanPageText(candidate.toolRef, { maxLength: 120 }))}`;
  return `${fields.join(", ")}${select}`;
}

/**
 * `ambiguous_tool`: more than one tool matches the criteria. Lists every candidate with
 * the source fields that differ, and names the criteria that would select exactly one
 * (for identical URLs, `windowId` + `tabId`).
 */
export class AmbiguousToolError extends WebMcpHelpersError {
  override readonly name: string = "AmbiguousToolError";
  /** The criteria that matched more than one tool. */
  declare readonly criteria: ToolCriteria;
  /** Every matching tool, with criteria that select it alone when there are some. */
  declare readonly candidates: AmbiguousCandidate[];
  /** Source fields whose values differ among the candidates. */
  declare readonly differingFields: SourceField[];
  /** Criteria to add to settle it; empty when no source field tells the candidates apart. */
  declare readonly settledBy: (keyof ToolCriteria)[];

  /** @param ambiguity - from `explainAmbiguity`. */
  constructor(criteria: ToolCriteria, ambiguity: Ambiguity) {
    const { candidates, differingFields, settledBy } = ambiguity;
    const advice = settledBy.length
      ? `Add ${settledBy.join(" + ")} to choose one:`
      : "No source field tells them apart (the same document registered the name more than once); pass one of their tool_refs as toolRef:";
    super("ambiguous_tool", `${candidates.length} tools match ${shown(criteria)}. ${advice}${listed(candidates, (c) => candidateLine(c, differingFields))}`);
    this.criteria = criteria;
    this.candidates = candidates;
    this.differingFields = differingFields;
    this.settledBy = settledBy;
  }
}
