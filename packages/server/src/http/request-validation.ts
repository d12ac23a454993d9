import type { operations } from "@browser-service/types";
import type { ValidationIssue, Validator } from "@browser-service/validators";
import type { FastifyInstance, FastifyRequest } from "fastify";
import { BadRequestError, type ErrorDetail } from "./api-errors.js";
import { parseJsonBody } from "./json-body.js";
import { operationChecks } from "./operation-validators.js";

// Deprecated fields every request schema refuses; the generic message would not say why.
const DEPRECATED: Readonly<Record<string, string>> = {
  "/max_pooled_sessions":
    "/max_pooled_sessions is deprecated and can no longer be set: pooled browsers count toward max_concurrent_sessions. Remove it from the request.",
};

type Location = "path" | "query" | "headers" | "body";

// Body pointers read as the spec's example ("/timeout_sec must be ..."); the others say where they point.
const WHERE: Readonly<Record<Location, string>> = {
  path: "Path: ",
  query: "Query: ",
  headers: "Headers: ",
  body: "",
};

function toDetail(issue: ValidationIssue, location: Location): ErrorDetail {
  if (location === "body" && DEPRECATED[issue.pointer]) return { code: issue.rule, message: DEPRECATED[issue.pointer] as string };
  return { code: issue.rule, message: `${WHERE[location]}${issue.message}` };
}

/**
 * Checks a request's path, query, headers and (unless the handler reads a form) body
 * with the spec's generated validators. Coerced path and query values replace the raw
 * strings; problems become one 400 `bad_request` with one detail per problem.
 */
export function validateRequest(request: FastifyRequest): void {
  const config = request.routeOptions.config;
  if (config.operationId === undefined) return;
  const checks = operationChecks(config.operationId);
  const details: ErrorDetail[] = [];
  const run = (check: Validator<unknown> | undefined, location: Location, input: unknown): unknown => {
    if (!check) return input;
    const result = check(input);
    if (result.ok) return result.value;
    details.push(...result.errors.map((issue) => toDetail(issue, location)));
    return input;
  };
  request.params = run(checks.path, "path", request.params);
  if (checks.query) request.query = run(checks.query, "query", request.query);
  else details.push(...undeclaredQuery(request.query));
  run(checks.headers, "headers", request.headers);
  if (!config.formBody) {
    if (checks.body && request.body === undefined && !checks.body(undefined).ok) {
      details.push({ code: "required", message: "The request body is required: send a JSON object with Content-Type application/json." });
    } else {
      request.body = run(checks.body, "body", request.body);
    }
  }
  if (details.length > 0) throw invalidRequest(details);
}

/**
 * An operation without query parameters has no query validator; what it is sent is
 * refused as an operation with some refuses an unknown one, so that a misspelled
 * parameter never passes silently on one operation and fails on another.
 */
function undeclaredQuery(query: unknown): ErrorDetail[] {
  const names = query !== null && typeof query === "object" ? Object.keys(query) : [];
  return names.map((name) => ({
    code: "additionalProperties",
    message: `${WHERE.query}/${name.replace(/~/g, "~0").replace(/\//g, "~1")} is not an allowed property.`,
  }));
}

/** The most problems a 400 lists. */
const MAX_LISTED_PROBLEMS = 50;

/** The 400 for a list of problems. */
export function invalidRequest(details: ErrorDetail[]): BadRequestError {
  // A body of 10,000 wrong items is 10,000 problems: the answer lists the first few, so
  // that a small request cannot make a large one.
  if (details.length > MAX_LISTED_PROBLEMS) {
    return new BadRequestError(
      `The request is invalid (${details.length} problems; the first ${MAX_LISTED_PROBLEMS} are listed).`,
      details.slice(0, MAX_LISTED_PROBLEMS),
    );
  }
  return new BadRequestError(`The request is invalid (${details.length} problem${details.length === 1 ? "" : "s"}).`, details);
}

type JsonBody<T> = T extends { content: { "application/json": infer B } } ? B : never;

/** The JSON body of operation `Op` as the spec declares it: what its route's handler reads once the request passed its validator. */
export type BodyOf<Op extends keyof operations> = JsonBody<NonNullable<operations[Op]["requestBody"]>>;

/** `body` as operation `op`'s, once its validator passes it (400 `invalid_request` with every problem otherwise): for a body no route hook checked, such as a peer call's. */
export function checkedBody<Op extends keyof operations>(op: Op, body: unknown): BodyOf<Op> {
  const problems = bodyProblems(op, body);
  if (problems.length > 0) throw invalidRequest(problems);
  return body as BodyOf<Op>;
}

/** Checks a value against an operation's body validator; used by handlers that assemble the body themselves (forms). */
export function bodyProblems(operationId: string, body: unknown): ErrorDetail[] {
  const check = operationChecks(operationId).body;
  const result = check ? check(body) : { ok: true as const, value: body };
  return result.ok ? [] : result.errors.map((issue) => toDetail(issue, "body"));
}

/**
 * How request bodies are read (the spec's "Errors" section says it to clients):
 *
 * - An empty body is no body, with or without `Content-Type: application/json`: many
 *   clients send that header on every call, so a `DELETE` or a `POST /browsers` without
 *   content must not fail as invalid JSON. An operation that requires a body then answers
 *   `required`, as for a missing one.
 * - An operation that takes no body (the spec declares no `requestBody`: every `GET` and
 *   `DELETE`) does not read one: whatever was sent is neither parsed nor refused, and Node
 *   discards it after the response. RFC 9110 gives `DELETE` content no meaning, so its
 *   type or size cannot make the operation fail.
 */
export function installBodyReading(app: FastifyInstance): void {
  app.removeContentTypeParser("application/json");
  app.decorateRequest("jsonText", undefined);
  app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
    // Kept as sent, for a request passed on to another node: serializing the parsed value
    // again could change its size (`1e20` becomes 21 digits) and so the answer.
    request.jsonText = body as string;
    if (body === "") {
      done(null, undefined);
      return;
    }
    let value: unknown;
    try {
      value = parseJsonBody(body as string);
    } catch (error) {
      done(error as Error, undefined);
      return;
    }
    done(null, value);
  });
  app.addHook("preParsing", (request, _reply, payload, done) => {
    const operationId = request.routeOptions.config.operationId;
    if (operationId !== undefined && operationChecks(operationId).body === undefined) {
      // Fastify parses by these headers; without them it sees no body and reads none.
      for (const name of ["content-type", "content-length", "transfer-encoding"]) delete request.headers[name];
    }
    done(null, payload);
  });
}
