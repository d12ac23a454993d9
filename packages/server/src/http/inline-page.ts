import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";

/** A web page of the service, ready to serve: one self-contained HTML document and the headers it goes with. */
export interface InlinePage {
  /** The document (UTF-8), its script and style inline. */
  html: Buffer;
  /** Its `Content-Security-Policy`: only its own inline script and style, then the directives it was built with. */
  contentSecurityPolicy: string;
}

/**
 * Builds a page from a folder of `assets/` holding `index.html` (with `/*STYLE*\/` and
 * `/*SCRIPT*\/` where they go) and the two files named: the style and script are put
 * inline and allowed by their hashes, so the page loads nothing, needs no build step, and
 * runs no script a page could inject into it. `directives` adds to `default-src 'none'`.
 */
export function buildInlinePage(folder: URL, files: { style: string; script: string }, directives: readonly string[]): InlinePage {
  const read = (name: string) => readFileSync(new URL(name, folder), "utf8");
  const style = read(files.style);
  const script = read(files.script);
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
      ...directives,
      "base-uri 'none'",
      "form-action 'none'",
    ].join("; "),
  };
}
