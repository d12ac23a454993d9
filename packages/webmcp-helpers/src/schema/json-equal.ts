import type { StepBudget } from "./step-budget.js";

/**
 * JSON equality for `enum` and `const`: same type, same numbers (`1` equals `1.0`),
 * arrays element by element, objects key by key whatever their order. It descends only
 * where both sides are containers, so its depth is bounded by the schema's value, never
 * by the input's; every comparison is spent from `budget`.
 */
export function jsonEqual(a: unknown, b: unknown, budget: StepBudget): boolean {
  budget.spend();
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const other = b as unknown[];
    return a.length === other.length && a.every((item, index) => jsonEqual(item, other[index], budget));
  }
  const aKeys = Object.keys(a);
  const bRecord = b as Record<string, unknown>;
  budget.spend(aKeys.length);
  return aKeys.length === Object.keys(bRecord).length && aKeys.every((key) => Object.hasOwn(bRecord, key) && jsonEqual((a as Record<string, unknown>)[key], bRecord[key], budget));
}
