/**
 * The deepest nesting a DevTools client's command may have, the command object itself
 * being level 1. Chromium's own protocol parser (crdtp's `kStackLimit`) gives up past 300
 * levels and drops such a command without an answer, so anything deeper is useless to a
 * client; 200 leaves room below that, and is a twentieth of the ~4,000 levels at which
 * V8's recursive `JSON.stringify` overflows the stack, so every value the server keeps of
 * a checked command can be serialized again safely.
 */
export const MAX_COMMAND_DEPTH = 200;

/**
 * The most characters of JSON structure (everything outside strings) one command may hold:
 * parsing costs by them, up to about 0.25 µs each for an object of tiny keys (15.5 MB of
 * them took 2.3 s of the server's one thread here), so past this a command is refused
 * before it is parsed, after a scan of at most this many characters. A command's strings
 * (scripts, base64 uploads) do not count; no DevTools client sends this much structure in
 * one command.
 */
export const MAX_COMMAND_STRUCTURE = 1024 * 1024;

/** Where a value sits in the text it was read from: `text.slice(start, end)`. */
export interface TextSpan {
  start: number;
  end: number;
}

/** What {@link scanCommandText} found. */
export type CommandTextScan =
  /**
   * Nothing deeper than the limit, brackets matched outside strings. `members` holds the
   * top-level object's members by (unescaped) name, each the span of its value, the last
   * one of a name winning as with `JSON.parse`; empty when the text is not an object.
   * The text may still be invalid JSON: `JSON.parse` has the last word.
   */
  | {
      ok: true;
      members: Map<string, TextSpan>;
      /**
       * Characters of JSON structure (everything outside strings) the text holds. Parsing
       * costs by them far more than by string data (here `JSON.parse` of 6.4 MB of `{}`
       * took 520 ms, of a 6.4 MB string under 10 ms), so the budgets charge for them.
       */
      structure: number;
    }
  /**
   * `too_deep`: nesting passed the limit (the scan stopped there, before reading the
   * rest); `too_much_structure`: the text holds more structure than allowed (likewise);
   * `malformed`: not JSON (an unclosed string, brackets that do not match). `members`
   * holds the members complete before the scan stopped, so a refusal can still name the
   * command's `id` when it came first.
   */
  | {
      ok: false;
      problem: "too_deep" | "too_much_structure" | "malformed";
      members: Map<string, TextSpan> /** As for a success, up to where the scan stopped. */;
      structure: number;
    };

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** Where the string opened at `open` closes: the next quote not escaped by an odd run of backslashes, or -1. */
function closingQuote(text: string, open: number): number {
  let quote = open;
  for (;;) {
    quote = text.indexOf('"', quote + 1);
    if (quote === -1) return -1;
    let before = quote - 1;
    // Each run of backslashes is counted once (runs lie between consecutive quotes), so
    // a text full of them still costs one pass.
    while (text.charCodeAt(before) === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote;
  }
}

function isJsonSpace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

/** The span between `start` and `end` without JSON whitespace at either end. */
function trimmed(text: string, start: number, end: number): TextSpan {
  while (start < end && isJsonSpace(text.charCodeAt(start))) start++;
  while (end > start && isJsonSpace(text.charCodeAt(end - 1))) end--;
  return { start, end };
}

/**
 * Walks a client's command once, without recursion, before anything parses it: refuses
 * nesting deeper than `maxDepth` (see {@link MAX_COMMAND_DEPTH}) or more structure than
 * `maxStructure` (see {@link MAX_COMMAND_STRUCTURE}), and records where each
 * top-level member's value is. String contents are jumped over with `indexOf`, so a
 * message that is mostly string data costs little more than a search for its quotes.
 * Once `JSON.parse` has accepted the same text, every span is exactly the JSON of the
 * member `JSON.parse` kept: strict JSON leaves no room for two readings.
 */
export function scanCommandText(text: string, maxDepth: number = MAX_COMMAND_DEPTH, maxStructure: number = MAX_COMMAND_STRUCTURE): CommandTextScan {
  const members = new Map<string, TextSpan>();
  const length = text.length;
  // Which bracket opened each level, so a close of the other kind is caught here.
  const opened = new Uint8Array(maxDepth + 1);
  let depth = 0;
  let topIsObject = false;
  let started = false;
  // Inside the top-level object (depth 1): the member name just read, and where its value began.
  let name: string | undefined;
  let valueStart = -1;
  let structure = 0;
  let i = 0;
  while (i < length) {
    const code = text.charCodeAt(i);
    if (++structure > maxStructure) return { ok: false, problem: "too_much_structure", members, structure };
    if (code === QUOTE) {
      const close = closingQuote(text, i);
      if (close === -1) return { ok: false, problem: "malformed", members, structure };
      if (depth === 1 && topIsObject && name === undefined && valueStart === -1) {
        const raw = text.slice(i + 1, close);
        if (raw.includes("\\")) {
          try {
            name = JSON.parse(text.slice(i, close + 1)) as string;
          } catch {
            return { ok: false, problem: "malformed", members, structure };
          }
        } else {
          name = raw;
        }
      }
      started = true;
      i = close + 1;
      continue;
    }
    if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (!started) topIsObject = code === OPEN_BRACE;
      started = true;
      depth++;
      if (depth > maxDepth) return { ok: false, problem: "too_deep", members, structure };
      opened[depth] = code;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      if (depth === 0 || opened[depth] !== (code === CLOSE_BRACE ? OPEN_BRACE : OPEN_BRACKET)) return { ok: false, problem: "malformed", members, structure };
      if (depth === 1 && topIsObject && name !== undefined && valueStart !== -1) {
        members.set(name, trimmed(text, valueStart, i));
        name = undefined;
        valueStart = -1;
      }
      depth--;
    } else if (depth === 1 && topIsObject) {
      if (code === COLON && name !== undefined && valueStart === -1) {
        valueStart = i + 1;
      } else if (code === COMMA && name !== undefined && valueStart !== -1) {
        members.set(name, trimmed(text, valueStart, i));
        name = undefined;
        valueStart = -1;
      }
    } else if (!started && !isJsonSpace(code)) {
      started = true;
    }
    i++;
  }
  if (depth !== 0) return { ok: false, problem: "malformed", members, structure };
  return { ok: true, members, structure };
}
