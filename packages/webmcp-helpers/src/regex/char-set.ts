/**
 * A set of code points as sorted, disjoint, inclusive ranges `[lo0, hi0, lo1, hi1, ...]`.
 * Character classes, escapes like `\d` and `.` all become one of these.
 */
export type CharSet = readonly number[];

const maxCodePoint = 0x10ffff;

/** The set of exactly these ranges (in any order, overlapping or not). */
export function charSet(ranges: readonly number[]): CharSet {
  const pairs: [number, number][] = [];
  for (let i = 0; i < ranges.length; i += 2) pairs.push([ranges[i] as number, ranges[i + 1] as number]);
  pairs.sort((a, b) => a[0] - b[0]);
  const merged: number[] = [];
  for (const [lo, hi] of pairs) {
    const last = merged.length - 1;
    if (last > 0 && lo <= (merged[last] as number) + 1) merged[last] = Math.max(merged[last] as number, hi);
    else merged.push(lo, hi);
  }
  return merged;
}

/** Every code point not in `set`. */
export function complement(set: CharSet): CharSet {
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < set.length; i += 2) {
    if ((set[i] as number) > next) out.push(next, (set[i] as number) - 1);
    next = (set[i + 1] as number) + 1;
  }
  if (next <= maxCodePoint) out.push(next, maxCodePoint);
  return out;
}

/** Whether `code` is in `set` (binary search over the ranges). */
export function inSet(set: CharSet, code: number): boolean {
  let low = 0;
  let high = set.length / 2 - 1;
  while (low <= high) {
    const mid = (low + high) >> 1;
    if (code < (set[mid * 2] as number)) high = mid - 1;
    else if (code > (set[mid * 2 + 1] as number)) low = mid + 1;
    else return true;
  }
  return false;
}

/** `\d` */
export const digits = charSet([0x30, 0x39]);
/** `\w`: ASCII letters, digits and `_`, as ECMAScript defines it without the `i` flag. */
export const wordChars = charSet([0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a]);
/** `\s`: ECMAScript's WhiteSpace and LineTerminator. */
export const spaces = charSet([
  0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
]);
/** `.`: anything but a line terminator. */
export const anyButNewline = complement(charSet([0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029]));
