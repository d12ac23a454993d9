import { limits, type WebMcpInvocationResult, type WebMcpToolAnnotations } from "@browser-service/types";
import type { ToolRespondedEvent } from "./cdp-protocol.js";

const { WebMcpTool, WebMcpToolFrame, WebMcpToolList, WebMcpToolSource } = limits.schemas;

/**
 * The service's bounds on page data (names, descriptions, schemas, outputs, error texts).
 * Pages choose these values, so each is capped; the server README lists them. Those a
 * listing promises are the spec's (`WebMcpTool`'s `maxLength` and `x-max-bytes`,
 * `WebMcpToolList`'s `maxItems`, `x-max-items-per-document`, `x-max-items-per-tab`,
 * `x-max-definition-bytes` and `x-max-bytes`); the two of an invocation's result
 * (`outputBytes`, `errorTextChars`) are the server's own, which the spec leaves open.
 */
export const PAGE_DATA_LIMITS = {
  /** Longer names are not listed: a name must be passed back unchanged, so it cannot be cut. */
  toolNameChars: WebMcpTool.name.maxLength,
  /** Longer descriptions are cut to this many characters. */
  descriptionChars: WebMcpTool.description.maxLength,
  /** Tools whose serialized `input_schema` is larger are not listed. */
  inputSchemaBytes: WebMcpTool.input_schema.maxBytes,
  /** Longer page and frame URLs are cut to this many characters (one cut for both, within each one's cap). */
  urlChars: Math.min(WebMcpToolSource.page_url.maxLength, WebMcpToolFrame.url.maxLength),
  /** Longer page titles are cut to this many characters. */
  titleChars: WebMcpToolSource.page_title.maxLength,
  /** Registrations one document (one frame's current page) keeps at most; later ones are omitted. */
  registrationsPerDocument: WebMcpToolList.tools.maxItemsPerDocument,
  /** Registrations one tab (all its frames) keeps at most, so that no tab starves the others. */
  registrationsPerTab: WebMcpToolList.tools.maxItemsPerTab,
  /** Registrations one browser keeps at most; later ones are omitted. */
  registrationsPerBrowser: WebMcpToolList.tools.maxItems,
  /** Bytes of every tool definition one browser keeps, each serialized as one object; later ones are omitted. */
  definitionBytesPerBrowser: WebMcpToolList.tools.maxDefinitionBytes,
  /** The largest `GET .../webmcp/tools` body; registrations past it are omitted from that answer. */
  responseBytes: WebMcpToolList.maxBytes,
  /** A larger serialized `output` is dropped and `error_text` says so. */
  outputBytes: 4 * 1024 * 1024,
  /** Longer error texts are cut to this many characters. */
  errorTextChars: 8 * 1024,
} as const;

/** A registered tool as the service keeps it: checked, bounded page data. */
export interface ToolDefinition {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: WebMcpToolAnnotations | undefined;
  /** Set for a declarative (form) tool: the form's DOM node. */
  backendNodeId: number | undefined;
  /**
   * The tool's own fields as they appear in the API (`"name":…,"description":…,
   * "input_schema":…` and `annotations`), serialized once when the page registers the
   * tool, so that listing a large snapshot is concatenation rather than serialization.
   */
  json: string;
  /** `json`'s size in UTF-8, measured once. */
  jsonBytes: number;
}

/** What a tool counts against the browser's definition bytes: its fields serialized as one object, `{` and `}` included. */
export const definitionBytes = (tool: ToolDefinition): number => tool.jsonBytes + 2;

/** Why a registration is not in a snapshot; the API's `omitted[].reason`. */
export type OmissionReason = "invalid" | "document_limit" | "tab_limit" | "browser_limit" | "response_limit" | "message_too_large";

/** Cuts a page-provided URL or title to `chars` characters, marking the cut with `…`. */
export function capText(text: string, chars: number): string {
  return truncate(text, chars);
}

