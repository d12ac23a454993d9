/**
 * The URL as the service reports it: parsed and serialized (so `http://Host:80` reads
 * `http://host/`) and without its fragment. Text that is not an absolute URL is only
 * stripped of its fragment.
 */
export function normalizeUrl(text: string): string {
  let href = text;
  try {
    href = new URL(text).href;
  } catch {
    // Not an absolute URL (a page could report anything): compared as written.
  }
  const hash = href.indexOf("#");
  return hash === -1 ? href : href.slice(0, hash);
}

/** The origin of a URL (`http://localhost:9000`), or `"null"` when it has none. */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "null";
  }
}

/**
 * The origin a string names, when it is an origin and nothing more
 * (`http://localhost:9000`, with or without a final `/`); otherwise `undefined`.
 */
export function asOrigin(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return undefined;
  }
  if (url.origin === "null") return undefined;
  return text === url.origin || text === `${url.origin}/` ? url.origin : undefined;
}

/**
 * Whether `text` matches a wildcard pattern in which `*` stands for any run of
 * characters (`/` included) and everything else is literal, anchored at both ends.
 * Greedy matching with one remembered star: O(pattern × text) at worst, no regex.
 */
export function wildcardMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] === "*") {
      star = p++;
      resume = t;
    } else if (p < pattern.length && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (star !== -1) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.length && pattern[p] === "*") p++;
  return p === pattern.length;
}
