import { escapePointerSegment, reachablePaths, resolvePointer, walkSchema } from "./validators-schema.mjs";

// What the runtime needs to turn Ajv's errors for `oneOf`, `anyOf`, `if` and `not` into
// sentences: which errors belong to which alternative or branch (by schema path), and
// what a condition says. Keyed by the schema path of the keyword, as in Ajv's errors.

const isObject = (node) => node !== null && typeof node === "object" && !Array.isArray(node);

/** A `{ type: "null" }` alternative, the second half of a nullable reference. */
const isNullOnly = (schema) =>
  isObject(schema) && Object.keys(schema).length === 1 && (schema.type === "null" || (schema.type?.length === 1 && schema.type[0] === "null"));

/** A closed object with required keys: one alternative of an "exactly one of" shape. */
const isClosedObject = (schema) => isObject(schema) && schema.additionalProperties === false && isObject(schema.properties) && schema.required?.length > 0;

/** The schema an alternative stands for: the target of a bare `$ref`, or itself. */
const target = (document, schema) =>
  isObject(schema) && typeof schema.$ref === "string" && Object.keys(schema).length === 1 ? resolvePointer(document, schema.$ref) : schema;

/**
 * `oneOf`/`anyOf`: each alternative's schema paths, and the shape of the whole:
 * `exactlyOne` (a `oneOf` of closed objects, with each one's required keys), `nullable`
 * (something or `null`) or `other`.
 */
function alternativesHint(document, keyword, alternatives, path) {
  const branches = alternatives.map((alternative, i) => {
    const described = target(document, alternative);
    return {
      paths: reachablePaths(document, alternative, `${path}/${i}`),
      ...(isNullOnly(described) && { isNull: true }),
      ...(isClosedObject(described) && { required: described.required }),
    };
  });
  if (keyword === "oneOf" && branches.length > 1 && branches.every((b) => b.required)) {
    return { kind: keyword, shape: "exactlyOne", branches };
  }
  const nullable = branches.length === 2 && branches.filter((b) => b.isNull).length === 1;
  return { kind: keyword, shape: nullable ? "nullable" : "other", branches: branches.map(({ required: _r, ...b }) => b) };
}

/** The condition of a leaf: `is "FAILED"`, `is null`; `true` for a schema that accepts anything; undefined otherwise. */
function leafCondition(schema) {
  if (schema === true || (isObject(schema) && Object.keys(schema).length === 0)) return true;
  if (!isObject(schema)) return undefined;
  const keys = Object.keys(schema).filter((k) => k !== "type");
  if (keys.length === 0 && isNullOnly(schema)) return "is null";
  if (keys.length !== 1) return undefined;
  if (keys[0] === "const") return `is ${JSON.stringify(schema.const)}`;
  if (keys[0] === "enum") return `is one of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  return undefined;
}

/**
 * A condition on an object (an `if` or a `not`) as clauses `{ pointer, condition? }`,
 * relative to the object (a clause without `condition` means "is present"); `null` when
 * the schema says more than required properties and property values.
 */
function clausesOf(schema, base = "", whenPresent = false) {
  if (leafCondition(schema) === true) return [];
  if (!isObject(schema)) return null;
  const describable = ["additionalProperties", "properties", "required", "type"];
  if (Object.keys(schema).some((k) => !describable.includes(k))) return null;
  if ((schema.additionalProperties ?? true) !== true || (schema.type ?? "object") !== "object") return null;
  const required = schema.required ?? [];
  const properties = schema.properties ?? {};
  const clauses = required.filter((key) => !(key in properties)).map((key) => ({ pointer: `${base}/${escapePointerSegment(key)}` }));
  for (const [key, sub] of Object.entries(properties)) {
    const pointer = `${base}/${escapePointerSegment(key)}`;
    // A property's schema also holds when the property is missing, unless it is required.
    const orMissing = whenPresent || !required.includes(key);
    const leaf = leafCondition(sub);
    if (leaf === true) {
      if (!orMissing) clauses.push({ pointer });
    } else if (leaf) {
      clauses.push({ pointer, condition: orMissing ? `${leaf} or missing` : leaf });
    } else {
      const nested = clausesOf(sub, pointer, orMissing);
      if (nested === null) return null;
      clauses.push(...nested);
    }
  }
  return clauses;
}

/**
 * What a `not` forbids of the value itself when it is one rule (`pattern`, `const` or
 * `enum`, with or without `type`), as the end of a sentence: `must not match the pattern
 * ^brw_[a-z0-9]{24}$`. Undefined for anything else, which is told by its clauses.
 */
function forbiddenValue(schema) {
  if (!isObject(schema)) return undefined;
  const keys = Object.keys(schema).filter((k) => k !== "type");
  if (keys.length !== 1) return undefined;
  if (keys[0] === "pattern") return `must not match the pattern ${schema.pattern}`;
  if (keys[0] === "const") return `must not be ${JSON.stringify(schema.const)}`;
  if (keys[0] === "enum") return `must not be any of ${schema.enum.map((v) => JSON.stringify(v)).join(", ")}`;
  return undefined;
}

/** `not`: the clauses of its condition, or what it forbids of the value itself. */
function forbiddenHint(schema) {
  const expected = forbiddenValue(schema);
  return expected === undefined ? { kind: "not", clauses: clausesOf(schema) } : { kind: "not", clauses: null, expected };
}

/** `if`: its condition, and the schema paths of its `then` and `else` branches. */
const conditionHint = (document, node, path) => ({
  kind: "if",
  when: clausesOf(node.if),
  then: node.then === undefined ? [] : reachablePaths(document, node.then, `${path}/then`),
  else: node.else === undefined ? [] : reachablePaths(document, node.else, `${path}/else`),
});

/** The hints for every `oneOf`, `anyOf`, `if` (with `then` or `else`) and `not` in the compiled schemas, by schema path. */
export function collectHints(document, schemas) {
  const hints = new Map();
  for (const [base, schema] of schemas) {
    walkSchema(schema, base, (node, path) => {
      for (const keyword of ["anyOf", "oneOf"]) {
        if (Array.isArray(node[keyword])) hints.set(`${path}/${keyword}`, alternativesHint(document, keyword, node[keyword], `${path}/${keyword}`));
      }
      if ("if" in node && ("then" in node || "else" in node)) hints.set(`${path}/if`, conditionHint(document, node, path));
      if ("not" in node) hints.set(`${path}/not`, forbiddenHint(node.not));
    });
  }
  return new Map([...hints].sort(([a], [b]) => (a < b ? -1 : 1)));
}
