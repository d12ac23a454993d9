import { jsonEqual } from "@browser-service/validators";
import type { InputProblem } from "../errors.js";
import { cleanPageText } from "../untrusted-text.js";
import type { JsonType, JsonValue, SchemaNode } from "./compile-schema.js";
import { jsonPointer } from "./json-pointer.js";
import type { StepBudget } from "./step-budget.js";

/** State of one validation. */
export interface ValidationRun {
  budget: StepBudget;
  /** Where problems go; `undefined` inside `anyOf`/`oneOf`/`not`/`if`, which only ask yes or no. */
  problems: InputProblem[] | undefined;
  maxProblems: number;
}

const typeOf = (value: unknown): Exclude<JsonType, "integer"> =>
  value === null ? "null" : Array.isArray(value) ? "array" : (typeof value as "boolean" | "number" | "string" | "object");

const hasType = (value: unknown, type: JsonType) => (type === "integer" ? typeof value === "number" && Number.isInteger(value) : type === typeOf(value));

// Schema values end up in messages that may reach a model: cleaned and cut like page text.
const quote = (value: unknown) => cleanPageText(JSON.stringify(value) ?? String(value), { maxLength: 120 });

const codePoints = (text: string) => text.length - (text.match(/[\uD800-\uDBFF][\uDC00-\uDFFF]/g)?.length ?? 0);

/**
 * Whether `value` matches `node`, recording each failure (up to `maxProblems`) with the
 * JSON pointer of the value and the keyword. The recursion follows the schema, whose
 * depth `measureSchema` bounded, and every node, property and element visited is spent
 * from the run's budget.
 */
export function validateNode(node: SchemaNode, value: unknown, path: (string | number)[], run: ValidationRun): boolean {
  run.budget.spend();
  let valid = true;
  const fail = (keyword: string, message: string): boolean => {
    valid = false;
    if (run.problems && run.problems.length < run.maxProblems) run.problems.push({ pointer: jsonPointer(path), keyword, message });
    // Answering yes or no, or with the report full, the first failure settles it.
    return run.problems === undefined || run.problems.length >= run.maxProblems;
  };
  const quiet = (sub: SchemaNode) => validateNode(sub, value, path, { ...run, problems: undefined });

  if (node.never) {
    fail("false", "is not allowed here (the schema is false)");
    return false;
  }
  if (node.types && !node.types.some((type) => hasType(value, type))) {
    // The other keywords assume the type; a wrong type is the one problem worth reporting.
    fail("type", `must be ${node.types.join(" or ")}, not ${typeOf(value)}`);
    return false;
  }
  // Each comparison is paid for before it is made, at the most it can cost.
  const equals = (option: JsonValue) => {
    run.budget.spend(option.cost);
    return jsonEqual(option.value, value);
  };
  if (node.enum && !node.enum.some(equals) && fail("enum", `must be one of ${quote(node.enum.map((option) => option.value))}`)) return false;
  if (node.const && !equals(node.const) && fail("const", `must be ${quote(node.const.value)}`)) return false;

  if (typeof value === "number") {
    if (node.minimum !== undefined && value < node.minimum && fail("minimum", `must be at least ${node.minimum}`)) return false;
    if (node.maximum !== undefined && value > node.maximum && fail("maximum", `must be at most ${node.maximum}`)) return false;
    if (node.exclusiveMinimum !== undefined && value <= node.exclusiveMinimum && fail("exclusiveMinimum", `must be more than ${node.exclusiveMinimum}`))
      return false;
    if (node.exclusiveMaximum !== undefined && value >= node.exclusiveMaximum && fail("exclusiveMaximum", `must be less than ${node.exclusiveMaximum}`))
      return false;
  }
  if (typeof value === "string") {
    if (node.minLength !== undefined || node.maxLength !== undefined) {
      const length = codePoints(value);
      if (node.minLength !== undefined && length < node.minLength && fail("minLength", `must have at least ${node.minLength} characters`)) return false;
      if (node.maxLength !== undefined && length > node.maxLength && fail("maxLength", `must have at most ${node.maxLength} characters`)) return false;
    }
    if (node.pattern && !node.pattern.test(value, run.budget) && fail("pattern", `must match the pattern ${quote(node.pattern.source)}`)) return false;
  }
  // A failure inside (an element, a property, an allOf branch) has reported itself.
  const inner = (ok: boolean): boolean => {
    if (!ok) valid = false;
    return !ok && stop(run);
  };
  if (Array.isArray(value) && inner(validateArray(node, value, path, run, fail))) return false;
  if (typeOf(value) === "object" && inner(validateObject(node, value as Record<string, unknown>, path, run, fail))) return false;

  if (node.allOf) for (const sub of node.allOf) if (inner(validateNode(sub, value, path, run))) return false;
  if (node.anyOf && !node.anyOf.some(quiet) && fail("anyOf", "must match at least one anyOf schema")) return false;
  if (node.oneOf) {
    const matched = node.oneOf.filter(quiet).length;
    if (matched !== 1 && fail("oneOf", `must match exactly one oneOf schema, but matches ${matched}`)) return false;
  }
  if (node.not && quiet(node.not) && fail("not", "must not match the not schema")) return false;
  if (node.if) {
    const branch = quiet(node.if) ? node.then : node.else;
    if (branch && inner(validateNode(branch, value, path, run))) return false;
  }
  return valid;
}

