import { UnsafeSchemaError } from "../errors.js";
import { SafePattern } from "../regex/safe-pattern.js";
import { cleanPageText } from "../untrusted-text.js";
import { jsonPointer } from "./json-pointer.js";
import type { SchemaLimits } from "./limits.js";

/** A JSON type name as JSON Schema's `type` uses it. */
export type JsonType = "null" | "boolean" | "object" | "array" | "number" | "integer" | "string";

/**
 * A schema compiled into plain data for the interpreter: keywords read and checked once,
 * patterns turned into automata. Nothing here is code made from the schema.
 */
export interface SchemaNode {
  /** The `false` schema: nothing matches. */
  never?: true;
  types?: readonly JsonType[];
  enum?: readonly JsonValue[];
  const?: JsonValue;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: SafePattern;
  properties?: ReadonlyMap<string, SchemaNode>;
  patternProperties?: readonly (readonly [SafePattern, SchemaNode])[];
  additionalProperties?: SchemaNode;
  required?: readonly string[];
  minProperties?: number;
  maxProperties?: number;
  prefixItems?: readonly SchemaNode[];
  /** Applies to every element after `prefixItems`. */
  items?: SchemaNode;
  minItems?: number;
  maxItems?: number;
  allOf?: readonly SchemaNode[];
  anyOf?: readonly SchemaNode[];
  oneOf?: readonly SchemaNode[];
  not?: SchemaNode;
  if?: SchemaNode;
  then?: SchemaNode;
  else?: SchemaNode;
}

/**
 * A value of the schema (an `enum` option, the `const`) and what comparing with it may
 * cost: its number of values, which `jsonEqual` walks at most (it walks the schema's side).
 */
export interface JsonValue {
  value: unknown;
  cost: number;
}

/** How many values `value` holds (itself included); finite, as `measureSchema` bounded the schema. */
function sizeOf(value: unknown): number {
  if (typeof value !== "object" || value === null) return 1;
  let size = 1;
  for (const item of Array.isArray(value) ? value : Object.values(value)) size += sizeOf(item);
  return size;
}

const jsonValue = (value: unknown): JsonValue => ({ value, cost: sizeOf(value) });

const jsonTypes: readonly string[] = ["null", "boolean", "object", "array", "number", "integer", "string"];
const numberKeywords = ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] as const;
const countKeywords = ["minLength", "maxLength", "minProperties", "maxProperties", "minItems", "maxItems"] as const;
const listKeywords = ["allOf", "anyOf", "oneOf"] as const;
const singleKeywords = ["not", "if", "then", "else"] as const;

type PatternLimits = Pick<SchemaLimits, "maxPatternLength" | "maxPatternStates" | "maxPatternInputLength">;

/**
 * Compiles a schema that `measureSchema` already accepted. Keywords it knows must have
 * the type JSON Schema gives them, or the schema is refused (`schema_invalid`) rather
 * than half-applied; keywords it does not know (`format`, `$ref`, `uniqueItems`,
 * `multipleOf`, annotations) are ignored, which can only make it accept more.
 */
export function compileSchema(schema: unknown, limits: PatternLimits): SchemaNode {
  return compileAt(schema, [], limits);
}

