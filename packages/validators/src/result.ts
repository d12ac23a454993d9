/** One problem found in a value. */
export interface ValidationIssue {
  /**
   * JSON pointer (RFC 6901) of the offending value: `""` for the value itself,
   * `/browser/proxy` for a nested one; for a missing or unexpected property, the pointer
   * that property has or would have.
   */
  readonly pointer: string;
  /** The JSON Schema keyword that failed: `required`, `maximum`, `additionalProperties`, `oneOf`, `pattern`, `format`... */
  readonly rule: string;
  /** A sentence for people that names the pointer and what was expected, such as `/timeout_sec must be at most 120.` */
  readonly message: string;
}

/** The outcome of a validator: the value, typed, or every problem found in it. */
export type ValidationResult<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly errors: readonly ValidationIssue[] };

/** A function that checks a value against one schema. */
export type Validator<T> = (value: unknown) => ValidationResult<T>;

/** An object type with its keys lowercased, as header parameters are validated. */
export type LowercaseKeys<T> = { [K in keyof T as K extends string ? Lowercase<K> : K]: T[K] };
