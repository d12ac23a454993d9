import { describe, expect, it } from "vitest";
import { compileInputSchema, UnsafeSchemaError, ValidationLimitError } from "../../src/index.js";

const matches = (pattern: string, text: string) => compileInputSchema({ type: "string", pattern }).validate(text).valid;

// Patterns that page schemas use, with strings on both sides of each; the linear-time
// matcher must agree with the browser's own engine (RegExp with the u flag) on every one.
const corpus: [string, string[]][] = [
  ["^[a-z0-9._%+-]+@[a-z0-9.-]+\\.[a-z]{2,}$", ["a@b.co", "bad@", "x@y.z", "A@b.co", "first.last+tag@mail.example.org"]],
  ["^\\d{3}-\\d{4}$", ["555-1234", "5551234", "555-12345", "55-1234"]],
  ["^(\\+|00)?[0-9 ]{6,15}$", ["+33 1 23 45 67", "0033123456", "12345", "+1234567890123456"]],
  ["colou?r", ["color", "colour", "the colr", "COLOR"]],
  ["^(?:abc|abd)*x$", ["x", "abcabdx", "abcab", "abdabcabcx"]],
  ["\\bcat\\b", ["cat", "concat", "a cat!", "cats"]],
  ["\\Bfoo", ["xfoo", "foo", "a foo"]],
  ["^[^\\s]+$", ["nospace", "one space", ""]],
  ["^.{2,3}$", ["😀😀", "ab", "a", "abcd", "a\nb"]],
  ["^\\u{1F600}$", ["😀", "😀😀", ":)"]],
  ["^\\uD83D\\uDE00$", ["😀", "x"]],
  ["^[\\]\\-]+$", ["]-]", "-", "a"]],
  ["^a{0}b$", ["b", "ab"]],
  ["^(a|b|)+$", ["", "ab", "abc"]],
  ["^\\x41\\u0042\\cJ$", ["AB\n", "AB"]],
  ["^(?<year>\\d{4})-(?<month>\\d{2})$", ["2024-05", "24-05"]],
  ["a.c", ["abc", "a\nc", "a😀c"]],
  ["^\\S+\\s\\S+$", ["two words", "one", "three word s"]],
  ["^[A-Z][a-z]*(?: [A-Z][a-z]*)*$", ["New York", "new York", "A B C", "Ab "]],
  ["$^", ["", "a"]],
  ["^$", ["", " "]],
  ["^[^]$", ["\n", "a", "ab"]],
  ["^[]$", ["", "a"]],
  ["x*", ["", "anything"]],
  ["^(a*)*b$", ["aaaa", "aab", "b"]],
  ["^[\\w.-]{1,64}$", ["file_name-1.txt", "bad name", "x".repeat(65)]],
  ["^(?:[01]\\d|2[0-3]):[0-5]\\d$", ["23:59", "24:00", "07:05", "7:05"]],
  ["^\\W+$", ["!?", "a!"]],
  ["^[^a-c]$", ["d", "b", "😀"]],
  ["^[\\s\\d]+$", [" 1 2 ", "1a"]],
  ["^[\\D]+$", ["abc", "a1"]],
  ["a{2,}?b", ["aab", "ab", "caaaab"]],
  ["\\f\\v\\t\\0", ["\f\v\t\0", "fvt0"]],
  ["^\\.\\*\\+\\?\\(\\)\\[\\]\\{\\}\\|\\/\\^\\$\\\\$", [".*+?()[]{}|/^$\\", "x"]],
  ["^a|b$", ["ax", "xb", "xa"]],
  ["^x{2}$", ["xx", "x", "xxx"]],
  ["^ab{1,3}c$", ["abc", "abbbc", "abbbbc", "ac"]],
];

