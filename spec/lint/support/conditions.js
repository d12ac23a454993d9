// Whether an inline subschema sits under a conditional keyword (`if`, `not`, ...).

/** Keys whose children are names, not JSON Schema keywords, in a JSON pointer. */
const NAME_MAPS = new Set([
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
  "schemas",
  "headers",
  "responses",
  "parameters",
  "content",
  "examples",
  "links",
  "callbacks",
  "requestBodies",
  "securitySchemes",
  "pathItems",
  "paths",
  "webhooks",
  "encoding",
  "variables",
  "mapping",
]);
/** The keywords whose subschemas are conditions, not the shape of the value itself. */
const CONDITION_KEYWORDS = new Set(["if", "then", "else", "not", "contains", "propertyNames", "dependentSchemas"]);

/** The innermost conditional keyword (`if`, `then`, `not`, ...) that an inline subschema sits under, if any. */
export function conditionKeyword(location) {
  const segments = String(location?.pointer ?? "")
    .replace(/^#\/?/, "")
    .split("/")
    .filter(Boolean);
  let found;
  segments.forEach((segment, i) => {
    if (i > 0 && NAME_MAPS.has(segments[i - 1])) return; // a property or component name
    if (CONDITION_KEYWORDS.has(segment)) found = segment;
  });
  return found;
}
