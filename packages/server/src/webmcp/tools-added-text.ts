/**
 * Reading a `WebMCP.toolsAdded` event too large to parse at once (Chromium reports every
 * tool a frame registered before `WebMCP.enable` in one such event): its JSON text is
 * walked for the bounds of each tool, and each tool is parsed alone, a slice of the text
 * at a time with a turn of the event loop between slices. The walk only finds where
 * strings and brackets end, so a tool costs about what parsing it costs, and no more of
 * the event is ever parsed at once than one slice: a single tool longer than a slice
 * (which only a page stuffing a description could write: every kept field is far
 * smaller) ends the reading, as a malformed text does.
 */

/** How much of the text is read between two turns of the event loop, and the longest tool read. */
const SLICE_CHARS = 1024 * 1024;

// How Chromium writes the event: the method first, then its only parameter.
const PREFIX = '{"method":"WebMCP.toolsAdded","params":{"tools":[';
const STRUCTURE = /["[\]{}]/g;
const BACKSLASH = 0x5c;

/** The index just past the string whose opening quote is before `from`, or -1 (none before `limit`). */
function stringEnd(text: string, from: number, limit: number): number {
  for (let at = from; ; ) {
    const quote = text.indexOf('"', at);
    if (quote === -1 || quote >= limit) return -1;
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    // An even run of backslashes escapes itself, not the quote.
    if (backslashes % 2 === 0) return quote + 1;
    at = quote + 1;
  }
}

/** The index just past the object or array that starts at `start`, or -1 (none before `limit`). */
function valueEnd(text: string, start: number, limit: number): number {
  let depth = 0;
  for (let at = start; ; ) {
    STRUCTURE.lastIndex = at;
    const found = STRUCTURE.exec(text);
    if (found === null || found.index >= limit) return -1;
    at = found.index + 1;
    const char = found[0];
    if (char === '"') {
      at = stringEnd(text, at, limit);
      if (at === -1) return -1;
    } else if (char === "{" || char === "[") {
      depth++;
    } else if (--depth === 0) {
      return at;
    }
  }
}

/**
 * Reads the tools of a `WebMCP.toolsAdded` event's JSON text in order, handing them to
 * `take` a slice at a time, until the last or until `wanted()` says to stop. Resolves
 * `false` when the text turns out not to be what Chromium writes: the tools before that
 * point were handed over, the rest is not read.
 */
export async function readToolsAdded(text: string, take: (tools: unknown[]) => void, wanted: () => boolean): Promise<boolean> {
  if (!text.startsWith(PREFIX)) return false;
  let at = PREFIX.length;
  if (text[at] === "]") return true;
  for (;;) {
    const sliceEnd = at + SLICE_CHARS;
    const tools: unknown[] = [];
    let state: "more" | "last" | "malformed" = "more";
    while (state === "more" && at < sliceEnd) {
      const end = text[at] === "{" ? valueEnd(text, at, at + SLICE_CHARS) : -1;
      const tool = end === -1 ? undefined : parsed(text.slice(at, end));
      const next = text[end];
      if (tool === undefined || (next !== "," && next !== "]")) {
        state = "malformed";
        break;
      }
      tools.push(tool);
      if (next === "]") state = "last";
      at = end + 1;
    }
    take(tools);
    if (state !== "more") return state === "last";
    await new Promise((resolve) => setImmediate(resolve));
    if (!wanted()) return true;
  }
}

/** A tool's JSON text parsed, or `undefined` if it is not JSON. */
function parsed(json: string): unknown {
  try {
    return JSON.parse(json) as unknown;
  } catch {
    return undefined;
  }
}
