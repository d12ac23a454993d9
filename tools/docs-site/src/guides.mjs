// The guides: Markdown files in guides/, rendered to static pages of the site. Their code
// blocks are programs: test/guides.test.ts runs each guide's `js` blocks, in order, as
// one script against the reference server and compares what it prints with the guide's
// `text` block.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import MarkdownIt from "markdown-it";

/** The folder of the guides' Markdown files; their names' order is the guides' order. */
export const guidesDir = fileURLToPath(new URL("../guides", import.meta.url));

// Raw HTML in a guide would be copied into the page as it is: it is refused, so a guide
// is text, links, images and code, and the page's policy (no scripts) holds. A guide's
// images are files of guides/images/ (`![what it shows](images/name.png)`), which the
// build copies beside the pages.
const markdown = new MarkdownIt({ html: false, linkify: false, typographer: false });

/**
 * @typedef {object} Guide
 * @property {string} slug file name without `.md`, also the page's name
 * @property {string} title its first `# ` heading
 * @property {string} source the Markdown
 */

/** @returns {Guide[]} every guide, in order */
export function loadGuides() {
  return readdirSync(guidesDir)
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => {
      const source = readFileSync(join(guidesDir, name), "utf8");
      const title = /^# (.+)$/m.exec(source)?.[1];
      if (!title) throw new Error(`guides/${name} has no "# Title" line.`);
      return { slug: name.slice(0, -3), title, source };
    });
}

/**
 * The fenced code blocks of a guide, as the renderer sees them.
 * @param {string} source
 * @returns {{ language: string, code: string }[]}
 */
export function codeBlocks(source) {
  return markdown
    .parse(source, {})
    .filter((token) => token.type === "fence")
    .map((token) => ({ language: token.info.trim().split(/\s+/)[0] ?? "", code: token.content }));
}

/** @param {string} text */
const escapeHtml = (text) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * The page of one guide: static, self-contained, no scripts.
 * @param {Guide} guide
 * @param {Guide[]} all every guide, for the links between them
 */
export function guidePage(guide, all) {
  const nav = all
    .map((each) => (each === guide ? `<strong>${escapeHtml(each.title)}</strong>` : `<a href="${escapeHtml(each.slug)}.html">${escapeHtml(each.title)}</a>`))
    .join(" · ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; base-uri 'none'; form-action 'none'" />
  <link rel="icon" href="data:," />
  <title>${escapeHtml(guide.title)} · browser-service guides</title>
  <style>
    body { font: 16px/1.6 system-ui, sans-serif; margin: 0; color: #1f2328; background: #fff; }
    main { max-width: 52rem; margin: 0 auto; padding: 2rem 1.5rem; }
    nav { font-size: .95rem; margin-bottom: 1.5rem; }
    a { color: #0969da; }
    pre { background: #f6f8fa; padding: .75rem 1rem; overflow-x: auto; border-radius: 6px; font-size: .88rem; line-height: 1.45; }
    code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; }
    :not(pre) > code { background: #eff1f3; padding: .1rem .3rem; border-radius: 4px; font-size: .9em; }
    img { display: block; max-width: 100%; height: auto; border: 1px solid #d1d9e0; border-radius: 6px; }
  </style>
</head>
<body>
  <main>
    <nav><a href="../index.html">browser-service docs</a> · Guides: ${nav}</nav>
${markdown.render(guide.source)}  </main>
</body>
</html>
`;
}
