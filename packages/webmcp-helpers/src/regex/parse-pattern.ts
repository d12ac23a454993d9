import { UnsafeSchemaError } from "../errors.js";
import { anyButNewline, type CharSet, charSet, complement, digits, spaces, wordChars } from "./char-set.js";

/** A zero-width test: `^`, `$`, `\b`, `\B` (without the `m` flag: `^` and `$` are the ends of the string). */
export type Assertion = "start" | "end" | "boundary" | "notBoundary";

/** The syntax tree of a pattern, in the subset a linear-time matcher can run. */
export type PatternNode =
  | { kind: "set"; set: CharSet }
  | { kind: "seq"; items: PatternNode[] }
  | { kind: "alt"; options: PatternNode[] }
  | { kind: "repeat"; node: PatternNode; min: number; max: number }
  | { kind: "assert"; test: Assertion };

// Larger counts (`a{100000}`) are refused rather than expanded.
const maxRepeatCount = 10_000;

const single = (code: number): CharSet => [code, code];
const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";
const isHex = (c: string | undefined) => c !== undefined && /^[0-9a-fA-F]$/.test(c);

/**
 * Parses an ECMAScript pattern (read with the `u` flag: by code point) into a
 * {@link PatternNode}. Backreferences, lookaround, `\p{…}` and inline modifiers are
 * refused (`pattern_unsupported`), as no linear-time matcher runs them; malformed syntax is
 * `pattern_invalid`. A `{` or `]` that starts nothing is a literal, as browsers read it.
 */
export function parsePattern(pattern: string, pointer: string): PatternNode {
  return new Parser(pattern, pointer).parse();
}

class Parser {
  private readonly chars: string[];
  private pos = 0;

  constructor(
    private readonly pattern: string,
    private readonly pointer: string,
  ) {
    this.chars = Array.from(pattern);
  }

  parse(): PatternNode {
    const node = this.alternation();
    if (this.pos < this.chars.length) this.fail("pattern_invalid", "has an unmatched )");
    return node;
  }

