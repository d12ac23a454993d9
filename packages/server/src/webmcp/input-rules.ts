import { limits } from "@browser-service/types";
import type { ErrorDetail } from "../http/api-errors.js";

/** How many levels of objects and arrays an invocation's `input` may nest (the spec's `x-max-depth`). */
export const MAX_INPUT_DEPTH = limits.schemas.WebMcpInvokeRequest.input.maxDepth;

// A UTF-16 code unit of a surrogate pair standing alone: with the `u` flag, a well-formed pair is one code point and does not match.
const UNPAIRED_SURROGATE = /\p{Cs}/u;
// The spec's rule for every property name (`x-property-name-pattern`: ASCII only), compiled once.
const PROPERTY_NAME = new RegExp(limits.schemas.WebMcpInvokeRequest.input.propertyNamePattern, "u");

const pointerPart = (key: string) => key.replace(/~/g, "~0").replace(/\//g, "~1");
// A pointer as a message shows it: short, with each unpaired surrogate written as its escape.
const shown = (pointer: string) => pointer.slice(0, 200).replace(/\p{Cs}/gu, (unit) => `\\u${unit.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * What keeps an invocation's `input` from reaching the page exactly as sent, as the
 * spec's 400 details, all measured on Chromium 156: nesting deeper than
 * {@link MAX_INPUT_DEPTH} (its DevTools protocol drops a message nested about 300 levels
 * deep without an answer, and a deep value overflows the stack of `JSON.stringify`), a
 * property name with a character past ASCII (`WebMCP.invokeTool` refuses the whole
 * input as "Invalid parameters"), and an unpaired surrogate in a string (replaced by
 * U+FFFD on the way). The walk is iterative, so any depth the body parser accepted is
 * measured without recursion; it reports the first problem of each kind.
 */
export function inputProblems(input: unknown): ErrorDetail[] {
  const problems: ErrorDetail[] = [];
  let tooDeep = false;
  let badUnicode = false;
  let badName = false;
  const stack: { value: unknown; pointer: string; depth: number }[] = [{ value: input, pointer: "/input", depth: 1 }];
  while (stack.length > 0 && !(tooDeep && badUnicode && badName)) {
    const { value, pointer, depth } = stack.pop() as (typeof stack)[number];
    if (typeof value === "string") {
      if (!badUnicode && UNPAIRED_SURROGATE.test(value)) {
        badUnicode = true;
        problems.push({
          code: "invalid_unicode",
          message: `${shown(pointer)} holds an unpaired surrogate, which the browser cannot pass to the page; send well-formed Unicode.`,
        });
      }
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth > MAX_INPUT_DEPTH) {
      if (!tooDeep)
        problems.push({
          code: "maxDepth",
          message: `/input is nested more than ${MAX_INPUT_DEPTH} levels deep (at ${shown(pointer)}); it may be nested at most ${MAX_INPUT_DEPTH}.`,
        });
      tooDeep = true;
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const itemPointer = `${pointer}/${pointerPart(key)}`;
      if (!badName && !PROPERTY_NAME.test(key)) {
        badName = true;
        problems.push({
          code: "non_ascii_property_name",
          message: `The property name at ${shown(itemPointer)} has characters past ASCII, which the browser refuses in a tool's input; string values may hold any.`,
        });
      }
      stack.push({ value: item, pointer: itemPointer, depth: depth + 1 });
    }
  }
  return problems;
}
