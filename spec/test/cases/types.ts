/** One row of the spec's rule table: a value and whether a schema must accept it. */
export interface SchemaCase {
  /** JSON pointer into the bundled document, e.g. `#/components/schemas/Region`. */
  readonly schema: string;
  /** The rule the row exercises, as a short phrase (`exactly one of: two keys`). */
  readonly rule: string;
  /** The value checked against the schema. */
  readonly value: unknown;
  /** Whether the schema must accept the value. */
  readonly valid: boolean;
}

/** Shorthand for the pointer of a component schema. */
export const schemaRef = (name: string): string => `#/components/schemas/${name}`;