type Fail = (keyword: string, message: string) => boolean;

/**
 * Array keywords. False when something failed: its own checks report through `fail`
 * (which also marks the caller invalid), elements report themselves.
 */
function validateArray(node: SchemaNode, value: unknown[], path: (string | number)[], run: ValidationRun, fail: Fail): boolean {
  if (node.minItems !== undefined && value.length < node.minItems && fail("minItems", `must have at least ${node.minItems} items`)) return false;
  if (node.maxItems !== undefined && value.length > node.maxItems && fail("maxItems", `must have at most ${node.maxItems} items`)) return false;
  const prefix = node.prefixItems ?? [];
  let ok = true;
  for (let index = 0; index < value.length; index++) {
    const sub = index < prefix.length ? prefix[index] : node.items;
    if (!sub) continue;
    path.push(index);
    const valid = validateNode(sub, value[index], path, run);
    path.pop();
    if (!valid) {
      ok = false;
      if (stop(run)) return false;
    }
  }
  return ok;
}

/** Object keywords, reporting as {@link validateArray} does. */
function validateObject(node: SchemaNode, value: Record<string, unknown>, path: (string | number)[], run: ValidationRun, fail: Fail): boolean {
  const keys = Object.keys(value);
  run.budget.spend(keys.length);
  if (node.minProperties !== undefined && keys.length < node.minProperties && fail("minProperties", `must have at least ${node.minProperties} properties`))
    return false;
  if (node.maxProperties !== undefined && keys.length > node.maxProperties && fail("maxProperties", `must have at most ${node.maxProperties} properties`))
    return false;
  for (const name of node.required ?? []) {
    if (!Object.hasOwn(value, name) && fail("required", `must have the property ${quote(name)}`)) return false;
  }
  if (!node.properties && !node.patternProperties && !node.additionalProperties) return true;
  let ok = true;
  for (const key of keys) {
    run.budget.spend();
    const declared = node.properties?.get(key);
    const subs = declared ? [declared] : [];
    for (const [pattern, sub] of node.patternProperties ?? []) if (pattern.test(key, run.budget)) subs.push(sub);
    if (subs.length === 0 && node.additionalProperties) {
      // `additionalProperties: false`, the common case, said in words at the object.
      if (node.additionalProperties.never) {
        ok = false;
        if (fail("additionalProperties", `has the property ${quote(key)}, which the schema does not allow`)) return false;
        continue;
      }
      subs.push(node.additionalProperties);
    }
    path.push(key);
    const valid = subs.every((sub) => validateNode(sub, value[key], path, run));
    path.pop();
    if (!valid) {
      ok = false;
      if (stop(run)) return false;
    }
  }
  return ok;
}

/** After a nested failure: stop when only yes or no is asked, or the report is full. */
function stop(run: ValidationRun): boolean {
  return run.problems === undefined || run.problems.length >= run.maxProblems;
}
