import { limits } from "@browser-service/types";

/**
 * Bounds on the work the safe validator does for one page-provided schema and one input.
 * Every bound is checked as the work happens, so a hostile schema costs at most the
 * bound, never the schema's size.
 */
export interface SchemaLimits {
  /**
   * Largest schema, estimated as its JSON length (strings, keys, punctuation). Default
   * 65536 (64 KiB), the service's own limit: it lists no tool with a larger schema.
   */
  maxSchemaBytes: number;
  /** Most values (objects, arrays, strings, numbers, ...) in the schema, counted before compiling. Default 10000. */
  maxSchemaNodes: number;
  /** Deepest nesting of objects and arrays in the schema. Default 64. */
  maxSchemaDepth: number;
  /** Longest `pattern` (and `patternProperties` key), in UTF-16 units. Default 512. */
  maxPatternLength: number;
  /** Most matcher states one pattern may expand to (`a{1000}` is 1000). Default 4096. */
  maxPatternStates: number;
  /** Longest string tested against a pattern, in UTF-16 units. Default 65536. */
  maxPatternInputLength: number;
  /** Most steps one validation may take, pattern matching included. Default 10000000. */
  maxSteps: number;
  /** Problems collected before validation stops. Default 20. */
  maxProblems: number;
}

/** The limits used when none are given. */
export const defaultSchemaLimits: Readonly<SchemaLimits> = Object.freeze({
  maxSchemaBytes: limits.schemas.WebMcpTool.input_schema.maxBytes,
  maxSchemaNodes: 10_000,
  maxSchemaDepth: 64,
  maxPatternLength: 512,
  maxPatternStates: 4096,
  maxPatternInputLength: 65_536,
  maxSteps: 10_000_000,
  maxProblems: 20,
});
