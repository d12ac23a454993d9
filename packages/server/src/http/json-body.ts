import secureJson from "secure-json-parse";
import { BadRequestError } from "./api-errors.js";

// secure-json-parse's one message for a `__proto__` key or a `constructor` holding `prototype`.
const FORBIDDEN = /forbidden prototype property/;

/**
 * Parses a JSON request body as Fastify's own parser does (secure-json-parse, refusing
 * `__proto__` and `constructor.prototype` anywhere), but says why it failed: Fastify's
 * parser answers every failure "Body is not valid JSON", also for valid JSON it refuses
 * for a forbidden property name, and drops the parser's position.
 */
export function parseJsonBody(text: string): unknown {
  try {
    return secureJson.parse(text, undefined, { protoAction: "error", constructorAction: "error" });
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/\.+$/, "") : String(error);
    if (FORBIDDEN.test(reason)) {
      return fail(
        "forbidden_property_name",
        "The body has a property named __proto__, or a constructor holding prototype; the server refuses them anywhere in a body, as they could change objects' prototypes.",
      );
    }
    return fail("invalid_json", `The body is not valid JSON: ${reason.slice(0, 300)}.`);
  }
}

function fail(code: string, message: string): never {
  throw new BadRequestError(code === "invalid_json" ? "The request body is not valid JSON." : "The request body is invalid (1 problem).", [{ code, message }]);
}
