import { escapePointerSegment, type Finding } from "./finding.js";

const typeNames: Readonly<Record<string, string>> = {
  array: "an array",
  boolean: "a boolean",
  integer: "an integer",
  null: "null",
  number: "a number",
  object: "an object",
  string: "a string",
};

/** Examples in format sentences, so that a person sees the expected form. */
const formatNames: Readonly<Record<string, string>> = {
  "date-time": "an RFC 3339 date-time such as 2026-11-02T10:15:00Z",
  uri: "an absolute URI such as https://example.com/path",
};

/** `a`, `a or b`, `a, b or c`. */
function either(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} or ${items.at(-1)}`;
}

const json = (value: unknown): string => (typeof value === "number" ? String(value) : (JSON.stringify(value) ?? String(value)));

// An enum's values come from the compiled schema (the same array on every call), so they
// are written out once.
const listedValues = new WeakMap<readonly unknown[], readonly string[]>();

function listed(values: readonly unknown[]): readonly string[] {
  let texts = listedValues.get(values);
  if (!texts) listedValues.set(values, (texts = values.map(json)));
  return texts;
}

const plural = (count: number, noun: string, nouns = `${noun}s`): string => `${count} ${count === 1 ? noun : nouns}`;

/** What was expected, as the end of a sentence whose subject is the offending value. */
function expectation(finding: Finding): string {
  if (finding.expected !== undefined) return finding.expected;
  const params = finding.params;
  const withNull = (values: readonly string[]): readonly string[] => (finding.orNull ? [...values, "null"] : values);
  switch (finding.rule) {
    case "type":
      return `must be ${either(withNull([params["type"] as string | string[]].flat().map((type) => typeNames[type] ?? type)))}`;
    case "enum":
      return `must be one of ${either(withNull(listed(params["allowedValues"] as readonly unknown[])))}`;
    case "const":
      return `must be ${either(withNull([json(params["allowedValue"])]))}`;
    case "required":
      return "is required";
    case "additionalProperties":
    case "unevaluatedProperties":
      return "is not an allowed property";
    case "dependentRequired":
      return `is required when ${finding.at}/${escapePointerSegment(String(params["property"]))} is present`;
    case "minimum":
      return `must be at least ${json(params["limit"])}`;
    case "maximum":
      return `must be at most ${json(params["limit"])}`;
    case "exclusiveMinimum":
      return `must be greater than ${json(params["limit"])}`;
    case "exclusiveMaximum":
      return `must be less than ${json(params["limit"])}`;
    case "multipleOf":
      return `must be a multiple of ${json(params["multipleOf"])}`;
    case "minLength":
      return params["limit"] === 1 ? "must not be empty" : `must be at least ${plural(params["limit"] as number, "character")} long`;
    case "maxLength":
      return `must be at most ${plural(params["limit"] as number, "character")} long`;
    case "minItems":
      return `must have at least ${plural(params["limit"] as number, "item")}`;
    case "maxItems":
      return `must have at most ${plural(params["limit"] as number, "item")}`;
    case "minProperties":
      return `must have at least ${plural(params["limit"] as number, "property", "properties")}`;
    case "maxProperties":
      return `must have at most ${plural(params["limit"] as number, "property", "properties")}`;
    case "uniqueItems":
      return `must not contain duplicates (items ${json(params["j"])} and ${json(params["i"])} are equal)`;
    case "pattern":
      return `must match the pattern ${String(params["pattern"])}`;
    case "format": {
      const format = String(params["format"]);
      return `must be ${formatNames[format] ?? `in the format "${format}"`}`;
    }
    case "false schema":
      return "is not allowed";
    default:
      return `does not satisfy the "${finding.rule}" rule`;
  }
}

/** A sentence that names the offending value's pointer and what was expected: `/timeout_sec must be at most 120.` */
export function messageOf(finding: Finding): string {
  const subject = finding.pointer === "" ? "The value" : finding.pointer;
  const conditions = finding.conditions?.length ? ` ${finding.conditions.join(", and ")}` : "";
  return `${subject} ${expectation(finding)}${conditions}.`;
}
