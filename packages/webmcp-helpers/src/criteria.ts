import type { WebMcpTool } from "@browser-service/types";
import { UsageError } from "./errors.js";
import { asOrigin, normalizeUrl, originOf, wildcardMatch } from "./url-match.js";

/**
 * What a tool must match to be chosen; every criterion given must hold. Only `tool_ref`
 * and `source` come from the browser; `name` and `title` are whatever the page says.
 */
export interface ToolCriteria {
  /** Exact tool name. Names are not unique across tabs and frames. */
  name?: string;
  /**
   * The tab's top-level URL (`source.page_url`). A string without `*` is exact after
   * normalization (`http://127.0.0.1:4000` equals `http://127.0.0.1:4000/`; a fragment is
   * dropped, as the service drops it); with `*` it is a wildcard pattern matched against
   * the whole URL, `*` standing for any run of characters (`http://localhost:*\/cart*`).
   * A `RegExp` is tested against the URL.
   */
  pageUrl?: string | RegExp;
  /**
   * Origin of the document that registered the tool (`http://localhost:9000`): the
   * frame's origin when the tool is registered in a frame, which may differ from the
   * page's, else the page's.
   */
  origin?: string;
  /** The tab (`source.tab_id`), valid for the current browser process. */
  tabId?: number;
  /** The window (`source.window_id`), valid for the current browser process. */
  windowId?: number;
  /**
   * `"top"`: registered by the top-level document. A number: the frame with that
   * `frame_id`. A string: a frame whose URL equals it (normalized, or a `*` pattern as
   * for `pageUrl`) or, when the string is a bare origin without a final `/`
   * (`http://localhost:9000`), any frame of that origin.
   */
  frame?: "top" | number | string;
  /** The tab's title (`source.page_title`, set by the page): exact, or a `RegExp`. */
  title?: string | RegExp;
}

const keys = ["name", "pageUrl", "origin", "windowId", "tabId", "frame", "title"] as const;

/** A test of one tool against criteria, with their strings normalized once. */
export type ToolMatcher = (tool: WebMcpTool) => boolean;

/** The origin of the document that registered the tool: its frame's, else its page's. */
export function registrationOrigin(tool: WebMcpTool): string {
  return originOf(tool.source.frame ? tool.source.frame.url : tool.source.page_url);
}

function invalid(message: string): never {
  throw new UsageError("invalid_criteria", message);
}

const isId = (value: unknown): value is number => typeof value === "number" && Number.isInteger(value) && value >= 0;
const isTextOrRegExp = (value: unknown): value is string | RegExp => typeof value === "string" || value instanceof RegExp;

/**
 * Throws `UsageError` (`invalid_criteria`) for criteria that cannot mean what the caller
 * meant: not an object, a key that is not a criterion (`tab_id` for `tabId`), or a
 * value of the wrong type.
 */
export function checkCriteria(criteria: unknown): asserts criteria is ToolCriteria {
  if (typeof criteria !== "object" || criteria === null || Array.isArray(criteria))
    invalid(`Criteria must be an object such as { name: "search" }; got ${typeof criteria}.`);
  for (const [key, value] of Object.entries(criteria)) {
    if (value === undefined) continue;
    if (!(keys as readonly string[]).includes(key)) invalid(`Unknown criterion "${key}"; the criteria are ${keys.join(", ")}.`);
    const ok =
      key === "name"
        ? typeof value === "string"
        : key === "pageUrl" || key === "title"
          ? isTextOrRegExp(value)
          : key === "origin"
            ? typeof value === "string" && asOrigin(value) !== undefined
            : key === "tabId" || key === "windowId"
              ? isId(value)
              : value === "top" || isId(value) || typeof value === "string";
    if (!ok) {
      const expected =
        key === "name"
          ? "a string"
          : key === "pageUrl" || key === "title"
            ? "a string or a RegExp"
            : key === "origin"
              ? `an origin such as "http://localhost:9000" (use pageUrl or frame for a full URL)`
              : key === "frame"
                ? `"top", a frame_id or a frame URL or origin`
                : "a non-negative integer";
      invalid(`Criterion ${key} must be ${expected}; got ${JSON.stringify(value) ?? String(value)}.`);
    }
  }
}

// RegExp criteria are the caller's own; only the statefulness of /g and /y is removed,
// so that one test does not change the next.
const stateless = (pattern: RegExp) => (pattern.global || pattern.sticky ? new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, "")) : pattern);

/** A string test for a URL criterion: exact after normalization, or a `*` pattern. */
function urlTest(criterion: string): (url: string) => boolean {
  if (criterion.includes("*")) return (url) => wildcardMatch(criterion, url);
  const exact = normalizeUrl(criterion);
  return (url) => url === exact;
}

function textTest(criterion: string | RegExp, url: boolean): (text: string) => boolean {
  if (typeof criterion === "string") return url ? urlTest(criterion) : (text) => text === criterion;
  const pattern = stateless(criterion);
  return (text) => pattern.test(text);
}

function frameTest(criterion: "top" | number | string): ToolMatcher {
  if (criterion === "top") return (tool) => tool.source.frame === null;
  if (typeof criterion === "number") return (tool) => tool.source.frame?.frame_id === criterion;
  const origin = asOrigin(criterion);
  if (origin !== undefined && !criterion.endsWith("/")) return (tool) => tool.source.frame !== null && originOf(tool.source.frame.url) === origin;
  const test = urlTest(criterion);
  return (tool) => tool.source.frame !== null && test(tool.source.frame.url);
}

/**
 * Checks criteria ({@link checkCriteria}) and builds one test for all of them, so that
 * URLs and origins are normalized once per selection rather than once per tool.
 */
export function compileCriteria(criteria: ToolCriteria): ToolMatcher {
  checkCriteria(criteria);
  const tests: ToolMatcher[] = [];
  const { name, pageUrl, origin, tabId, windowId, frame, title } = criteria;
  if (name !== undefined) tests.push((tool) => tool.name === name);
  if (tabId !== undefined) tests.push((tool) => tool.source.tab_id === tabId);
  if (windowId !== undefined) tests.push((tool) => tool.source.window_id === windowId);
  if (pageUrl !== undefined) {
    const test = textTest(pageUrl, true);
    tests.push((tool) => test(tool.source.page_url));
  }
  if (origin !== undefined) {
    const wanted = asOrigin(origin);
    tests.push((tool) => registrationOrigin(tool) === wanted);
  }
  if (frame !== undefined) tests.push(frameTest(frame));
  if (title !== undefined) {
    const test = textTest(title, false);
    tests.push((tool) => test(tool.source.page_title));
  }
  return (tool) => tests.every((test) => test(tool));
}

/** Criteria as code a caller could paste: `{ name: "search", pageUrl: /shop/ }`. */
export function formatCriteria(criteria: ToolCriteria): string {
  const parts = keys.flatMap((key) => {
    const value = criteria[key];
    if (value === undefined) return [];
    return [`${key}: ${value instanceof RegExp ? String(value) : JSON.stringify(value)}`];
  });
  return parts.length ? `{ ${parts.join(", ")} }` : "{}";
}
