import { untrustedClose, untrustedOpen } from "@browser-service/webmcp-helpers";

const fenced = /<untrusted-page-text>[\s\S]*?<\/untrusted-page-text>/g;

/**
 * Every string in `value`, object keys included, with its fenced blocks removed: what a
 * client would read as the bridge's own words. A test searches it for page text.
 */
export function pageStringsOutsideFences(value: unknown, skipKeys: readonly string[] = []): string[] {
  const found: string[] = [];
  const stack = [value];
  while (stack.length > 0) {
    const node = stack.pop();
    if (typeof node === "string") found.push(node.replace(fenced, ""));
    else if (Array.isArray(node)) stack.push(...node);
    else if (typeof node === "object" && node !== null) {
      for (const [key, child] of Object.entries(node)) {
        if (skipKeys.includes(key)) continue;
        found.push(key);
        stack.push(child);
      }
    }
  }
  return found;
}

/** Whether every fence in `text` is one the bridge opened and closed: tags alternate, open first, none left open. */
export function fencesBalanced(text: string): boolean {
  const tags = [...text.matchAll(/<\/?untrusted-page-text>/g)].map((match) => match[0]);
  return tags.every((tag, index) => tag === (index % 2 === 0 ? untrustedOpen : untrustedClose)) && tags.length % 2 === 0;
}