function compileAt(schema: unknown, path: (string | number)[], limits: PatternLimits): SchemaNode {
  const refuse = (keyword: string, expected: string): never => {
    const pointer = jsonPointer([...path, keyword]);
    throw new UnsafeSchemaError(
      "schema_invalid",
      `The tool's input_schema has ${keyword} at ${cleanPageText(pointer, { maxLength: 200 })} that is not ${expected}; it is refused, and the tool was not invoked.`,
      pointer,
    );
  };
  if (schema === true) return {};
  if (schema === false) return { never: true };
  if (typeof schema !== "object" || schema === null || Array.isArray(schema)) {
    const pointer = jsonPointer(path);
    throw new UnsafeSchemaError(
      "schema_invalid",
      `The tool's input_schema at ${cleanPageText(pointer || "/", { maxLength: 200 })} is not an object or a boolean; it is refused, and the tool was not invoked.`,
      pointer,
    );
  }
  const raw = schema as Record<string, unknown>;
  const has = (keyword: string) => Object.hasOwn(raw, keyword);
  const sub = (value: unknown, ...keys: (string | number)[]) => compileAt(value, [...path, ...keys], limits);
  const pattern = (source: string, ...keys: string[]) => new SafePattern(source, limits, jsonPointer([...path, ...keys]));
  const node: SchemaNode = {};

  if (has("type")) {
    const types = Array.isArray(raw.type) ? raw.type : [raw.type];
    if (!types.every((type) => typeof type === "string" && jsonTypes.includes(type))) refuse("type", `a JSON type name or a list of them`);
    node.types = types as JsonType[];
  }
  if (has("enum")) {
    if (!Array.isArray(raw.enum)) refuse("enum", "an array");
    node.enum = (raw.enum as unknown[]).map(jsonValue);
  }
  if (has("const")) node.const = jsonValue(raw.const);

  for (const keyword of numberKeywords) {
    if (!has(keyword)) continue;
    const value = raw[keyword];
    // Draft 4's boolean exclusiveMinimum/exclusiveMaximum turns minimum/maximum exclusive.
    if (typeof value === "boolean" && keyword.startsWith("exclusive")) continue;
    if (typeof value !== "number") refuse(keyword, "a number");
    node[keyword] = value as number;
  }
  for (const [exclusive, bound] of [
    ["exclusiveMinimum", "minimum"],
    ["exclusiveMaximum", "maximum"],
  ] as const) {
    if (raw[exclusive] === true && node[bound] !== undefined) {
      node[exclusive] = node[bound];
      delete node[bound];
    }
  }
  for (const keyword of countKeywords) {
    if (!has(keyword)) continue;
    const value = raw[keyword];
    if (typeof value !== "number" || !Number.isInteger(value) || value < 0) refuse(keyword, "a non-negative integer");
    node[keyword] = value as number;
  }
  if (has("pattern")) {
    if (typeof raw.pattern !== "string") refuse("pattern", "a string");
    node.pattern = pattern(raw.pattern as string, "pattern");
  }

  if (has("properties")) {
    const properties = raw.properties;
    if (typeof properties !== "object" || properties === null || Array.isArray(properties)) refuse("properties", "an object");
    node.properties = new Map(Object.entries(properties as object).map(([name, value]) => [name, sub(value, "properties", name)]));
  }
  if (has("patternProperties")) {
    const patterns = raw.patternProperties;
    if (typeof patterns !== "object" || patterns === null || Array.isArray(patterns)) refuse("patternProperties", "an object");
    node.patternProperties = Object.entries(patterns as object).map(
      ([source, value]) => [pattern(source, "patternProperties", source), sub(value, "patternProperties", source)] as const,
    );
  }
  if (has("additionalProperties")) node.additionalProperties = sub(raw.additionalProperties, "additionalProperties");
  if (has("required")) {
    if (!Array.isArray(raw.required) || !raw.required.every((name) => typeof name === "string")) refuse("required", "an array of property names");
    node.required = raw.required as string[];
  }

  // Draft 2020-12: prefixItems + items. Earlier drafts: items as an array + additionalItems.
  if (Array.isArray(raw.items)) {
    node.prefixItems = raw.items.map((item, index) => sub(item, "items", index));
    if (has("additionalItems")) node.items = sub(raw.additionalItems, "additionalItems");
  } else {
    if (has("prefixItems")) {
      if (!Array.isArray(raw.prefixItems)) refuse("prefixItems", "an array of schemas");
      node.prefixItems = (raw.prefixItems as unknown[]).map((item, index) => sub(item, "prefixItems", index));
    }
    if (has("items")) node.items = sub(raw.items, "items");
  }

  for (const keyword of listKeywords) {
    if (!has(keyword)) continue;
    const list = raw[keyword];
    if (!Array.isArray(list) || list.length === 0) refuse(keyword, "a non-empty array of schemas");
    node[keyword] = (list as unknown[]).map((item, index) => sub(item, keyword, index));
  }
  for (const keyword of singleKeywords) if (has(keyword)) node[keyword] = sub(raw[keyword], keyword);
  return node;
}
