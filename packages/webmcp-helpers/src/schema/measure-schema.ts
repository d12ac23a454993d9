import { UnsafeSchemaError } from "../errors.js";
import { cleanPageText } from "../untrusted-text.js";
import { jsonPointer } from "./json-pointer.js";
import type { SchemaLimits } from "./limits.js";

type Budget = Pick<SchemaLimits, "maxSchemaBytes" | "maxSchemaNodes" | "maxSchemaDepth">;

/**
 * Walks a page-provided schema (every value, unknown keywords included) and throws
 * `UnsafeSchemaError` as soon as it passes a budget: `schema_too_many_nodes`,
 * `schema_too_deep` or `schema_too_large` (its estimated JSON length). The walk stops at
 * the first value over budget, so a schema of a million properties costs as much as one
 * just over the limit, and recursion never goes deeper than `maxSchemaDepth`.
 */
export function measureSchema(schema: unknown, limits: Budget): void {
  let nodes = 0;
  let bytes = 0;
  const path: (string | number)[] = [];
  const refuse = (code: string, what: string): never => {
    const pointer = jsonPointer(path);
    throw new UnsafeSchemaError(
      code,
      `The tool's input_schema ${what}, at ${cleanPageText(pointer || "/", { maxLength: 200 })}; it is refused before any validation, and the tool was not invoked.`,
      pointer,
    );
  };
  const visit = (value: unknown, depth: number): void => {
    if (++nodes > limits.maxSchemaNodes) refuse("schema_too_many_nodes", `has more than ${limits.maxSchemaNodes} values (maxSchemaNodes)`);
    bytes += typeof value === "string" ? value.length + 2 : typeof value === "object" && value !== null ? 2 : String(value).length;
    if (bytes > limits.maxSchemaBytes) refuse("schema_too_large", `is larger than ${limits.maxSchemaBytes} bytes (maxSchemaBytes)`);
    if (typeof value !== "object" || value === null) return;
    if (depth >= limits.maxSchemaDepth) refuse("schema_too_deep", `nests deeper than ${limits.maxSchemaDepth} levels (maxSchemaDepth)`);
    if (Array.isArray(value)) {
      const length = value.length;
      for (let index = 0; index < length; index++) {
        path.push(index);
        bytes += 1;
        visit(value[index], depth + 1);
        path.pop();
      }
      return;
    }
    // for…in stops where the budget does; Object.keys would first list every key.
    for (const key in value) {
      path.push(key);
      bytes += key.length + 3;
      visit((value as Record<string, unknown>)[key], depth + 1);
      path.pop();
    }
  };
  visit(schema, 0);
}
