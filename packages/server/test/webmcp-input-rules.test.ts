import { describe, expect, it } from "vitest";
import { inputProblems } from "../src/webmcp/input-rules.js";
import { loadSpec } from "./support/spec-error-codes.js";

interface InvokeRequestSchema {
  properties: { input: { "x-property-name-pattern": string } };
}

/** The rule as the bundled spec states it (`WebMcpInvokeRequest.input`'s `x-property-name-pattern`). */
function specPattern(): RegExp {
  const schemas = (loadSpec() as unknown as { components: { schemas: Record<string, InvokeRequestSchema> } }).components.schemas;
  return new RegExp((schemas.WebMcpInvokeRequest as InvokeRequestSchema).properties.input["x-property-name-pattern"], "u");
}

const refusesName = (name: string) => inputProblems({ outer: { [name]: 1 } }).some((problem) => problem.code === "non_ascii_property_name");

describe("the property names of an invocation's input", () => {
  // Each side of ASCII's edge, a character of each UTF-8 length, a pair and an unpaired surrogate.
  const names = ["", "a", "\u0000", "x\u007f", "\u0080", "café", "名前", "😀", "\ud800"];

  it("are refused exactly when the spec's x-property-name-pattern does not match them, at any depth", () => {
    const pattern = specPattern();
    for (const name of names) expect(refusesName(name), JSON.stringify(name)).toBe(!pattern.test(name));
    expect(names.filter(refusesName)).toEqual(["\u0080", "café", "名前", "😀", "\ud800"]);
  });

  it("may hold any character in their string values", () => {
    expect(inputProblems({ note: "café 名前 😀 \u0080" })).toEqual([]);
  });
});
