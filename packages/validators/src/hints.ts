/** A condition on one property, relative to the object the condition is about. */
export interface Clause {
  /** JSON pointer of the property, relative to the object. */
  readonly pointer: string;
  /** What holds for it, such as `is "FAILED"` or `is null or missing`; absent for "is present". */
  readonly condition?: string;
}

/** One alternative of a `oneOf` or `anyOf`. */
export interface Branch {
  /** The schema paths that errors of this alternative carry (its own, and those of the schemas it refers to). */
  readonly paths: readonly string[];
  /** The required keys, when the alternative is a closed object. */
  readonly required?: readonly string[];
  /** Whether the alternative only accepts `null`. */
  readonly isNull?: boolean;
}

/**
 * What the generator knows of a `oneOf`/`anyOf`, `if` or `not` that Ajv's errors do not
 * say, so that its failures can be told in one sentence. `shape` of alternatives:
 * `exactlyOne` (closed objects, of which exactly one must match), `nullable` (something or
 * `null`), `other`. `when` and `clauses` are `null` when the condition is more than
 * required properties and property values.
 */
export type Hint =
  | {
      readonly kind: "oneOf" | "anyOf";
      readonly shape: "exactlyOne" | "nullable" | "other";
      readonly branches: readonly Branch[];
    }
  | {
      readonly kind: "if";
      readonly when: readonly Clause[] | null;
      readonly then: readonly string[];
      readonly else: readonly string[];
    }
  | {
      readonly kind: "not";
      readonly clauses: readonly Clause[] | null;
      /** What it forbids of the value itself (`must not match the pattern ^x$`), when it is one rule on the value. */
      readonly expected?: string;
    };
