// The 4xx/5xx responses of an operation, resolved, and how messages name them.
import { deref, isObject, isRef } from "./nodes.js";

/** A 4xx or 5xx status key, or a `4XX`/`5XX` range. */
export const ERROR_STATUS = /^[45](?:\d\d|XX)$/i;

/** The `[status, response, location]` entries of an operation's 4xx/5xx responses, resolved. */
export function errorResponses(ctx, operation) {
  const responses = isObject(operation.responses) ? operation.responses : {};
  const out = [];
  for (const [status, raw] of Object.entries(responses)) {
    if (!ERROR_STATUS.test(status)) continue;
    const rawLocation = ctx.location.child(["responses", status]);
    const { node, location } = deref(ctx, raw, rawLocation);
    if (!isObject(node)) continue; // an unresolved $ref is reported by no-unresolved-refs
    out.push({ status, response: node, location, viaRef: isRef(raw) });
  }
  return out;
}

/**
 * How a message names an error response: a shared (`$ref`) one by its status and the first
 * operation that uses it, reported once; an inline one by its status and operation.
 */
export function responseWhere(status, viaRef, label) {
  return viaRef
    ? { text: `The \`${status}\` error response (first used by \`${label}\`)`, dedupe: status }
    : { text: `The \`${status}\` response of \`${label}\``, dedupe: `${status} ${label}` };
}
