import { UnsafeSchemaError, ValidationLimitError } from "../errors.js";
import type { SchemaLimits } from "../schema/limits.js";
import type { StepBudget } from "../schema/step-budget.js";
import { compileNfa, type Nfa } from "./compile-nfa.js";
import { nfaMatches } from "./match-nfa.js";
import { parsePattern } from "./parse-pattern.js";

/**
 * A page-provided regular expression, checked and compiled into an automaton that is
 * simulated rather than backtracked: no `RegExp` is built from page text, and testing a
 * string costs at most the pattern's states times the string's length.
 */
export class SafePattern {
  private readonly nfa: Nfa;

  /**
   * Throws `UnsafeSchemaError`: `pattern_too_long` past `maxPatternLength`,
   * `pattern_unsupported` (backreferences, lookaround), `pattern_invalid`, or
   * `pattern_too_complex` past `maxPatternStates`.
   */
  constructor(
    readonly source: string,
    private readonly limits: Pick<SchemaLimits, "maxPatternLength" | "maxPatternStates" | "maxPatternInputLength">,
    pointer: string,
  ) {
    if (source.length > limits.maxPatternLength) {
      throw new UnsafeSchemaError(
        "pattern_too_long",
        `The pattern at ${pointer || "/"} is ${source.length} characters long; the limit is ${limits.maxPatternLength} (maxPatternLength), so the tool's schema is refused.`,
        pointer,
      );
    }
    this.nfa = compileNfa(parsePattern(source, pointer), limits.maxPatternStates, pointer);
  }

  /**
   * Whether the pattern matches somewhere in `text`. Throws `ValidationLimitError`
   * (`pattern_input_too_long`) for a string past `maxPatternInputLength`, rather than
   * saying yes or no without looking.
   */
  test(text: string, budget: StepBudget): boolean {
    if (text.length > this.limits.maxPatternInputLength) {
      throw new ValidationLimitError(
        "pattern_input_too_long",
        `A string of ${text.length} characters is to be checked against a pattern; the limit is ${this.limits.maxPatternInputLength} (maxPatternInputLength), so nothing was sent.`,
      );
    }
    return nfaMatches(this.nfa, text, budget);
  }
}
