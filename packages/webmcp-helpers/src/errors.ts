/**
 * Base of every error this package throws itself. Errors of the service (a stale
 * `tool_ref`, a missing browser) arrive unchanged as the client's `APIError` subclasses.
 */
export class WebMcpHelpersError extends Error {
  override readonly name: string = "WebMcpHelpersError";
  /** Stable, machine-readable snake_case code; `message` is for people and may change. */
  declare readonly code: string;

  /** @param code - stable code; @param message - what happened and what to do. */
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/**
 * A call that cannot work as written: criteria of the wrong type or with an unknown key
 * (`invalid_criteria`), or `invokeTool` options out of range (`invalid_timeout`,
 * `invalid_target`, `input_not_object`, `input_not_serializable`, `input_too_large`).
 * Thrown before anything is sent.
 */
export class UsageError extends WebMcpHelpersError {
  override readonly name: string = "UsageError";
}

/**
 * A page-provided `input_schema` that the safe validator will not run: over its size
 * (`schema_too_large`), node (`schema_too_many_nodes`) or depth (`schema_too_deep`)
 * budget, with a keyword of the wrong type (`schema_invalid`), or with a `pattern` that is
 * too long (`pattern_too_long`), uses what a linear-time matcher cannot
 * (`pattern_unsupported`: backreferences, lookaround), is not a regular expression
 * (`pattern_invalid`) or expands past the state budget (`pattern_too_complex`).
 * Thrown before invoking: the tool did not run.
 */
export class UnsafeSchemaError extends WebMcpHelpersError {
  override readonly name: string = "UnsafeSchemaError";
  /** JSON pointer, inside the schema, of the part that was refused (`""` for the whole). */
  declare readonly schemaPointer: string;

  /** @param schemaPointer - where in the schema the problem is. */
  constructor(code: string, message: string, schemaPointer: string) {
    super(code, message);
    this.schemaPointer = schemaPointer;
  }
}

/** One way in which an input does not match its schema. */
export interface InputProblem {
  /** JSON pointer of the offending value inside the input (`""` for the input itself). */
  pointer: string;
  /** The schema keyword that failed, such as `required` or `maxLength`. */
  keyword: string;
  /** What was expected. */
  message: string;
}

/** `input_invalid`: the input does not match the tool's `input_schema`; nothing was sent. */
export class InputInvalidError extends WebMcpHelpersError {
  override readonly name: string = "InputInvalidError";
  /** Every problem found, up to the validator's `maxProblems`. */
  declare readonly problems: readonly InputProblem[];

  /** @param problems - what failed, by JSON pointer. */
  constructor(problems: readonly InputProblem[]) {
    const lines = problems.map((p) => `  - ${p.pointer || "(input)"}: ${p.message} (${p.keyword})`);
    super("input_invalid", `The input does not match the tool's input_schema; nothing was sent:\n${lines.join("\n")}`);
    this.problems = problems;
  }
}

/**
 * Checking this input against this schema would take more work than the validator allows:
 * more steps than `maxSteps` (`validation_steps_exceeded`) or a string longer than
 * `maxPatternInputLength` tested against a `pattern` (`pattern_input_too_long`). Thrown
 * before invoking: the tool did not run.
 */
export class ValidationLimitError extends WebMcpHelpersError {
  override readonly name: string = "ValidationLimitError";
}
