import { createHash } from "node:crypto";
import type { WebMcpTool } from "@browser-service/types";
import { registrationOrigin } from "@browser-service/webmcp-helpers";

/** Longest MCP tool name (the MCP spec's 1-128 characters of `A-Za-z0-9_-.`). */
export const maxToolNameLength = 128;

const notAllowed = /[^A-Za-z0-9_.-]/g;

/**
 * A page's tool name as an MCP tool name: every character outside `A-Za-z0-9_-.`
 * becomes `_`, an empty name becomes `tool`, and the result is cut to `maxLength`.
 */
export function sanitizeToolName(name: string, maxLength = maxToolNameLength): string {
  const clean = name.replace(notAllowed, "_").slice(0, maxLength);
  return clean === "" ? "tool".slice(0, maxLength) : clean;
}

/**
 * The identity of a registration, as a digest: window, tab, frame (or the top-level
 * document), the page URL and the frame's URL, the registering origin, and everything
 * the page declared (name, description, input schema, annotations). Two registrations
 * with one key are the same tool in the same document, as after a reload; anything else
 * (another URL, another description or schema, other hints) is another tool, which a
 * client that listed the first never saw. A digest, because the bridge keeps every key
 * it named for as long as it runs, and a schema can be 64 KB.
 */
export function registrationKey(tool: WebMcpTool): string {
  const { window_id, tab_id, page_url, frame } = tool.source;
  const identity = [
    window_id,
    tab_id,
    frame === null ? "top" : frame.frame_id,
    page_url,
    frame === null ? null : frame.url,
    registrationOrigin(tool),
    tool.name,
    tool.description,
    tool.input_schema,
    tool.annotations ?? null,
  ];
  return createHash("sha256").update(JSON.stringify(identity)).digest("base64url");
}

/** The suffix that says where a registration lives: `.t3` (tab 3), `.t3.f12` (frame 12 of tab 3). */
function sourceSuffix(tool: WebMcpTool): string {
  const { tab_id, frame } = tool.source;
  return frame === null ? `.t${tab_id}` : `.t${tab_id}.f${frame.frame_id}`;
}

/** A live `tool_ref`'s name, with what it was last seen as. */
interface Named {
  name: string;
  pageUrl: string;
  frameUrl: string | null;
}

const frameUrl = (tool: WebMcpTool) => (tool.source.frame === null ? null : tool.source.frame.url);

/**
 * Gives each tool of a snapshot its MCP name, so that a name, once given to a
 * registration, never names a different registration while this object lives:
 *
 * - a `tool_ref` of the previous snapshot keeps its name (the browser retires a ref when
 *   its registration ends, so one ref is one registration even when `history.pushState`
 *   changes its page URL);
 * - a registration with the key of one named before (see {@link registrationKey}: the
 *   same tool of the same document, as after a reload) gets that name back;
 * - any other registration gets a name never given before: the page's name (sanitized)
 *   when no other tool of the snapshot has it, otherwise the name plus where it lives
 *   (`search.t2`, `search.t1.f5`), and should even that have been given (a page can choose
 *   any name, and a tab can hold many documents one after the other) a counter
 *   (`search.t2.2`).
 *
 * So a client holding an older list can never reach another tab's, another origin's or
 * another document's tool under a name it knew: that name now names nothing, or the same
 * registration. Every name given is remembered (a digest and the name) until the object
 * is dropped, up to `maxNames`: past it, a registration that would need a new name gets
 * none (`undefined`), rather than a name given before or memory without bound, since a
 * page can register and drop tools under new names for as long as it likes.
 */
export class ToolNames {
  /** How many names this object gives at most. */
  readonly maxNames: number;
  /** Every registration key named, with its name; a key is never renamed. */
  readonly #byKey = new Map<string, string>();
  /** Every name given; none is given twice. */
  readonly #given = new Set<string>();
  /** The `tool_ref`s of the latest snapshot. */
  #byRef = new Map<string, Named>();

  /**
   * @param maxNames - how many names to give at most (default 100,000: about 20 MB remembered).
   * @param reserved - names never given to a page's tool (the bridge's own tools): a page tool of that name gets a qualified one.
   */
  constructor(maxNames = 100_000, reserved: readonly string[] = []) {
    this.maxNames = maxNames;
    this.#reserved = new Set(reserved);
  }

  readonly #reserved: ReadonlySet<string>;

  /** Whether `name` was ever given to a registration (it may name nothing live now). */
  given(name: string): boolean {
    return this.#given.has(name);
  }

  /** The MCP name of each tool, in snapshot order; `undefined` for one that needs a new name once `maxNames` are given. */
  assign(tools: readonly WebMcpTool[]): (string | undefined)[] {
    const names: (string | undefined)[] = new Array(tools.length);
    const keys: (string | undefined)[] = new Array(tools.length);
    const taken = new Set<string>();
    const next = new Map<string, Named>();
    const keep = (index: number, tool: WebMcpTool, name: string) => {
      names[index] = name;
      taken.add(name);
      next.set(tool.tool_ref, { name, pageUrl: tool.source.page_url, frameUrl: frameUrl(tool) });
    };

    tools.forEach((tool, index) => {
      const known = this.#byRef.get(tool.tool_ref);
      if (known === undefined || taken.has(known.name)) return;
      if (known.pageUrl !== tool.source.page_url || known.frameUrl !== frameUrl(tool)) {
        // The same registration at a new URL (pushState): a reload there is still this tool.
        const key = registrationKey(tool);
        if (!this.#byKey.has(key)) this.#byKey.set(key, known.name);
      }
      keep(index, tool, known.name);
    });

    tools.forEach((tool, index) => {
      if (names[index] !== undefined) return;
      const key = registrationKey(tool);
      keys[index] = key;
      const name = this.#byKey.get(key);
      if (name !== undefined && !taken.has(name)) keep(index, tool, name);
    });

    const counts = new Map<string, number>();
    for (const tool of tools) {
      const base = sanitizeToolName(tool.name);
      counts.set(base, (counts.get(base) ?? 0) + 1);
    }
    const free = (name: string) => !taken.has(name) && !this.#given.has(name) && !this.#reserved.has(name);
    tools.forEach((tool, index) => {
      if (names[index] !== undefined || this.#given.size >= this.maxNames) return;
      const base = sanitizeToolName(tool.name);
      let name = base;
      if (counts.get(base) !== 1 || !free(base)) {
        const suffix = sourceSuffix(tool);
        name = sanitizeToolName(tool.name, maxToolNameLength - suffix.length) + suffix;
        for (let n = 2; !free(name); n++) {
          const more = `${suffix}.${n}`;
          name = sanitizeToolName(tool.name, maxToolNameLength - more.length) + more;
        }
      }
      this.#given.add(name);
      const key = keys[index] as string;
      if (!this.#byKey.has(key)) this.#byKey.set(key, name);
      keep(index, tool, name);
    });

    this.#byRef = next;
    return names;
  }
}
