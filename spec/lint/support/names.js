// How operations are named in messages, and the name rules the house rules check.
import { nonEmptyString } from "./nodes.js";

/** operationIds and `x-client` names: `listProjects`. */
export const CAMEL_CASE = /^[a-z][a-zA-Z0-9]*$/;
/** Error codes: `project_not_found`. */
export const SNAKE_CASE = /^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/;

/** The operation's id, or `GET operation` when it has none, for messages. */
export function operationLabel(operation, method) {
  return nonEmptyString(operation?.operationId) ? operation.operationId : `${String(method).toUpperCase()} operation`;
}

/** A camelCase suggestion for a name in another case (`list-projects` -> `listProjects`). */
export function toCamelCase(value) {
  const words = String(value)
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.toLowerCase());
  return words.map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1))).join("");
}
