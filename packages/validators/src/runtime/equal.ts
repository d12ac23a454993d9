/**
 * Deep equality of JSON values, as JSON Schema compares them for `const`, `enum` and
 * `uniqueItems`: same primitive, or arrays with equal items in order, or objects with
 * the same keys and equal values in any order. It descends only where both sides are
 * containers and walks the keys of `a`, so comparing with a small `a` costs about the
 * size of `a` whatever `b` holds (the WebMCP helpers charge that size to their step
 * budget before calling it with a schema's value as `a`).
 */
export function equal(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, i) => equal(item, b[i]));
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  return keys.length === Object.keys(right).length && keys.every((key) => Object.hasOwn(right, key) && equal(left[key], right[key]));
}
