import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/** The live view page, ready to serve: one self-contained HTML document and the headers it goes with. */
export interface LiveViewPage {
  /** The document (UTF-8), its script and style inline. */
  html: Buffer;
  /** Its `Content-Security-Policy`: only its own inline script and style, frames as images, WebSockets to the service. */
  contentSecurityPolicy: string;
}

// The page's sources, shipped with the package (`assets/` beside `src/` and `dist/`).
const ASSETS = new URL("../../assets/live-view/", import.meta.url);

/**
 * Builds the page from `assets/live-view/` (`index.html`, `viewer.css`, `viewer.js`):
 * the style and script are put inline and allowed by their hashes, so the page loads
 * nothing, needs no build step, and runs no script a page could inject into it. The same
 * document is the MCP bridge's MCP App: it reads `live_view_url` from the tool result there.
 */
export function buildLiveViewPage(): LiveViewPage {
  const read = (name: string) => readFileSync(new URL(name, ASSETS), "utf8");
  const style = read("viewer.css");
  const script = read("viewer.js");
  const html = read("index.html")
    .replace("/*STYLE*/", () => style)
    .replace("/*SCRIPT*/", () => script);
  const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
  return {
    html: Buffer.from(html),
    contentSecurityPolicy: [
      "default-src 'none'",
      `script-src ${hash(script)}`,
      `style-src ${hash(style)}`,
      "img-src data:",
      // The page's WebSocket goes to the service it came from ('self' covers ws: and wss: of its own host).
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
    ].join("; "),
  };
}
