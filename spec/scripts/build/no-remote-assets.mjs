// The docs page must work offline: this finds anything in it that would load from the
// network.
import { relative } from "node:path";
import { fail } from "./output.mjs";
import { specDir } from "./redocly.mjs";

/** Fails if the page loads a script, style, font, image or module from http(s) or a protocol-relative URL. */
export function checkNoRemoteAssets(page, file) {
  const remote = /^(?:[a-z][a-z0-9+.-]*:)?\/\//i;
  const found = [];
  for (const [tag] of page.matchAll(/<(script|link|img|iframe|source|embed|object|base)\b[^>]*>/gi)) {
    for (const [, attr, value] of tag.matchAll(/\s(src|href|data|srcset)\s*=\s*["']?([^"'\s>]+)/gi)) {
      // <a href> is navigation, not loading; <link> of these kinds loads something.
      if (/^<link/i.test(tag) && !/rel\s*=\s*["']?(stylesheet|modulepreload|preload|prefetch|icon|manifest|import)/i.test(tag)) continue;
      if (remote.test(value)) found.push(`${attr}=${value} in ${tag.slice(0, 120)}`);
    }
  }
  for (const [, specifier] of page.matchAll(/\bimport\s*(?:[^"'();]*?\bfrom\s*)?["']([^"']+)["']/g)) {
    if (remote.test(specifier)) found.push(`import ${specifier}`);
  }
  for (const [, specifier] of page.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g)) {
    if (remote.test(specifier)) found.push(`import(${specifier})`);
  }
  for (const [style] of page.matchAll(/<style\b[^>]*>[\s\S]*?<\/style>/gi)) {
    for (const [, url] of style.matchAll(/(?:@import\s+(?:url\()?|url\()\s*["']?([^"')\s]+)/gi)) {
      if (remote.test(url)) found.push(`css url(${url})`);
    }
  }
  if (found.length > 0) fail(`${relative(specDir, file)} loads remote assets; the docs must work offline:`, found.map((f) => `  ${f}`).join("\n"));
}
