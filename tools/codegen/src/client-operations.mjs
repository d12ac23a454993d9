import { deref, listOperations, pascal } from "./document.mjs";

const bodyKinds = { "application/json": "json", "multipart/form-data": "form" };

/** Throws a generator error that names the operation and says what the facade expects. */
function fail(op, problem) {
  throw new Error(`codegen client: ${op.method.toUpperCase()} ${op.path} (${op.id}): ${problem}`);
}

/** The body kind and, for multipart bodies, the binary parts with their content types. */
function describeBody(document, op) {
  if (!op.requestBody) return { kind: "", optional: true, files: undefined };
  const [mediaType, ...others] = Object.keys(op.requestBody.content);
  const kind = bodyKinds[mediaType];
  if (!kind || others.length)
    fail(op, `the facade sends one body of ${Object.keys(bodyKinds).join(" or ")}, not ${Object.keys(op.requestBody.content).join(", ")}`);
  const schema = deref(document, op.requestBody.content[mediaType].schema);
  const optional = op.requestBody.required !== true;
  if (kind === "json") {
    const timeoutSec = deref(document, schema?.properties?.timeout_sec)?.default;
    return { kind, optional, files: undefined, timeoutSec };
  }
  // A binary part is a string property with a content media type (OpenAPI 3.1's way of
  // saying "bytes"); the client turns a path, bytes, Blob or stream into that part.
  const files = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const part = deref(document, property);
    if (part.contentMediaType || part.format === "binary") files[name] = part.contentMediaType ?? "application/octet-stream";
  }
  if (!Object.keys(files).length) fail(op, "a multipart body needs at least one binary part (a string with contentMediaType)");
  return { kind, optional, files };
}

/** Whether the success response pages with `X-Has-More` and `X-Next-Offset` over a bare array. */
function isPaged(document, success) {
  const headers = Object.keys(success.headers ?? {}).map((h) => h.toLowerCase());
  const schema = deref(document, success.content?.["application/json"]?.schema);
  return headers.includes("x-has-more") && headers.includes("x-next-offset") && schema?.type === "array";
}

/** The media type of Server-Sent Events, whose body the facade hands over as it arrives. */
export const eventStreamType = "text/event-stream";

/** The one media type of the success body, if it has one. */
function successMediaType(op, success) {
  const mediaTypes = Object.keys(success.content ?? {});
  if (mediaTypes.length > 1) fail(op, `the facade reads one success media type, not ${mediaTypes.join(", ")}`);
  return mediaTypes[0];
}

/** Whether the success body is bytes (any media type but JSON and event streams), which the facade returns unparsed. */
function isBinary(op, success) {
  const mediaType = successMediaType(op, success);
  return mediaType !== undefined && mediaType !== "application/json" && mediaType !== eventStreamType;
}

/**
 * Whether the success body is a stream of Server-Sent Events, which never ends while the
 * server has more to say: the facade resolves to the body's stream once the headers
 * arrive, instead of reading it whole.
 */
function isStream(op, success) {
  if (successMediaType(op, success) !== eventStreamType) return false;
  if (op.method !== "get") fail(op, `a ${eventStreamType} response is read by a GET, not a ${op.method.toUpperCase()}`);
  return true;
}

/**
 * Whether the operation answers `If-None-Match` with `304 Not Modified`: it declares the
 * header parameter, a `304`, and an `ETag` on that and on its success response.
 */
function isConditional(op, success) {
  const notModified = op.responses.find((r) => r.status === "304");
  if (!notModified) return false;
  const hasETag = (response) => Object.keys(response.headers ?? {}).some((h) => h.toLowerCase() === "etag");
  if (!op.parameters.some((p) => p.in === "header" && p.name.toLowerCase() === "if-none-match"))
    fail(op, "a 304 response needs the If-None-Match header parameter");
  if (!hasETag(success) || !hasETag(notModified)) fail(op, "a conditional operation sends an ETag with its success and its 304 responses");
  if (op.parameters.some((p) => p.in === "query") || op.requestBody)
    fail(op, "the facade's <method>IfChanged takes a path parameter and a version, not a query or a body");
  return true;
}

/**
 * What the client needs to know about each operation, in document order: where the
 * facade puts it (`x-client`), how its arguments map onto the request, and the transport
 * rules that the spec implies for it.
 *
 * - `noRetry`: an operation that can answer `outcome_unknown` is never retried, whatever
 *   its method, because a retry could run the action twice.
 * - `timeoutSec`: the default of a `timeout_sec` body property; the client's request
 *   timeout for that call always exceeds the server-side wait.
 * - `conditional`: the operation answers `If-None-Match` with `304`; the facade adds
 *   `<method>IfChanged`.
 * - `binary`: the success body is not JSON; the facade resolves to its bytes.
 * - `stream`: the success body is `text/event-stream`; the facade resolves to its
 *   `ReadableStream` as soon as the headers arrive.
 */
export function describeOperations(document) {
  const seen = new Set();
  const operations = listOperations(document).map((op) => {
    const { resource, method } = op.client ?? fail(op, "has no x-client: {resource, method}");
    const key = `${resource}.${method}`;
    if (seen.has(key)) fail(op, `x-client ${key} is used twice`);
    seen.add(key);
    const pathParams = op.parameters.filter((p) => p.in === "path");
    if (pathParams.length > 1) fail(op, "the facade takes at most one path parameter");
    const queryParams = op.parameters.filter((p) => p.in === "query");
    const body = describeBody(document, op);
    if (body.kind && queryParams.length) fail(op, "the facade takes query parameters or a body, not both");
    const success = op.responses.find((r) => r.status.startsWith("2")) ?? fail(op, "has no 2xx response");
    return {
      id: op.id,
      Name: pascal(op.id),
      resource,
      method,
      httpMethod: op.method.toUpperCase(),
      path: op.path,
      summary: op.operation.summary ?? op.id,
      pathParam: pathParams[0]?.name ?? "",
      input: body.kind || (queryParams.length ? "query" : ""),
      inputOptional: body.kind ? body.optional : !queryParams.some((p) => p.required),
      files: body.files,
      paged: isPaged(document, success),
      noRetry: op.responses.some((r) => (r["x-error-codes"] ?? []).includes("outcome_unknown")),
      timeoutSec: body.timeoutSec,
      conditional: isConditional(op, success),
      binary: isBinary(op, success),
      stream: isStream(op, success),
    };
  });
  for (const op of operations) {
    if (op.paged && seen.has(`${op.resource}.${op.method}All`)) fail(op, `x-client ${op.method}All would hide its paging iterator`);
    if (op.conditional && seen.has(`${op.resource}.${op.method}IfChanged`)) fail(op, `x-client ${op.method}IfChanged would hide its conditional variant`);
  }
  return operations;
}
