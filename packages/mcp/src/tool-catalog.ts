import { APIError, type BrowserServiceClient } from "@browser-service/client";
import type { WebMcpTool } from "@browser-service/types";
import { type McpTool, toMcpTool } from "./mcp-tool.js";
import { ToolNames } from "./tool-names.js";

/** One MCP tool and the registration behind it, as of the latest snapshot. */
export interface CatalogEntry {
  /** What `tools/list` shows. */
  mcp: McpTool;
  /** The page's tool, with the `tool_ref` to invoke. */
  tool: WebMcpTool;
}

/** A browser's tools as MCP tools, as of one snapshot. */
export interface CatalogState {
  /** The snapshot's `ETag`, when the service sent one. */
  etag: string | undefined;
  /** Every tool: the bridge's own first, then the pages', in snapshot order. */
  tools: McpTool[];
  /** The pages' tools, by MCP name. */
  entries: ReadonlyMap<string, CatalogEntry>;
  /** `tools` as UTF-8 JSON, made once per snapshot so that a transport can send a listing without serializing it again. */
  toolsJson: Buffer;
}

/** Options of {@link ToolCatalog}. */
export interface ToolCatalogOptions {
  /** Project of the browser, as the client takes it. */
  projectId?: string | null;
  /** Where failures of background polling are reported, and tools left unlisted once names run out. */
  log?: (message: string) => void;
  /** How many tool names the catalog gives at most ({@link ToolNames}); default 100,000. */
  maxNames?: number;
  /** The bridge's own tools: listed first, and their names never given to a page's tool. Default none. */
  ownTools?: readonly McpTool[];
}

/**
 * The browser's WebMCP tools as MCP tools, kept current by conditional reads of the
 * snapshot (`If-None-Match`: while nothing changes, each read is a `304` without a body).
 * Listeners hear of every change of what `tools/list` shows; a new `tool_ref` behind an
 * unchanged tool is taken in silently, since no client needs to list again for it.
 */
export class ToolCatalog {
  readonly #client: BrowserServiceClient;
  readonly #browser: string;
  readonly #options: ToolCatalogOptions;
  readonly #names: ToolNames;
  readonly #listeners = new Set<() => void>();
  readonly #ownTools: readonly McpTool[];
  #state: CatalogState;
  #shown: string;
  #started = 0;
  #applied = 0;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;
  #namesRanOut = false;

  /** @param browser - the browser's id. */
  constructor(client: BrowserServiceClient, browser: string, options: ToolCatalogOptions = {}) {
    this.#client = client;
    this.#browser = browser;
    this.#options = options;
    this.#ownTools = options.ownTools ?? [];
    this.#names = new ToolNames(
      options.maxNames,
      this.#ownTools.map((tool) => tool.name),
    );
    this.#shown = JSON.stringify(this.#ownTools);
    this.#state = { etag: undefined, tools: [...this.#ownTools], entries: new Map(), toolsJson: Buffer.from(this.#shown) };
  }

  /** The latest state read (empty before the first read). */
  get state(): CatalogState {
    return this.#state;
  }

  /**
   * Whether the bridge ever gave `name` to a registration. A name is never given to
   * another registration, so a name that was given but is not in {@link CatalogState.entries}
   * names a tool whose page changed: the caller says so rather than call anything.
   */
  named(name: string): boolean {
    return this.#names.given(name);
  }

  /** Calls `listener` after each change of what `tools/list` shows; returns the function that stops it. */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /**
   * Reads the snapshot now (a conditional read when a version is known) and returns the
   * state. Reads may overlap (a poll and a `tools/list`); the answer of the read started
   * last is the one kept, so an older answer never replaces a newer one.
   */
  async refresh(): Promise<CatalogState> {
    const read = ++this.#started;
    const answer = await this.#client.webmcp.listToolsIfChanged(this.#browser, this.#state.etag ?? null, this.#request());
    if (read < this.#applied) return this.#state;
    this.#applied = read;
    if (answer.changed) this.#apply(answer.data.tools, answer.etag);
    return this.#state;
  }

  /** Polls every `intervalMs` until {@link ToolCatalog.stop}; a failed read is logged and the next one comes as usual. */
  start(intervalMs: number): void {
    if (this.#polling) return;
    this.#polling = true;
    const tick = async () => {
      try {
        await this.refresh();
      } catch (error) {
        this.#failed(error);
      }
      if (this.#polling) this.#timer = setTimeout(tick, intervalMs);
    };
    this.#timer = setTimeout(tick, 0);
  }

  /** Stops polling. */
  stop(): void {
    this.#polling = false;
    clearTimeout(this.#timer);
  }

  #request() {
    return this.#options.projectId === undefined ? {} : { projectId: this.#options.projectId };
  }

  #apply(tools: WebMcpTool[], etag: string | undefined): void {
    const names = this.#names.assign(tools);
    const entries = new Map<string, CatalogEntry>();
    const shown: McpTool[] = [...this.#ownTools];
    let unnamed = 0;
    tools.forEach((tool, index) => {
      const name = names[index];
      if (name === undefined) {
        unnamed++;
        return;
      }
      const mcp = toMcpTool(name, tool);
      entries.set(mcp.name, { mcp, tool });
      shown.push(mcp);
    });
    if (unnamed > 0 && !this.#namesRanOut) {
      this.#namesRanOut = true;
      this.#options.log?.(
        `the bridge has given ${this.#names.maxNames} tool names, its most; ${unnamed} new registration(s) and any later ones are not listed (restart the bridge to start afresh)`,
      );
    }
    const text = JSON.stringify(shown);
    const changed = text !== this.#shown;
    // An unchanged listing (only a tool_ref moved) keeps its bytes: no client is told, and none needs new ones.
    this.#state = { etag, tools: shown, entries, toolsJson: changed ? Buffer.from(text) : this.#state.toolsJson };
    if (!changed) return;
    this.#shown = text;
    for (const listener of this.#listeners) listener();
  }

  /** A poll failed. A browser that is gone (404) or not running (409) has no tools any more. */
  #failed(error: unknown): void {
    const gone = error instanceof APIError && (error.status === 404 || error.status === 409);
    this.#options.log?.(`could not read the browser's tools: ${error instanceof Error ? error.message : String(error)}${gone ? " (listing none)" : ""}`);
    if (gone) this.#apply([], undefined);
  }
}
