import { banner, pascal } from "./document.mjs";

/** A TSDoc block of these paragraphs (blank ones dropped), indented by `indent`. */
function docComment(paragraphs, indent = "") {
  const lines = paragraphs
    .filter(Boolean)
    .flatMap((p, i) => [...(i > 0 ? [""] : []), ...p.split("\n")])
    .map((line) => `${indent} * ${line.replaceAll("*/", "*\\/")}`.trimEnd());
  return `${indent}/**\n${lines.join("\n")}\n${indent} */\n`;
}

/** The first paragraph of a schema's description: the TSDoc summary of its validators. */
const summary = (schema) =>
  String(schema.description ?? "")
    .trim()
    .split(/\n\s*\n/)[0];

/** `200` as a property key or an index; `"4XX"` or `"default"` quoted. */
const statusKey = (status) => (/^\d+$/.test(status) ? status : JSON.stringify(status));

/** The three validators of one component schema. */
function componentValidators(name, schema) {
  const type = `T.${name}`;
  const about = summary(schema);
  return `
${docComment([`Checks a value against the \`${name}\` schema.`, about, "@returns `{ ok: true, value }`, or `{ ok: false, errors }` with one issue per problem found."])}export function validate${name}(value: unknown): ValidationResult<${type}> {
  return check(schemas.schema$${name}, value);
}

${docComment([`Whether a value satisfies the \`${name}\` schema.`])}export function is${name}(value: unknown): value is ${type} {
  return schemas.schema$${name}(value);
}

${docComment([`Throws unless a value satisfies the \`${name}\` schema.`, "@throws `ValidationError` listing every problem found."])}export function assert${name}(value: unknown): asserts value is ${type} {
  ensure(schemas.schema$${name}, value);
}
`;
}

/** The validator of one body (request or response): a component's, or its own compiled function. */
function bodyValidator(body, type) {
  const own = (arg) => `check(schemas.${body.exportName}, ${arg})`;
  if (body.required) return body.component ? `validate${body.component}` : `(value: unknown): ValidationResult<${type}> => ${own("value")}`;
  const inner = body.component ? `validate${body.component}` : `(body: unknown): ValidationResult<${type}> => ${own("body")}`;
  return `(value: unknown): ValidationResult<${type} | undefined> => checkOptional(${inner}, value)`;
}

/** The entry of one operation in `operationValidators`. */
function operationEntry(op) {
  const Name = pascal(op.id);
  const at = `T.operations[${JSON.stringify(op.id)}]`;
  const inputTypes = { path: `T.${Name}PathParams`, query: `T.${Name}Query`, headers: `LowercaseKeys<T.${Name}Headers>` };
  const lines = op.inputs.map(
    (input) => `    ${input.key}: (value: unknown): ValidationResult<${inputTypes[input.key]}> => checkParameters(parameters.${input.exportName}, value),`,
  );
  if (op.body) lines.push(`    body: ${bodyValidator(op.body, `T.${Name}RequestBody`)},`);
  const responses = op.responses.map((r) => {
    const type = `${at}["responses"][${statusKey(r.status)}]["content"][${JSON.stringify(r.mediaType)}]`;
    return `      ${statusKey(r.status)}: ${bodyValidator({ ...r, required: true }, type)},`;
  });
  lines.push(`    responses: {\n${responses.join("\n")}\n    },`);
  const title = `\`${op.method.toUpperCase()} ${op.path}\`${op.operation.summary ? `: ${op.operation.summary}.` : "."}`;
  return `${docComment([title], "  ")}  ${op.id}: {\n${lines.join("\n")}\n  },`;
}

/**
 * The typed API of the validators package: `validateX`, `isX` and `assertX` for every
 * component schema, and `operationValidators` for every operation.
 */
export function validatorsModule(document, operations) {
  const components = Object.entries(document.components.schemas).sort(([a], [b]) => (a < b ? -1 : 1));
  const usesOptionalBody = operations.some((op) => op.body && !op.body.required);
  const runtime = ["check", ...(usesOptionalBody ? ["checkOptional"] : []), "checkParameters", "ensure"];
  return `${banner("validators")}import type * as T from "@browser-service/types";
import { ${runtime.join(", ")} } from "../check.js";
import type { LowercaseKeys, ValidationResult } from "../result.js";
import * as parameters from "./parameters.js";
import * as schemas from "./schemas.js";
${components.map(([name, schema]) => componentValidators(name, schema)).join("")}
${docComment([
  "Validators of every operation, by `operationId`: `path`, `query` and `headers` for its parameters, `body` for its request body, and `responses` for each response that has a body, by status. Each returns a {@link ValidationResult}.",
  "Parameters are checked as a server sees them after parsing a request: an object of strings, which are coerced to the parameters' types (the result's `value` is a coerced copy; the input is not changed). Header names are lowercase, and `headers` admits headers the operation does not declare; `path` and `query` admit nothing else. An optional request body may be `undefined`.",
])}export const operationValidators = {
${operations.map(operationEntry).join("\n")}
} as const;

/** The type of {@link operationValidators}. */
export type OperationValidators = typeof operationValidators;
`;
}
