/** One error as the compiled code reports it: Ajv's error object, without a message. */
export interface CompiledError {
  /** JSON pointer of the value whose schema holds the failed keyword. */
  readonly instancePath: string;
  /** Where the failed keyword is in the document, such as `#/components/schemas/Region/enum`. */
  readonly schemaPath: string;
  /** The failed keyword. */
  readonly keyword: string;
  /** The keyword's details, such as `{ missingProperty: "id" }` for `required`. */
  readonly params: Readonly<Record<string, unknown>>;
}

/** A compiled validation function: whether the value is valid, with the errors of the last call in `errors`. */
export interface CompiledValidator {
  (value: unknown): boolean;
  errors?: readonly CompiledError[] | null;
}
