// Reading the resolved document: plain-object checks, `$ref`s and locations.

/** A plain object (not `null`, not an array). */
export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A `$ref` node not yet resolved. */
export function isRef(value) {
  return isObject(value) && typeof value.$ref === "string";
}

/** A string with more than whitespace. */
export function nonEmptyString(value) {
  return typeof value === "string" && value.trim() !== "";
}

/** One string per place in the document (file and JSON pointer), to compare locations. */
export function locationKey(location) {
  return `${location?.source?.absoluteRef ?? ""}${location?.pointer ?? ""}`;
}

/**
 * Follows `$ref`s from `node` (found at `location`) to the target node. `ctx.resolve`
 * only resolves relative to a file, so the file of each hop is passed on explicitly:
 * a ref inside a referenced file is relative to that file.
 * Returns the target, its location and the names of the refs followed.
 */
export function deref(ctx, node, location) {
  const refs = [];
  let current = node;
  let where = location;
  for (let hop = 0; hop < 20 && isRef(current); hop++) {
    refs.push(current.$ref);
    const resolved = ctx.resolve(current, where?.source?.absoluteRef);
    if (resolved.node === undefined || !resolved.location) return { node: undefined, location: where, refs };
    current = resolved.node;
    where = resolved.location;
  }
  return { node: current, location: where, refs };
}

/** The name a `$ref` points at: the last JSON pointer segment, or the file's base name. */
export function refTargetName(ref) {
  const [file, pointer = ""] = ref.split("#");
  const segments = pointer.split("/").filter(Boolean);
  if (segments.length > 0) return segments[segments.length - 1].replace(/~1/g, "/").replace(/~0/g, "~");
  const base = file.split("/").pop() ?? "";
  return base.replace(/\.(ya?ml|json)$/i, "");
}