describe("the linear-time pattern matcher", () => {
  it.each(corpus)("agrees with RegExp(…, 'u') on %s", (pattern, texts) => {
    const native = new RegExp(pattern, "u");
    for (const text of texts) expect([text, matches(pattern, text)]).toEqual([text, native.test(text)]);
  });

  it("reads a { or ] that starts nothing as a literal, as browsers do", () => {
    expect(matches("^a{b$", "a{b")).toBe(true);
    expect(matches("^a{1,x}$", "a{1,x}")).toBe(true);
    expect(matches("^]$", "]")).toBe(true);
  });

  it("checks a catastrophic-backtracking pattern in a number of steps linear in the input", () => {
    // Backtracking engines take about 2^n steps on these; the automaton visits each of its
    // few states once per character.
    for (const pattern of ["^(a+)+$", "^(a|aa)+$", "^(a|a?)+$", "(x+x+)+y", "^(\\w+\\s?)*$"]) {
      const schema = compileInputSchema({ type: "string", pattern });
      const short = schema.validate(`${"a".repeat(30)}!`);
      const long = schema.validate(`${"a".repeat(3000)}!`);
      expect(short.valid).toBe(false);
      expect(short.steps).toBeLessThan(2_000);
      // 100 times the input, at most about 100 times the steps: linear, not exponential.
      expect(long.steps).toBeLessThan(short.steps * 110);
    }
  });

  it("bounds polynomial blow-ups (a*a*a*a*a*b) the same way", () => {
    const schema = compileInputSchema({ type: "string", pattern: "a*a*a*a*a*b" });
    const result = schema.validate("a".repeat(5000));
    expect(result.valid).toBe(false);
    expect(result.steps).toBeLessThan(5000 * 40);
  });

  it.each([
    ["(a)\\1", "pattern_unsupported"],
    ["(?<x>a)\\k<x>", "pattern_unsupported"],
    ["\\01", "pattern_unsupported"],
    ["(?=a)b", "pattern_unsupported"],
    ["(?!a)b", "pattern_unsupported"],
    ["(?<=a)b", "pattern_unsupported"],
    ["(?<!a)b", "pattern_unsupported"],
    ["\\p{L}", "pattern_unsupported"],
    ["(?i:a)", "pattern_unsupported"],
    ["a".repeat(513), "pattern_too_long"],
    ["(a{1000}){1000}", "pattern_too_complex"],
    ["(?:){9999}(?:){9999}(?:){9999}", "pattern_too_complex"],
    ["a{100001}", "pattern_too_complex"],
    ["a{2,1}", "pattern_invalid"],
    ["(a", "pattern_invalid"],
    ["a)", "pattern_invalid"],
    ["*a", "pattern_invalid"],
    ["a**", "pattern_invalid"],
    ["^*", "pattern_invalid"],
    ["[z-a]", "pattern_invalid"],
    ["[\\d-z]", "pattern_invalid"],
    ["[abc", "pattern_invalid"],
    ["abc\\", "pattern_invalid"],
    ["\\xZZ", "pattern_invalid"],
    ["\\u{110000}", "pattern_invalid"],
  ])("refuses %s with %s, naming where it is", (pattern, code) => {
    const attempt = () => compileInputSchema({ type: "object", properties: { q: { type: "string", pattern } } });
    expect(attempt).toThrow(UnsafeSchemaError);
    expect(attempt).toThrow(expect.objectContaining({ code, schemaPointer: "/properties/q/pattern" }));
  });

  it("refuses to test a string longer than maxPatternInputLength instead of answering without looking", () => {
    const schema = compileInputSchema({ type: "string", pattern: "^a+$" }, { maxPatternInputLength: 100 });
    expect(schema.validate("a".repeat(100)).valid).toBe(true);
    expect(() => schema.validate("a".repeat(101))).toThrow(expect.objectContaining({ name: "ValidationLimitError", code: "pattern_input_too_long" }));
  });

  it("stops a validation that passes maxSteps", () => {
    const schema = compileInputSchema({ type: "array", items: { type: "string", pattern: "(a|b)*c" } }, { maxSteps: 10_000 });
    expect(schema.validate(["abc"]).valid).toBe(true);
    expect(() => schema.validate(Array.from({ length: 100 }, () => "ab".repeat(50)))).toThrow(ValidationLimitError);
  });

  it("tests patternProperties keys with the same matcher", () => {
    const schema = compileInputSchema({ type: "object", patternProperties: { "^x-[a-z]+$": { type: "number" } }, additionalProperties: false });
    expect(schema.validate({ "x-a": 1 }).valid).toBe(true);
    expect(schema.validate({ "x-a": "1" }).problems).toEqual([{ pointer: "/x-a", keyword: "type", message: "must be number, not string" }]);
    expect(schema.validate({ other: 1 }).problems).toEqual([
      { pointer: "", keyword: "additionalProperties", message: 'has the property "other", which the schema does not allow' },
    ]);
  });
});
