import { InternalError } from "../http/api-errors.js";
import { BodyTag } from "../http/entity-tags.js";
import { capText, type OmissionReason, PAGE_DATA_LIMITS } from "./page-data.js";
import type { SourceNumbers } from "./source-numbers.js";
import type { TabTitle } from "./tab-titles.js";
import type { Registration, TabRecord, ToolRegistry } from "./tool-registry.js";

/** A snapshot as `GET .../webmcp/tools` sends it. */
export interface ToolListBody {
  /**
   * The spec's `WebMcpToolList`, as UTF-8 JSON. Bytes, encoded once: the listings that
   * share a build all send this one buffer, where a string would be encoded again for
   * each response, all in the turn the build ends.
   */
  json: Buffer;
  /**
   * The `ETag`: a hash of `json` itself. Tab titles are read from the browser (no event
   * reports a title change), so only the body says for sure what changed; the tag of a
   * body built from the same registry version and titles is known without hashing again.
   */
  etag: string;
}

/** What one body is built from. */
export interface ToolListInput {
  registry: ToolRegistry;
  /** Tab titles by target id, as the browser reported them for this listing. */
  titles: Map<string, TabTitle>;
  /** The registry's version when the titles were asked for: a tab whose document committed since shows none. */
  titlesVersion: number;
  numbers: SourceNumbers;
  /** The body's tag when it is already known (the same input was built before): it is not hashed again. */
  etag: string | undefined;
}

/** How much of a body is written before other work gets a turn. */
const YIELD_EVERY_BYTES = 512 * 1024;

const HEAD = '{"tools":[';
// The ASCII around one listed tool's own pieces: {"tool_ref":"…",…,"source":{…,"frame":…}}
const PART_FRAME_BYTES = '{"tool_ref":"",,"source":{,"frame":}}'.length;

/** A piece of a body that several tools share (a tab's or a frame's source), with its size in UTF-8. */
interface SharedText {
  text: string;
  bytes: number;
}

interface Listed {
  registration: Registration;
  tab: SharedText;
  frame: SharedText;
  /** The part's size in the body, its leading comma included. */
  bytes: number;
}

const shared = (text: string): SharedText => ({ text, bytes: Buffer.byteLength(text) });

const trailer = (omitted: Map<OmissionReason, number>): string =>
  omitted.size === 0 ? "]}" : `],"omitted":${JSON.stringify([...omitted].map(([reason, count]) => ({ reason, count })))}}`;

/**
 * Builds the body of `GET .../webmcp/tools` (the spec's `WebMcpToolList`). What it lists
 * is decided first, in the turn the build starts, so the body shows the registry as it
 * was at that moment; then the body is written into one buffer of the size worked out
 * for it, in slices, so a large snapshot does not hold the event loop. Each tool's own
 * fields were serialized when the page registered it, so writing is copying. A
 * registration whose tool would take the body past the spec's cap is left out and
 * counted as `response_limit`.
 */
export async function buildToolList({ registry, titles, titlesVersion, numbers, etag }: ToolListInput): Promise<ToolListBody> {
  const omitted = registry.omissions();
  // Room for the largest trailer this body could end with, so the whole body keeps within the cap.
  const reserved = HEAD.length + Buffer.byteLength(trailer(new Map([...omitted, ["response_limit", Number.MAX_SAFE_INTEGER]])));
  const budget = PAGE_DATA_LIMITS.responseBytes - reserved;
  const tabSources = new Map<TabRecord, SharedText>();
  const frameSources = new Map<string, SharedText>();
  const topLevel = shared("null");
  const listed: Listed[] = [];
  let size = 0;
  let overResponse = 0;
  for (const registration of registry.registrations()) {
    const tab = registration.session.tab;
    // The browser could not say which window the tab is in.
    if (tab.windowId === undefined) continue;
    let tabSource = tabSources.get(tab);
    if (tabSource === undefined) {
      // A title read from another document of the tab is not this one's: one of another URL,
      // or one asked for before this document committed (while a navigation the browser
      // started is pending, Chromium reports its new URL with the old page's title).
      const read = titles.get(tab.targetId);
      const own = read !== undefined && read.url === tab.url && tab.documentSince <= titlesVersion;
      const title = capText(own ? read.title : "", PAGE_DATA_LIMITS.titleChars);
      tabSource = shared(`"window_id":${tab.windowId},"tab_id":${tab.tabNumber},"page_url":${JSON.stringify(tab.url)},"page_title":${JSON.stringify(title)}`);
      tabSources.set(tab, tabSource);
    }
    let frame = topLevel;
    if (!registry.isTopLevel(registration)) {
      const key = `${registration.session.sessionId}\n${registration.frameId}`;
      frame = frameSources.get(key) ?? shared(`{"frame_id":${numbers.frame(registration.frameId)},"url":${JSON.stringify(registry.frameUrl(registration))}}`);
      frameSources.set(key, frame);
    }
    const bytes = (listed.length === 0 ? 0 : 1) + PART_FRAME_BYTES + registration.ref.length + registration.tool.jsonBytes + tabSource.bytes + frame.bytes;
    if (size + bytes > budget) {
      overResponse++;
      continue;
    }
    size += bytes;
    listed.push({ registration, tab: tabSource, frame, bytes });
  }
  if (overResponse > 0) omitted.set("response_limit", overResponse);
  const end = trailer(omitted);
  const total = HEAD.length + size + Buffer.byteLength(end);

  const json = Buffer.allocUnsafe(total);
  const hash = etag === undefined ? new BodyTag().update(HEAD) : undefined;
  let offset = json.write(HEAD, 0, "latin1");
  let yieldAt = offset + YIELD_EVERY_BYTES;
  for (let i = 0; i < listed.length; i++) {
    if (offset > yieldAt) {
      yieldAt = offset + YIELD_EVERY_BYTES;
      await new Promise((resolve) => setImmediate(resolve));
    }
    const { registration, tab, frame, bytes } = listed[i] as Listed;
    // A ref is ASCII that JSON needs no escape for (wmt_ and base64url).
    const part = `${i === 0 ? "" : ","}{"tool_ref":"${registration.ref}",${registration.tool.json},"source":{${tab.text},"frame":${frame.text}}}`;
    // Written in a buffer of the measured size: a part measured wrong would cut or leave a gap in the body.
    if (json.write(part, offset) !== bytes) throw new InternalError("A listed tool's size differs from its measure.");
    offset += bytes;
    hash?.update(part);
  }
  offset += json.write(end, offset);
  hash?.update(end);
  if (offset !== total) throw new InternalError("The tool list's size differs from its measure.");
  return { json, etag: etag ?? (hash as BodyTag).tag };
}
