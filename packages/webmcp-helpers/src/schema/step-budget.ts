import { ValidationLimitError } from "../errors.js";

/**
 * Counts the steps of one validation and stops it, with `ValidationLimitError`
 * (`validation_steps_exceeded`), when they pass the limit. Every loop of the validator and
 * of the pattern matcher spends from it, so the bound holds whatever the schema says.
 */
export class StepBudget {
  /** Steps spent so far. */
  spent = 0;

  /** @param limit - most steps allowed. */
  constructor(readonly limit: number) {}

  /** Spends `steps`; throws once the total is over the limit. */
  spend(steps = 1): void {
    this.spent += steps;
    if (this.spent > this.limit) {
      throw new ValidationLimitError(
        "validation_steps_exceeded",
        `Checking the input against the tool's input_schema needs more than ${this.limit} steps (maxSteps); the schema or input is too costly to check, so nothing was sent.`,
      );
    }
  }
}
