import type { BrowserServiceClient } from "@browser-service/client";
import type { CallResult } from "./call-result.js";
import { McpBridgeError } from "./errors.js";
import type { McpTool } from "./mcp-tool.js";

/** The MCP Apps extension's identifier, as clients name it in their capabilities. */
export const mcpAppsExtension = "io.modelcontextprotocol/ui";

/** The bridge's live view, as an MCP App resource. */
export const liveViewResourceUri = "ui://browser-service/live-view";

/** The MIME type of an MCP App's HTML (the MCP Apps extension). */
export const mcpAppMimeType = "text/html;profile=mcp-app";

/** The name of the bridge's own tool that shows the browser; never given to a page's tool. */
export const showBrowserToolName = "show_browser";

/** The largest live view page the bridge hands on (the service's page is about 25 KB). */
const MAX_PAGE_BYTES = 1024 * 1024;

/**
 * `show_browser`, as `tools/list` shows it: the bridge's own tool, not a page's. Its
 * `_meta.ui.resourceUri` links it to the live view App, which hosts of MCP Apps render
 * with the tool's result; other clients get the link in its text.
 */
export const showBrowserTool: McpTool = {
  name: showBrowserToolName,
  title: "Show the browser",
  description:
    "Shows the remote browser live to the person using this client: its screen, its tabs and its WebMCP tools, where they can click and type " +
    "(to pass a CAPTCHA, approve a payment, or see why a tool failed). Clients that render MCP Apps show it in place; the result also " +
    "holds the link. The link is a secret that lets whoever holds it control the browser: give it only to the user. Pass read_only: true " +
    "for a link that can only watch.",
  inputSchema: {
    type: "object",
    properties: { read_only: { type: "boolean", description: "A watch-only link: the viewer cannot click, type or invoke tools." } },
    additionalProperties: false,
  },
  annotations: { readOnlyHint: true, openWorldHint: false },
  _meta: { ui: { resourceUri: liveViewResourceUri }, "ui/resourceUri": liveViewResourceUri },
};

/** The live view resource as `resources/list` shows it. */
export const liveViewResource = {
  uri: liveViewResourceUri,
  name: "live-view",
  title: "Live view of the browser",
  description: "The browser's screen, tabs and WebMCP tools, live; rendered by clients that support MCP Apps with the result of show_browser.",
  mimeType: mcpAppMimeType,
};

/** The live view resource's contents, as `resources/read` returns them. */
export interface LiveViewContents {
  [key: string]: unknown;
  contents: { uri: string; mimeType: string; text: string; _meta: Record<string, unknown> }[];
}

/**
 * The browser's live view for MCP clients: `show_browser`'s result (the browser's
 * `live_view_url`, or its read-only one) and the App's HTML, which is the service's own
 * live view page, read from the service so that it always speaks the service's protocol.
 * Served inside a host's frame, that page takes the link from the tool result; its CSP
 * lets it connect only to the service's origin.
 */
export class LiveViewApp {
  readonly #client: BrowserServiceClient;
  readonly #browser: string;
  readonly #projectId: string | undefined;

  constructor(client: BrowserServiceClient, browser: string, projectId: string | undefined) {
    this.#client = client;
    this.#browser = browser;
    this.#projectId = projectId;
  }

  /** `show_browser`: the link, in text for every client and as `structuredContent.live_view_url` for the App. */
  async show(input: Record<string, unknown>): Promise<CallResult> {
    const unknown = Object.keys(input).filter((key) => key !== "read_only");
    if (unknown.length > 0 || (input.read_only !== undefined && typeof input.read_only !== "boolean")) {
      return { content: [{ type: "text", text: "show_browser takes only read_only (true or false)." }], isError: true };
    }
    const browser = await this.#client.browsers.get(this.#browser, this.#options());
    if (browser.status !== "running") {
      return { content: [{ type: "text", text: `The browser ${browser.id} is not running (${browser.status}): there is nothing to show.` }], isError: true };
    }
    const readOnly = input.read_only === true;
    const url = readOnly ? browser.live_view_read_only_url : browser.live_view_url;
    const kind = readOnly ? "watch-only live view" : "live view (whoever opens it can click and type in the browser)";
    return {
      content: [
        { type: "text", text: `The ${kind} of browser ${browser.id}: ${url}\nGive this link to the user only; it stops working when the browser ends.` },
      ],
      structuredContent: { live_view_url: url, read_only: readOnly },
    };
  }

  /** The App: the service's live view page, allowed to connect to the service's origin only. */
  async contents(): Promise<LiveViewContents> {
    const browser = await this.#client.browsers.get(this.#browser, this.#options());
    const page = new URL(browser.live_view_url);
    page.hash = "";
    const response = await fetch(page, { redirect: "error", signal: AbortSignal.timeout(10_000) });
    const type = response.headers.get("content-type") ?? "";
    if (!response.ok || !type.startsWith("text/html")) {
      throw new McpBridgeError("live_view_unavailable", `The service did not serve its live view page (${response.status} ${type}).`);
    }
    const html = await boundedText(response, MAX_PAGE_BYTES);
    const origin = page.origin;
    const wsOrigin = origin.replace(/^http/, "ws");
    return {
      contents: [
        {
          uri: liveViewResourceUri,
          mimeType: mcpAppMimeType,
          text: html,
          _meta: { ui: { csp: { connectDomains: [origin, wsOrigin], resourceDomains: [] }, prefersBorder: true } },
        },
      ],
    };
  }

  #options() {
    return this.#projectId === undefined ? {} : { projectId: this.#projectId };
  }
}

/** The body as text, read no further than `maxBytes`: a larger one is an error, not memory. */
async function boundedText(response: Response, maxBytes: number): Promise<string> {
  const tooLarge = () => new McpBridgeError("live_view_unavailable", "The service's live view page is larger than the bridge hands on.");
  if (Number(response.headers.get("content-length") ?? 0) > maxBytes) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
