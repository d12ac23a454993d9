// The code and output blocks of a package's README, as the release test runs them from
// an installed copy of the package (the published README is the one read).
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The README of an installed package, `<project>/node_modules/<name>/README.md`. */
export function installedReadme(nodeModulesParent: string, name: string): string {
  return readFileSync(join(nodeModulesParent, "node_modules", name, "README.md"), "utf8");
}

/** Every fenced block of `language` in `markdown`, in order (the fence's contents only). */
export function fencedBlocks(markdown: string, language: string): string[] {
  return [...markdown.matchAll(new RegExp(`^\`\`\`${language}\\n([\\s\\S]*?)^\`\`\``, "gm"))].map((match) => match[1]!);
}

/** The first fenced block of `language` after the first occurrence of `marker`. */
export function blockAfter(markdown: string, language: string, marker: string): string {
  const at = markdown.indexOf(marker);
  if (at === -1) throw new Error(`The README has no "${marker}".`);
  const block = fencedBlocks(markdown.slice(at), language)[0];
  if (block === undefined) throw new Error(`The README has no \`\`\`${language} block after "${marker}".`);
  return block;
}

/**
 * What differs from run to run in the examples' output: ports, window and tab numbers,
 * DevTools ids, and the service's ids (`proj_…`, `req_…`), whose README forms are samples.
 */
export function normalizeOutput(text: string): string {
  return text
    .replace(/:\d{2,5}\b/g, ":PORT")
    .replace(/\b(window|tab) \d+/g, "$1 N")
    .replace(/\b[0-9A-Fa-f]{16,}\b/g, "ID")
    .replace(/\b(proj|req|org|brw|ext|key|wmt|bsk)_[0-9a-z]+/g, "$1_ID")
    .trim();
}
