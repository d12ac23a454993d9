import { describe, expect, it } from "vitest";
import { compileInputSchema, defaultSchemaLimits, UnsafeSchemaError } from "../../src/index.js";

const check = (schema: unknown, input: unknown) => compileInputSchema(schema).validate(input);
const valid = (schema: unknown, input: unknown) => check(schema, input).valid;

/** Wraps a value so that every property read, at any depth, is counted: the measure of work done. */
function counted<T extends object>(value: T): { proxy: T; reads: () => number } {
  let reads = 0;
  const wrap = (target: object): object =>
    new Proxy(target, {
      get(object, key, receiver) {
        reads++;
        const inner = Reflect.get(object, key, receiver) as unknown;
        return typeof inner === "object" && inner !== null ? wrap(inner) : inner;
      },
    });
  return { proxy: wrap(value) as T, reads: () => reads };
}

describe("keywords", () => {
  it("type: each JSON type, integer inside number, and lists of types", () => {
    expect(valid({ type: "integer" }, 3)).toBe(true);
    expect(valid({ type: "integer" }, 3.5)).toBe(false);
    expect(valid({ type: "number" }, 3)).toBe(true);
    expect(valid({ type: "string" }, 3)).toBe(false);
    expect(valid({ type: "null" }, null)).toBe(true);
    expect(valid({ type: "object" }, [])).toBe(false);
    expect(valid({ type: "array" }, [])).toBe(true);
    expect(valid({ type: "boolean" }, false)).toBe(true);
    expect(valid({ type: ["string", "null"] }, null)).toBe(true);
    expect(check({ type: ["string", "null"] }, 1).problems).toEqual([{ pointer: "", keyword: "type", message: "must be string or null, not number" }]);
  });

  it("enum and const compare JSON values, whatever the key order", () => {
    expect(valid({ enum: ["S", "M", { size: "L", fit: "slim" }] }, { fit: "slim", size: "L" })).toBe(true);
    expect(valid({ enum: ["S", "M"] }, "L")).toBe(false);
    expect(valid({ const: [1, { a: null }] }, [1.0, { a: null }])).toBe(true);
    expect(valid({ const: [1, { a: null }] }, [1, { a: null, b: 1 }])).toBe(false);
    expect(valid({ const: { a: 1 } }, { b: 1 })).toBe(false);
  });

  it("pays for each enum and const comparison with the size of the schema's value", () => {
    // One option of 1,001 values, compared with each of 100 elements: over 100,000 steps,
    // and as many when an element differs early (the comparison is paid before it is made).
    const option = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
    const schema = { type: "array", items: { enum: [option] } };
    const same = Array.from({ length: 100 }, () => ({ ...option }));
    const result = compileInputSchema(schema, { maxSteps: 1_000_000 }).validate(same);
    expect(result.valid).toBe(true);
    expect(result.steps).toBeGreaterThan(100_000);
    const differing = Array.from({ length: 100 }, () => ({ ...option, k0: -1 }));
    expect(() => compileInputSchema(schema, { maxSteps: 50_000, maxProblems: 100 }).validate(differing)).toThrow(
      expect.objectContaining({ code: "validation_steps_exceeded" }),
    );
  });

  it("numeric bounds, draft 4's boolean exclusive bounds included", () => {
    expect(valid({ minimum: 1, maximum: 3 }, 3)).toBe(true);
    expect(valid({ exclusiveMaximum: 3 }, 3)).toBe(false);
    expect(valid({ exclusiveMinimum: 1 }, 1.01)).toBe(true);
    expect(valid({ minimum: 1, exclusiveMinimum: true }, 1)).toBe(false);
    expect(valid({ maximum: 5, exclusiveMaximum: false }, 5)).toBe(true);
    expect(valid({ minimum: 10 }, "5")).toBe(true);
  });

  it("string lengths count code points, as JSON Schema does", () => {
    expect(valid({ maxLength: 2 }, "😀😀")).toBe(true);
    expect(valid({ minLength: 3 }, "😀😀")).toBe(false);
  });

  it("properties, required, additionalProperties (false and a schema), and property counts", () => {
    const schema = {
      type: "object",
      properties: { sku: { type: "string" }, qty: { type: "integer", minimum: 1 } },
      required: ["sku"],
      additionalProperties: { type: "boolean" },
      maxProperties: 3,
    };
    expect(valid(schema, { sku: "A1", qty: 2, gift: true })).toBe(true);
    expect(check(schema, { qty: 0, gift: "yes" }).problems).toEqual([
      { pointer: "", keyword: "required", message: 'must have the property "sku"' },
      { pointer: "/qty", keyword: "minimum", message: "must be at least 1" },
      { pointer: "/gift", keyword: "type", message: "must be boolean, not string" },
    ]);
    expect(check({ additionalProperties: false, properties: { a: {} } }, { a: 1, "b/c~": 2 }).problems).toEqual([
      { pointer: "", keyword: "additionalProperties", message: 'has the property "b/c~", which the schema does not allow' },
    ]);
    expect(check({ minProperties: 1 }, {}).problems[0]?.keyword).toBe("minProperties");
  });

  it("items, prefixItems and the older items-array form, with item counts", () => {
    expect(check({ items: { type: "integer" }, maxItems: 3 }, [1, "x", 3, 4]).problems).toEqual([
      { pointer: "", keyword: "maxItems", message: "must have at most 3 items" },
      { pointer: "/1", keyword: "type", message: "must be integer, not string" },
    ]);
    expect(valid({ prefixItems: [{ type: "string" }], items: { type: "number" } }, ["a", 1, 2])).toBe(true);
    expect(valid({ prefixItems: [{ type: "string" }], items: false }, ["a", 1])).toBe(false);
    expect(valid({ items: [{ type: "string" }], additionalItems: false }, ["a", 1])).toBe(false);
    expect(valid({ items: [{ type: "string" }] }, ["a", 1])).toBe(true);
    expect(valid({ minItems: 2 }, [1])).toBe(false);
  });

  it("allOf, anyOf, oneOf, not and if/then/else", () => {
    expect(valid({ allOf: [{ type: "string" }, { minLength: 2 }] }, "ab")).toBe(true);
    expect(check({ allOf: [{ type: "string" }, { minLength: 2 }] }, "a").problems).toEqual([
      { pointer: "", keyword: "minLength", message: "must have at least 2 characters" },
    ]);
    expect(valid({ anyOf: [{ type: "string" }, { type: "number" }] }, true)).toBe(false);
    expect(check({ oneOf: [{ type: "number" }, { type: "integer" }] }, 1).problems[0]?.message).toBe("must match exactly one oneOf schema, but matches 2");
    expect(valid({ oneOf: [{ type: "number" }, { type: "string" }] }, 1)).toBe(true);
    expect(valid({ not: { const: "admin" } }, "admin")).toBe(false);
    const conditional = { if: { properties: { kind: { const: "card" } } }, then: { required: ["number"] }, else: { required: ["iban"] } };
    expect(valid(conditional, { kind: "card", number: "4111" })).toBe(true);
    expect(valid(conditional, { kind: "card" })).toBe(false);
    expect(valid(conditional, { kind: "bank" })).toBe(false);
  });

  it("boolean schemas, and unknown keywords ignored (format, $ref, uniqueItems)", () => {
    expect(valid(true, { anything: 1 })).toBe(true);
    expect(valid(false, 1)).toBe(false);
    expect(valid({ properties: { a: false } }, { a: 1 })).toBe(false);
    expect(valid({ type: "string", format: "email" }, "not an email")).toBe(true);
    expect(valid({ $ref: "#/$defs/x", $defs: { x: { type: "number" } } }, "a string")).toBe(true);
    expect(valid({ uniqueItems: true }, [1, 1])).toBe(true);
  });

  it("escapes JSON pointers and stops at maxProblems", () => {
    expect(check({ properties: { "a/b": { properties: { "c~d": { type: "string" } } } } }, { "a/b": { "c~d": 1 } }).problems[0]?.pointer).toBe("/a~1b/c~0d");
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${i}`, { type: "string" }]));
    const input = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`p${i}`, i]));
    expect(compileInputSchema({ properties: many }).validate(input).problems).toHaveLength(defaultSchemaLimits.maxProblems);
    expect(compileInputSchema({ properties: many }, { maxProblems: 3 }).validate(input).problems).toHaveLength(3);
  });

  it("refuses keywords of the wrong type (schema_invalid) instead of half-applying them", () => {
    for (const [schema, pointer] of [
      [{ type: "any" }, "/type"],
      [{ required: true }, "/required"],
      [{ properties: { a: { minLength: -1 } } }, "/properties/a/minLength"],
      [{ anyOf: [] }, "/anyOf"],
      [{ items: [1] }, "/items/0"],
      [{ pattern: 5 }, "/pattern"],
      [[], ""],
    ] as const) {
      expect(() => compileInputSchema(schema)).toThrow(expect.objectContaining({ name: "UnsafeSchemaError", code: "schema_invalid", schemaPointer: pointer }));
    }
  });
});

describe("budgets for page schemas", () => {
  it("refuses a schema with too many values after reading no more than the budget", () => {
    const huge = { type: "object", properties: { size: { enum: Array.from({ length: 1_000_000 }, (_, i) => i) } } };
    const { proxy, reads } = counted(huge);
    expect(() => compileInputSchema(proxy)).toThrow(
      expect.objectContaining({ code: "schema_too_many_nodes", schemaPointer: `/properties/size/enum/${defaultSchemaLimits.maxSchemaNodes - 5}` }),
    );
    // One read per value walked: the walk stopped at the budget, not at a million.
    expect(reads()).toBeLessThanOrEqual(defaultSchemaLimits.maxSchemaNodes + 1);
  });

  it("refuses a schema nested deeper than the budget without recursing further", () => {
    let deep: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 100_000; level++) deep = { not: deep };
    const { proxy, reads } = counted(deep);
    const error = (() => {
      try {
        compileInputSchema(proxy);
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(UnsafeSchemaError);
    expect(error).toMatchObject({ code: "schema_too_deep", schemaPointer: "/not".repeat(defaultSchemaLimits.maxSchemaDepth) });
    expect(reads()).toBeLessThanOrEqual(defaultSchemaLimits.maxSchemaDepth + 1);
  });

  it("refuses a schema larger than maxSchemaBytes, even in keywords it ignores", () => {
    const { proxy, reads } = counted({ type: "object", description: "x".repeat(10_000_000) });
    expect(() => compileInputSchema(proxy)).toThrow(expect.objectContaining({ code: "schema_too_large", schemaPointer: "/description" }));
    expect(reads()).toBe(2);
    expect(() => compileInputSchema({ description: "x".repeat(1000) }, { maxSchemaBytes: 500 })).toThrow(expect.objectContaining({ code: "schema_too_large" }));
  });

  it("accepts the schemas pages register, such as a declarative form's", () => {
    const form = {
      type: "object",
      properties: { item: { type: "string" }, size: { type: "string", enum: ["S", "L"] }, gift: { type: "boolean" } },
      required: ["item"],
    };
    expect(check(form, { item: "teapot", size: "L", gift: true })).toEqual({ valid: true, problems: [], steps: expect.any(Number) });
  });
});
