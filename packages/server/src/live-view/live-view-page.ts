import { buildInlinePage, type InlinePage } from "../http/inline-page.js";

/** The live view page, ready to serve: frames as images, WebSockets to the service. */
export type LiveViewPage = InlinePage;

// The page's sources, shipped with the package (`assets/` beside `src/` and `dist/`).
const ASSETS = new URL("../../assets/live-view/", import.meta.url);

/**
 * Builds the page from `assets/live-view/` (`index.html`, `viewer.css`, `viewer.js`; see
 * {@link buildInlinePage}). The same document is the MCP bridge's MCP App: it reads
 * `live_view_url` from the tool result there.
 */
export function buildLiveViewPage(): LiveViewPage {
  return buildInlinePage(ASSETS, { style: "viewer.css", script: "viewer.js" }, [
    "img-src data:",
    // The page's WebSocket goes to the service it came from ('self' covers ws: and wss: of its own host).
    "connect-src 'self'",
  ]);
}
