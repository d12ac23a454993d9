import type { WebMcpTool } from "@browser-service/types";
import { compileCriteria, registrationOrigin, type ToolCriteria } from "./criteria.js";
import { summarizeSource, type ToolSourceSummary } from "./tool-source.js";

/** A source field that can tell registrations apart. */
export type SourceField = "pageUrl" | "origin" | "frame" | "title" | "windowId" | "tabId";

/** One of several tools that matched the same criteria. */
export interface AmbiguousCandidate extends ToolSourceSummary {
  /**
   * Criteria that select this tool alone: the caller's plus the settling fields with
   * this tool's values. `undefined` when no source field tells the candidates apart.
   */
  criteria: ToolCriteria | undefined;
}

/** Why several tools matched, and what would settle it. */
export interface Ambiguity {
  /** Every matching tool, in snapshot order. */
  candidates: AmbiguousCandidate[];
  /** Source fields whose values are not the same for every candidate. */
  differingFields: SourceField[];
  /**
   * The criteria to add, with each candidate's values, to select exactly one: the first
   * of `pageUrl`; `origin`; `frame`; `windowId` + `tabId` (the rule for identical URLs);
   * `windowId` + `tabId` + `frame` that works. Empty when none does. `title` is never
   * proposed: the page sets it and can change it.
   */
  settledBy: (keyof ToolCriteria)[];
}

interface SettleOption {
  keys: (keyof ToolCriteria)[];
  pick(tool: WebMcpTool): ToolCriteria | undefined;
}

const frameUrl = (tool: WebMcpTool) => (tool.source.frame ? tool.source.frame.url : "top");
const tabOf = (tool: WebMcpTool) => ({ windowId: tool.source.window_id, tabId: tool.source.tab_id });

const settleOptions: SettleOption[] = [
  { keys: ["pageUrl"], pick: (tool) => ({ pageUrl: tool.source.page_url }) },
  {
    keys: ["origin"],
    // Opaque origins ("null": about:srcdoc, data:) cannot be asked for.
    pick: (tool) => (registrationOrigin(tool) === "null" ? undefined : { origin: registrationOrigin(tool) }),
  },
  { keys: ["frame"], pick: (tool) => ({ frame: frameUrl(tool) }) },
  { keys: ["windowId", "tabId"], pick: tabOf },
  { keys: ["windowId", "tabId", "frame"], pick: (tool) => ({ ...tabOf(tool), frame: frameUrl(tool) }) },
  { keys: ["windowId", "tabId", "frame"], pick: (tool) => ({ ...tabOf(tool), frame: tool.source.frame?.frame_id ?? "top" }) },
];

const fieldValue: Record<SourceField, (s: ToolSourceSummary) => unknown> = {
  pageUrl: (s) => s.pageUrl,
  origin: (s) => s.origin,
  frame: (s) => (s.frame === "top" ? "top" : s.frame.frameId),
  title: (s) => s.title,
  windowId: (s) => s.windowId,
  tabId: (s) => s.tabId,
};

/**
 * Criteria per candidate for the first option under which each candidate's criteria
 * match that candidate and no other, checked by running them, not assumed (a URL with a
 * `*` in it, for one, is read as a pattern).
 */
function settle(tools: WebMcpTool[], criteria: ToolCriteria): { keys: (keyof ToolCriteria)[]; picks: ToolCriteria[] } | undefined {
  for (const option of settleOptions) {
    const picks = tools.map((tool) => option.pick(tool));
    if (picks.some((pick) => pick === undefined)) continue;
    const each = picks.map((pick) => ({ ...criteria, ...pick }));
    if (new Set(picks.map((pick) => JSON.stringify(pick))).size !== tools.length) continue;
    const alone = each.every((candidate, index) => {
      const matches = compileCriteria(candidate);
      return tools.every((tool, other) => matches(tool) === (other === index));
    });
    if (alone) return { keys: option.keys, picks: each };
  }
  return undefined;
}

/** What tells several matching tools apart, for `AmbiguousToolError`. */
export function explainAmbiguity(tools: WebMcpTool[], criteria: ToolCriteria): Ambiguity {
  const summaries = tools.map(summarizeSource);
  const settled = settle(tools, criteria);
  const differingFields = (Object.keys(fieldValue) as SourceField[]).filter((field) => new Set(summaries.map(fieldValue[field])).size > 1);
  return {
    candidates: summaries.map((summary, index) => ({ ...summary, criteria: settled?.picks[index] })),
    differingFields,
    settledBy: settled?.keys ?? [],
  };
}