  private fail(code: "pattern_invalid" | "pattern_unsupported" | "pattern_too_complex", what: string): never {
    const quoted = JSON.stringify(this.pattern.length > 80 ? `${this.pattern.slice(0, 80)}…` : this.pattern);
    const advice =
      code === "pattern_unsupported"
        ? " The safe validator matches in linear time and cannot run it; the tool's schema is refused."
        : code === "pattern_too_complex"
          ? " It would take too much work to check; the tool's schema is refused."
          : " It is not a valid regular expression; the tool's schema is refused.";
    throw new UnsafeSchemaError(code, `The pattern ${quoted} at ${this.pointer || "/"} ${what}.${advice}`, this.pointer);
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.pos + offset];
  }

  private alternation(): PatternNode {
    const options = [this.sequence()];
    while (this.peek() === "|") {
      this.pos++;
      options.push(this.sequence());
    }
    return options.length === 1 ? (options[0] as PatternNode) : { kind: "alt", options };
  }

  private sequence(): PatternNode {
    const items: PatternNode[] = [];
    while (this.pos < this.chars.length && this.peek() !== "|" && this.peek() !== ")") items.push(this.term());
    return items.length === 1 ? (items[0] as PatternNode) : { kind: "seq", items };
  }

  private term(): PatternNode {
    const c = this.peek() as string;
    if (c === "^" || c === "$") {
      this.pos++;
      return this.noQuantifier({ kind: "assert", test: c === "^" ? "start" : "end" });
    }
    if (c === "\\" && (this.peek(1) === "b" || this.peek(1) === "B")) {
      this.pos += 2;
      return this.noQuantifier({ kind: "assert", test: this.chars[this.pos - 1] === "b" ? "boundary" : "notBoundary" });
    }
    if (c === "*" || c === "+" || c === "?" || (c === "{" && this.quantifierAhead())) this.fail("pattern_invalid", `has ${c} with nothing to repeat`);
    return this.quantified(this.atom());
  }

  private noQuantifier(node: PatternNode): PatternNode {
    const c = this.peek();
    if (c === "*" || c === "+" || c === "?" || (c === "{" && this.quantifierAhead())) this.fail("pattern_invalid", "repeats an assertion");
    return node;
  }

  /** Whether `{` at the position starts `{n}`, `{n,}` or `{n,m}`. */
  private quantifierAhead(): boolean {
    let i = this.pos + 1;
    if (!isDigit(this.chars[i])) return false;
    while (isDigit(this.chars[i])) i++;
    if (this.chars[i] === ",") {
      i++;
      while (isDigit(this.chars[i])) i++;
    }
    return this.chars[i] === "}";
  }

  private count(): number {
    let digitsText = "";
    while (isDigit(this.peek())) digitsText += this.chars[this.pos++];
    const value = Number(digitsText);
    if (value > maxRepeatCount) this.fail("pattern_too_complex", `repeats ${digitsText} times (at most ${maxRepeatCount})`);
    return value;
  }

  private quantified(node: PatternNode): PatternNode {
    const c = this.peek();
    let min: number;
    let max: number;
    if (c === "*" || c === "+" || c === "?") {
      this.pos++;
      [min, max] = c === "*" ? [0, Infinity] : c === "+" ? [1, Infinity] : [0, 1];
    } else if (c === "{" && this.quantifierAhead()) {
      this.pos++;
      min = this.count();
      max = min;
      if (this.peek() === ",") {
        this.pos++;
        max = isDigit(this.peek()) ? this.count() : Infinity;
      }
      this.pos++; // the "}"
      if (max < min) this.fail("pattern_invalid", `has a quantifier {${min},${max}} out of order`);
    } else {
      return node;
    }
    if (this.peek() === "?") this.pos++; // lazy or greedy: the same strings match
    const next = this.peek();
    if (next === "*" || next === "+" || next === "?" || (next === "{" && this.quantifierAhead()))
      this.fail("pattern_invalid", "has a quantifier with nothing to repeat");
    return { kind: "repeat", node, min, max };
  }

  private atom(): PatternNode {
    const c = this.chars[this.pos++] as string;
    if (c === ".") return { kind: "set", set: anyButNewline };
    if (c === "(") return this.group();
    if (c === "[") return { kind: "set", set: this.charClass() };
    if (c === "\\") return { kind: "set", set: this.escape() };
    return { kind: "set", set: single(c.codePointAt(0) as number) };
  }

  private group(): PatternNode {
    if (this.peek() === "?") {
      const kind = this.peek(1);
      if (kind === ":") this.pos += 2;
      else if (kind === "=" || kind === "!" || (kind === "<" && (this.peek(2) === "=" || this.peek(2) === "!")))
        this.fail("pattern_unsupported", "uses a lookaround assertion");
      else if (kind === "<") {
        const close = this.chars.indexOf(">", this.pos);
        if (close === -1) this.fail("pattern_invalid", "has an unterminated group name");
        this.pos = close + 1;
      } else this.fail("pattern_unsupported", "uses an inline modifier group");
    }
    const node = this.alternation();
    if (this.peek() !== ")") this.fail("pattern_invalid", "has an unterminated group");
    this.pos++;
    return node;
  }

  private charClass(): CharSet {
    const negated = this.peek() === "^";
    if (negated) this.pos++;
    const ranges: number[] = [];
    while (this.peek() !== "]") {
      if (this.pos >= this.chars.length) this.fail("pattern_invalid", "has an unterminated character class");
      const low = this.classAtom();
      if (this.peek() === "-" && this.peek(1) !== "]" && this.peek(1) !== undefined) {
        this.pos++;
        const high = this.classAtom();
        if (low.length !== 2 || high.length !== 2 || low[0] !== low[1] || high[0] !== high[1])
          this.fail("pattern_invalid", "has a class range with a class escape as an end");
        if ((low[0] as number) > (high[0] as number)) this.fail("pattern_invalid", "has a class range out of order");
        ranges.push(low[0] as number, high[0] as number);
      } else {
        ranges.push(...low);
      }
    }
    this.pos++;
    const set = charSet(ranges);
    return negated ? complement(set) : set;
  }

  private classAtom(): CharSet {
    const c = this.chars[this.pos++] as string;
    return c === "\\" ? this.escape() : single(c.codePointAt(0) as number);
  }

  /** After a `\`: the set the escape stands for. */
  private escape(): CharSet {
    const c = this.chars[this.pos++];
    switch (c) {
      case undefined:
        return this.fail("pattern_invalid", "ends with \\");
      case "d":
        return digits;
      case "D":
        return complement(digits);
      case "w":
        return wordChars;
      case "W":
        return complement(wordChars);
      case "s":
        return spaces;
      case "S":
        return complement(spaces);
      case "t":
        return single(0x09);
      case "n":
        return single(0x0a);
      case "v":
        return single(0x0b);
      case "f":
        return single(0x0c);
      case "r":
        return single(0x0d);
      case "b":
        // Only reached inside a class, where \b is a backspace.
        return single(0x08);
      case "B":
        return this.fail("pattern_invalid", "has \\B inside a character class");
      case "0":
        if (isDigit(this.peek())) this.fail("pattern_unsupported", "uses an octal escape or backreference");
        return single(0);
      case "c": {
        const letter = this.peek();
        if (letter === undefined || !/^[A-Za-z]$/.test(letter)) return this.fail("pattern_invalid", "has \\c without a letter");
        this.pos++;
        return single((letter.codePointAt(0) as number) % 32);
      }
      case "x":
        return single(this.hex(2));
      case "u":
        return single(this.unicodeEscape());
      case "k":
        return this.fail("pattern_unsupported", "uses a named backreference");
      case "p":
      case "P":
        return this.fail("pattern_unsupported", "uses a Unicode property escape");
      default:
        if (isDigit(c)) return this.fail("pattern_unsupported", "uses a backreference");
        return single(c.codePointAt(0) as number);
    }
  }

  private hex(length: number): number {
    let text = "";
    for (let i = 0; i < length; i++) {
      const c = this.peek();
      if (!isHex(c)) this.fail("pattern_invalid", "has a malformed hexadecimal escape");
      text += c;
      this.pos++;
    }
    return Number.parseInt(text, 16);
  }

  private unicodeEscape(): number {
    if (this.peek() === "{") {
      const close = this.chars.indexOf("}", this.pos);
      const text = close === -1 ? "" : this.chars.slice(this.pos + 1, close).join("");
      if (!/^[0-9a-fA-F]{1,6}$/.test(text) || Number.parseInt(text, 16) > 0x10ffff) this.fail("pattern_invalid", "has a malformed \\u{…} escape");
      this.pos = close + 1;
      return Number.parseInt(text, 16);
    }
    const code = this.hex(4);
    // A surrogate pair written as two escapes is one code point, as with the u flag.
    if (code >= 0xd800 && code <= 0xdbff && this.peek() === "\\" && this.peek(1) === "u" && this.peek(2) !== "{") {
      const save = this.pos;
      this.pos += 2;
      const low = this.hex(4);
      if (low >= 0xdc00 && low <= 0xdfff) return (code - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
      this.pos = save;
    }
    return code;
  }
}