/** Whether a `WebMCP.Tool` can be listed, and as what. */
export type ToolDefinitionCheck = { ok: true; tool: ToolDefinition } | { ok: false; reason: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// Never inside a surrogate pair: half of one is not a character, and strict JSON decoders refuse it.
function truncate(text: string, chars: number): string {
  if (text.length <= chars) return text;
  let end = chars - 1;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}…`;
}

// `debugging` has no place in the API's closed annotations object, so it is left out.
const ANNOTATION_NAMES = [
  ["readOnly", "read_only"],
  ["untrustedContent", "untrusted_content"],
  ["consequential", "consequential"],
  ["autosubmit", "autosubmit"],
] as const;

function annotationsOf(raw: unknown, declarative: boolean): WebMcpToolAnnotations | undefined {
  const annotations: WebMcpToolAnnotations = {};
  if (isPlainObject(raw)) {
    for (const [from, to] of ANNOTATION_NAMES) {
      const value = raw[from];
      if (typeof value === "boolean") annotations[to] = value;
    }
  }
  // Chromium marks only forms declared with `toolautosubmit`; saying so for the others
  // tells the caller that an invocation will end `awaiting_submission`.
  if (declarative && annotations.autosubmit === undefined) annotations.autosubmit = false;
  return Object.keys(annotations).length === 0 ? undefined : annotations;
}

/** Checks and bounds one `WebMCP.Tool` as the browser reported it. */
export function toToolDefinition(raw: unknown): ToolDefinitionCheck {
  if (!isPlainObject(raw) || typeof raw.name !== "string" || raw.name.length === 0) return { ok: false, reason: "it has no name" };
  if (raw.name.length > PAGE_DATA_LIMITS.toolNameChars) return { ok: false, reason: `its name is longer than ${PAGE_DATA_LIMITS.toolNameChars} characters` };
  const inputSchema = isPlainObject(raw.inputSchema) ? raw.inputSchema : {};
  const schemaBytes = Buffer.byteLength(JSON.stringify(inputSchema));
  if (schemaBytes > PAGE_DATA_LIMITS.inputSchemaBytes)
    return { ok: false, reason: `its input schema is ${schemaBytes} bytes, over ${PAGE_DATA_LIMITS.inputSchemaBytes}` };
  const backendNodeId = typeof raw.backendNodeId === "number" && Number.isInteger(raw.backendNodeId) ? raw.backendNodeId : undefined;
  const name = raw.name;
  const description = truncate(typeof raw.description === "string" ? raw.description : "", PAGE_DATA_LIMITS.descriptionChars);
  const annotations = annotationsOf(raw.annotations, backendNodeId !== undefined);
  const json = `"name":${JSON.stringify(name)},"description":${JSON.stringify(description)},"input_schema":${JSON.stringify(inputSchema)}${annotations ? `,"annotations":${JSON.stringify(annotations)}` : ""}`;
  return { ok: true, tool: { name, description, inputSchema, annotations, backendNodeId, json, jsonBytes: Buffer.byteLength(json) } };
}

/** The spec's `WebMcpInvocationResult` without its `invocation_id`. */
export type InvocationOutcome = Omit<WebMcpInvocationResult, "invocation_id">;

/** Maps a `WebMCP.toolResponded` event to the API's result, bounding the page's output and error text. */
export function toInvocationOutcome(event: ToolRespondedEvent): InvocationOutcome {
  if (event.outputDroppedBytes !== undefined) {
    const why = `the browser's report of it (${event.outputDroppedBytes} bytes) is over the service's limit of ${PAGE_DATA_LIMITS.outputBytes} bytes for an output and was dropped as it arrived`;
    return event.status === "Completed"
      ? { status: "completed", error_text: `The tool completed, but ${why}.` }
      : { status: "error", error_text: `The tool failed, and ${why}.` };
  }
  if (event.status === "Completed") {
    if (event.output === undefined) return { status: "completed" };
    const bytes = Buffer.byteLength(JSON.stringify(event.output) ?? "");
    if (bytes > PAGE_DATA_LIMITS.outputBytes) {
      return {
        status: "completed",
        error_text: `The tool completed, but its output (${bytes} bytes serialized) is over the service's limit of ${PAGE_DATA_LIMITS.outputBytes} bytes and was dropped.`,
      };
    }
    return { status: "completed", output: event.output };
  }
  if (event.status === "Canceled") return { status: "canceled" };
  // Chromium leaves errorText empty when the tool threw; the exception then says why.
  const text =
    (typeof event.errorText === "string" && event.errorText !== "" ? event.errorText : undefined) ??
    (typeof event.exception?.description === "string" && event.exception.description !== "" ? event.exception.description : undefined) ??
    "The tool failed without an error message.";
  return { status: "error", error_text: truncate(text, PAGE_DATA_LIMITS.errorTextChars) };
}
