import type { InputProblem } from "../errors.js";
import { compileSchema, type SchemaNode } from "./compile-schema.js";
import { defaultSchemaLimits, type SchemaLimits } from "./limits.js";
import { measureSchema } from "./measure-schema.js";
import { StepBudget } from "./step-budget.js";
import { validateNode } from "./validate-node.js";

/** What one validation found. */
export interface InputValidation {
  /** True when the input matches the schema. */
  valid: boolean;
  /** Each problem, by JSON pointer, up to `maxProblems`; empty when valid. */
  problems: InputProblem[];
  /** Steps the validation took (nodes, properties, elements and pattern states visited), at most `maxSteps`. */
  steps: number;
}

/** A page-provided schema accepted by the safe validator, ready to check inputs. */
export interface InputSchema {
  /**
   * Checks a JSON value (parse what you will send, so that `Date`s and `undefined`s are
   * what the service sees). Throws `ValidationLimitError` when the check would take more
   * than `maxSteps`, or a string tested against a pattern is over `maxPatternInputLength`.
   */
  validate(input: unknown): InputValidation;
}

/**
 * Compiles a tool's page-provided `input_schema` with a validator made for untrusted
 * schemas: it never builds code or a `RegExp` from the schema; it refuses a schema over
 * its size, node or depth budget before looking at it further, and a pattern it cannot
 * match in linear time (`UnsafeSchemaError`); and it bounds each validation's steps.
 *
 * It knows `type`, `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`,
 * `exclusiveMaximum` (numbers, or draft 4's booleans), `minLength`, `maxLength`,
 * `pattern`, `properties`, `patternProperties`, `additionalProperties`, `required`,
 * `minProperties`, `maxProperties`, `items`, `prefixItems`, `additionalItems`, `minItems`,
 * `maxItems`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else` and boolean schemas.
 * Anything else (`format`, `$ref`, `uniqueItems`, `multipleOf`, ...) is ignored: such a
 * schema accepts more than the page may, and the page still checks its own input.
 */
export function compileInputSchema(schema: unknown, limits: Partial<SchemaLimits> = {}): InputSchema {
  const settings: SchemaLimits = { ...defaultSchemaLimits, ...limits };
  measureSchema(schema, settings);
  const root: SchemaNode = compileSchema(schema, settings);
  return {
    validate(input) {
      const budget = new StepBudget(settings.maxSteps);
      const problems: InputProblem[] = [];
      const valid = validateNode(root, input, [], { budget, problems, maxProblems: settings.maxProblems });
      return { valid, problems, steps: budget.spent };
    },
  };
}
