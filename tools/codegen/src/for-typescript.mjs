import { deref } from "./document.mjs";

const isClosedObject = (schema) => schema && typeof schema === "object" && schema.additionalProperties === false && schema.properties;

const isNotAnything = (node) => node && typeof node === "object" && node.not && typeof node.not === "object" && Object.keys(node.not).length === 0;

/**
 * Returns a copy of the document that says the same in JSON Schema but reads better as
 * TypeScript. A property that accepts nothing (`not: {}`, as for the deprecated
 * `max_pooled_sessions`) becomes `false`, which openapi-typescript emits as `?: never`.
 Each
 * alternative of an "exactly one of" `oneOf` (all alternatives closed objects) also
 * forbids the other alternatives' keys with `false` schemas: they were forbidden already,
 * but now TypeScript sees `key?: never` and rejects an object literal that carries two
 * alternatives' keys at once (not needed, and not done, for a `oneOf` with a
 * `discriminator`, whose alternatives each fix the discriminating property).
 */
export function forTypeScript(document) {
  const copy = structuredClone(document);
  const visit = (node) => {
    if (!node || typeof node !== "object") return;
    // A `oneOf` with a discriminator is exclusive by its discriminator's value already:
    // its alternatives stay references (`A | B | C`).
    if (Array.isArray(node.oneOf) && !node.discriminator) {
      const alternatives = node.oneOf.map((alt) => deref(copy, alt));
      if (alternatives.length > 1 && alternatives.every(isClosedObject)) {
        const allKeys = new Set(alternatives.flatMap((alt) => Object.keys(alt.properties)));
        node.oneOf = alternatives.map((alt) => {
          const forbidden = [...allKeys].filter((key) => !(key in alt.properties)).map((key) => [key, false]);
          return { ...alt, properties: { ...alt.properties, ...Object.fromEntries(forbidden) } };
        });
      }
    }
    if (node.properties && typeof node.properties === "object") {
      for (const [key, value] of Object.entries(node.properties)) if (isNotAnything(value)) node.properties[key] = false;
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(copy);
  return copy;
}
