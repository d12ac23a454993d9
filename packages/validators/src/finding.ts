import type { CompiledError } from "./compiled.js";

/** One problem, ready to be put into words. */
export interface Finding {
  /** JSON pointer of the offending value. */
  readonly pointer: string;
  /** JSON pointer of the value whose schema holds the failed keyword (the object, for `required`). */
  readonly at: string;
  /** Where the failed keyword is in the document. */
  readonly schemaPath: string;
  /** The failed keyword. */
  readonly rule: string;
  /** The keyword's details from Ajv. */
  readonly params: Readonly<Record<string, unknown>>;
  /** What was expected, when Ajv's details do not say it (summaries of alternatives and `not`). */
  readonly expected?: string;
  /** Whether `null` was also acceptable (the other alternative of a nullable `oneOf`). */
  readonly orNull?: boolean;
  /** The conditions under which the rule applies, such as `when /flow_status is "FAILED"`. */
  readonly conditions?: readonly string[];
}

/** A property name as one segment of a JSON pointer (`a/b` is `a~1b`). */
export const escapePointerSegment = (segment: string): string =>
  segment.includes("~") || segment.includes("/") ? segment.replaceAll("~", "~0").replaceAll("/", "~1") : segment;

/** An error as it comes, reported at the property it names (missing or unexpected), if any. */
export function plainFinding(error: CompiledError): Finding {
  const params = error.params;
  const property = params["missingProperty"] ?? params["additionalProperty"] ?? params["unevaluatedProperty"];
  const pointer = typeof property === "string" ? `${error.instancePath}/${escapePointerSegment(property)}` : error.instancePath;
  return { pointer, at: error.instancePath, schemaPath: error.schemaPath, rule: error.keyword, params };
}

/** A finding about a whole value, with what was expected of it. */
export function summaryFinding(error: CompiledError, expected: string): Finding {
  const at = error.instancePath;
  return { pointer: at, at, schemaPath: error.schemaPath, rule: error.keyword, params: error.params, expected };
}
