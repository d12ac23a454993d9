import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_COMMAND_DEPTH, scanCommandText } from "../src/cdp/command-text.js";
import { depthOf } from "./support/json-depth.js";

// Seeded like the fuzz suites: FUZZ_SEED changes the run, FUZZ_SCALE its size.
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const RUNS = Math.max(1, Math.round(400 * SCALE));

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** JSON text of `value` with whitespace of every kind JSON allows between tokens. */
const spacedJson = (value: unknown, space: string) => JSON.stringify(value, null, space).replace(/\n/g, "\r\n");

const nested = (depth: number, open: string, close: string, inner = "1") => `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

describe("scanCommandText", () => {
  it("accepts what JSON.parse accepts within the depth limit, and each top-level span reads as JSON.parse's member", () => {
    let objects = 0;
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), fc.constantFrom("", " ", "\t", "  "), (value, space) => {
        const text = space === "" ? JSON.stringify(value) : spacedJson(value, space);
        const scan = scanCommandText(text);
        expect(scan.ok).toBe(true);
        if (!scan.ok || typeof value !== "object" || value === null || Array.isArray(value)) return;
        objects++;
        const parsed = JSON.parse(text) as Record<string, unknown>;
        expect([...scan.members.keys()].sort()).toEqual(Object.keys(parsed).sort());
        for (const [name, span] of scan.members) expect(JSON.parse(text.slice(span.start, span.end))).toEqual(parsed[name]);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    console.log(`command-text (seed ${SEED}, scale ${SCALE}): ${RUNS} JSON values, ${objects} of them objects, scanned and compared with JSON.parse`);
    expect(objects).toBeGreaterThan(0);
  });

  it("reads member names as JSON.parse does: escapes decoded, the last of a duplicate name wins", () => {
    const text = '{"id":1,"par\\u0061ms":{"a":1},"method":"M","params" : { "b" : [ "}" , "\\"" ] } ,"\\\\":2}';
    const scan = scanCommandText(text);
    if (!scan.ok) throw new Error(scan.problem);
    const params = scan.members.get("params") as { start: number; end: number };
    expect(JSON.parse(text.slice(params.start, params.end))).toEqual((JSON.parse(text) as { params: unknown }).params);
    expect(text.slice(params.start, params.end)).toBe('{ "b" : [ "}" , "\\"" ] }');
    expect(scan.members.get("\\")).toEqual({ start: text.length - 2, end: text.length - 1 });
  });

  it("never calls malformed what JSON.parse accepts, nor accepts a depth past the limit that JSON.parse would build", () => {
    const structural = fc.constantFrom("{", "}", "[", "]", '"', "\\", ",", ":", "1", " ", "a", "\u0000", '"a":');
    let refused = 0;
    fc.assert(
      fc.property(
        fc.array(structural, { maxLength: 40 }).map((parts) => parts.join("")),
        fc.integer({ min: 1, max: 6 }),
        (text, maxDepth) => {
          const scan = scanCommandText(text, maxDepth);
          if (!scan.ok) refused++;
          if (!parses(text)) return;
          const depth = depthOf(JSON.parse(text));
          expect(scan.ok ? "ok" : scan.problem).toBe(depth > maxDepth ? "too_deep" : "ok");
        },
      ),
      { seed: SEED, numRuns: RUNS * 5 },
    );
    expect(refused).toBeGreaterThan(0);
  });

  it("refuses nesting past the limit at the first level too deep, without recursion, however deep the input", () => {
    const deep = `{"id":7,"method":"Browser.getVersion","params":{"x":${nested(4_000_000, "[", "]")}}}`;
    const scan = scanCommandText(deep);
    expect(scan).toMatchObject({ ok: false, problem: "too_deep" });
    // The members complete before the scan stopped are known: a refusal can still name the id.
    expect(scan.members.get("id")).toEqual({ start: 6, end: 7 });
    const objects = `{"params":${nested(300, '{"a":', "}")}}`;
    expect(scanCommandText(objects)).toMatchObject({ ok: false, problem: "too_deep" });
    // Exactly at the limit (the command object being level 1) passes; one more does not.
    expect(scanCommandText(`{"params":${nested(MAX_COMMAND_DEPTH - 1, "[", "]", "")}}`).ok).toBe(true);
    expect(scanCommandText(`{"params":${nested(MAX_COMMAND_DEPTH, "[", "]", "")}}`)).toMatchObject({ ok: false, problem: "too_deep" });
  });

  it("does not count brackets inside strings, escaped quotes included", () => {
    const text = JSON.stringify({ id: 1, method: "M", sessionId: "[".repeat(100_000), params: { s: '\\"{{{{[[[[' } });
    const scan = scanCommandText(text, 3);
    expect(scan.ok).toBe(true);
    expect(scanCommandText('{"a":"\\\\"}').ok).toBe(true);
    expect(scanCommandText('{"a":"\\\\\\"}')).toMatchObject({ ok: false, problem: "malformed" });
  });

  it("calls unclosed strings and brackets that do not match malformed", () => {
    for (const text of ['{"a":"b', "{]", '{"a":[}]', "}", "[[]", '{"id":1', '"'])
      expect(scanCommandText(text), text).toMatchObject({ ok: false, problem: "malformed" });
  });
});
