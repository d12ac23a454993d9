import { describe, expect, it } from "vitest";
import { mcpInputSchema } from "../../src/index.js";

const permissive = { type: "object", additionalProperties: true };

describe("mcpInputSchema", () => {
  it("shows a safe object schema as the page wrote it", () => {
    const schema = { type: "object", properties: { q: { type: "string", minLength: 1, description: "What to look for" } }, required: ["q"] };
    expect(mcpInputSchema(schema)).toEqual({ schema, withheld: undefined });
  });

  it.each([
    ["no schema at all", {}, "root is not"],
    ["a root that is not an object schema", { type: "string" }, "root is not"],
    ["a root with a type list", { type: ["object", "null"] }, "root is not"],
    ["an array", [], "not a JSON object"],
    ["a $ref a client might fetch", { type: "object", properties: { q: { $ref: "https://evil.example/schema.json" } } }, "`$` keyword"],
    ["a $schema", { $schema: "https://json-schema.org/draft/2020-12/schema", type: "object" }, "`$` keyword"],
    ["a pattern the safe validator refuses", { type: "object", properties: { q: { type: "string", pattern: "^(a+)+\\1$" } } }, "refuses it (pattern_unsupported)"],
    ["a schema over the node budget", { type: "object", properties: { q: { enum: new Array(20_000).fill(0) } } }, "refuses it (schema_too_many_nodes)"],
  ])("withholds %s behind a permissive object schema", (_, schema, reason) => {
    const shown = mcpInputSchema(schema);
    expect(shown.schema).toEqual(permissive);
    expect(shown.withheld).toContain(reason);
  });
});
