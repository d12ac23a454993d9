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
 * Where a registration lives, as a key: window, tab, frame (or the top-level document),
 * the registering origin and the page's name. The browser keys a registration by frame
 * and name, so two live registrations never share a slot; a page that navigates and
 * registers the same name again on the same origin fills the same slot.
 */
export function slotKey(tool: WebMcpTool): string {
  const { window_id, tab_id, frame } = tool.source;
  return JSON.stringify([window_id, tab_id, frame === null ? "top" : frame.frame_id, registrationOrigin(tool), tool.name]);
}

/** The suffix that says where a registration lives: `.t3` (tab 3), `.t3.f12` (frame 12 of tab 3). */
function sourceSuffix(tool: WebMcpTool): string {
  const { tab_id, frame } = tool.source;
  return frame === null ? `.t${tab_id}` : `.t${tab_id}.f${frame.frame_id}`;
}

/**
 * Gives each tool of a snapshot its MCP name, and remembers the names between
 * snapshots so that they stay put while their registrations live:
 *
 * - a slot (see {@link slotKey}) seen in the previous snapshot keeps its name;
 * - a new slot gets the page's name (sanitized) when no other tool of the snapshot has
 *   that name and no kept name is it;
 * - otherwise the page's name plus where it lives (`search.t2`, `search.t1.f5`), and,
 *   should even that be taken (a page can choose any name), a counter (`search.t2.2`).
 *
 * So a bare name, once given, is not taken away when a second tab registers the same
 * name: the newcomer gets the suffix. A slot that disappears frees its name.
 */
export class ToolNames {
  #bySlot = new Map<string, string>();

  /** The MCP name of each tool, in snapshot order. */
  assign(tools: readonly WebMcpTool[]): string[] {
    const slots = tools.map(slotKey);
    const kept = new Map<string, string>();
    const taken = new Set<string>();
    slots.forEach((slot) => {
      const name = this.#bySlot.get(slot);
      if (name !== undefined && !kept.has(slot)) {
        kept.set(slot, name);
        taken.add(name);
      }
    });
    const counts = new Map<string, number>();
    for (const tool of tools) {
      const base = sanitizeToolName(tool.name);
      counts.set(base, (counts.get(base) ?? 0) + 1);
    }
    const next = new Map<string, string>();
    const names = tools.map((tool, index) => {
      const slot = slots[index] as string;
      const keptName = kept.get(slot);
      if (keptName !== undefined && !next.has(slot)) {
        next.set(slot, keptName);
        return keptName;
      }
      const base = sanitizeToolName(tool.name);
      let name = base;
      if (counts.get(base) !== 1 || taken.has(base)) {
        const suffix = sourceSuffix(tool);
        name = sanitizeToolName(tool.name, maxToolNameLength - suffix.length) + suffix;
        for (let n = 2; taken.has(name); n++) {
          const more = `${suffix}.${n}`;
          name = sanitizeToolName(tool.name, maxToolNameLength - more.length) + more;
        }
      }
      taken.add(name);
      // A second tool in the same slot (the browser should never list one) is named, but not remembered.
      if (!next.has(slot)) next.set(slot, name);
      return name;
    });
    this.#bySlot = next;
    return names;
  }
}
