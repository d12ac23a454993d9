import { beforeEach, describe, expect, it } from "vitest";
import {
  APIConnectionError,
  APIError,
  APITimeoutError,
  APIUserAbortError,
  AuthenticationError,
  BadRequestError,
  BrowserServiceError,
  ConflictError,
  createClient,
  InternalServerError,
  InvalidResponseError,
  NotFoundError,
  OutcomeUnknownError,
  PayloadTooLargeError,
  PermissionDeniedError,
  RateLimitError,
  UnprocessableEntityError,
  UnsupportedMediaTypeError,
} from "../../src/index.js";
import { startTestServer, useTestServer } from "../helpers/test-server.js";
import { testOptions, transports } from "../helpers/transports.js";

const server = useTestServer();
beforeEach(() => {});

/** The error a call rejects with; fails the test if it resolves. */
async function rejection(promise: Promise<unknown>): Promise<BrowserServiceError> {
  const outcome = await promise.then(
    (value) => ({ value }),
    (error: unknown) => ({ error }),
  );
  if (!("error" in outcome)) throw new Error(`expected a rejection, got ${JSON.stringify(outcome.value)}`);
  return outcome.error as BrowserServiceError;
}

describe.each(transports)("errors over the %s", (_, transport) => {
  const client = () => createClient(testOptions(server.url, { ...transport, maxRetries: 0 }));

  it.each([
    [400, "bad_request", BadRequestError],
    [401, "unauthorized", AuthenticationError],
    [403, "forbidden", PermissionDeniedError],
    [404, "project_not_found", NotFoundError],
    [409, "name_conflict", ConflictError],
    [413, "payload_too_large", PayloadTooLargeError],
    [415, "unsupported_media_type", UnsupportedMediaTypeError],
    [422, "extension_load_failed", UnprocessableEntityError],
    [429, "rate_limited", RateLimitError],
    [500, "internal_error", InternalServerError],
    [503, "unavailable", InternalServerError],
  ])("turns %i with an Error body into its class", async (status, code, Class) => {
    server.route("GET", "/org/limits", { status, body: { code, message: `it was ${status}` }, headers: { "X-Request-Id": `req_${status}` } });
    const error = await rejection(client().limits.get());
    expect(error).toBeInstanceOf(Class);
    expect(error).toBeInstanceOf(APIError);
    expect(error).toBeInstanceOf(BrowserServiceError);
    expect(error).toMatchObject({ name: Class.name, status, code, message: `it was ${status}`, requestId: `req_${status}`, details: [] });
    expect((error as APIError).headers.get("x-request-id")).toBe(`req_${status}`);
  });

  it("keeps details and inner_error", async () => {
    const details = [
      { code: "required", message: "/name is required." },
      { code: "maxLength", message: "/query is longer than 255." },
    ];
    const inner = { code: "db_timeout", message: "The project store did not answer." };
    server.route("POST", "/org/projects", { status: 400, body: { code: "bad_request", message: "Invalid body.", details, inner_error: inner } });
    const error = await rejection(client().projects.create({ name: "" }));
    expect(error).toMatchObject({ code: "bad_request", details, innerError: inner, requestId: undefined });
  });

  it("gives any other status a plain APIError", async () => {
    server.route("GET", "/org/limits", { status: 418, body: { code: "teapot", message: "Short and stout." } });
    const error = await rejection(client().limits.get());
    expect(error.constructor).toBe(APIError);
    expect(error).toMatchObject({ status: 418, code: "teapot" });
  });

  it("turns a 504 outcome_unknown into OutcomeUnknownError with its invocation id", async () => {
    server.route("POST", "/browsers/b1/webmcp/invoke", {
      status: 504,
      body: { code: "outcome_unknown", message: "No result within timeout_sec=1.", invocation_id: "inv_1" },
    });
    const error = await rejection(client().webmcp.invoke("b1", { tool_ref: "t", input: {}, timeout_sec: 1 }));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ status: 504, code: "outcome_unknown", invocationId: "inv_1" });
  });

  it("keeps a gateway's 504 without outcome_unknown an InternalServerError", async () => {
    server.route("GET", "/org/limits", { status: 504, body: "<html><body>Gateway Timeout</body></html>", headers: { "Content-Type": "text/html" } });
    const error = await rejection(client().limits.get());
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).not.toBeInstanceOf(OutcomeUnknownError);
  });

  it("quotes a proxy's HTML 502 page", async () => {
    const page = "<html>\n  <head><title>502 Bad Gateway</title></head>\n  <body>nginx</body>\n</html>";
    server.route("GET", "/org/limits", { status: 502, body: page, headers: { "Content-Type": "text/html" } });
    const error = await rejection(client().limits.get());
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error.code).toBe("invalid_error_body");
    expect(error.message).toContain("HTTP 502");
    expect(error.message).toContain("<title>502 Bad Gateway</title>");
  });

  it("names the status of an empty 500", async () => {
    server.route("GET", "/org/limits", { status: 500 });
    const error = await rejection(client().limits.get());
    expect(error).toBeInstanceOf(InternalServerError);
    expect(error).toMatchObject({ code: "http_500", message: "HTTP 500 with an empty body" });
  });

  it.each([
    ["truncated JSON", '{"code":"not_fo'],
    ["JSON without code and message", '{"error":"nope"}'],
  ])("reports %s as invalid_error_body with a snippet", async (_, body) => {
    server.route("GET", "/org/limits", { status: 404, body, headers: { "Content-Type": "application/json" } });
    const error = await rejection(client().limits.get());
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.code).toBe("invalid_error_body");
    expect(error.message).toContain(JSON.stringify(body));
  });

  it("reports a 2xx body that is not JSON as InvalidResponseError", async () => {
    server.route("GET", "/org/limits", {
      status: 200,
      body: '{"max_concurrent_sess',
      headers: { "Content-Type": "application/json", "X-Request-Id": "req_bad" },
    });
    const error = await rejection(client().limits.get());
    expect(error).toBeInstanceOf(InvalidResponseError);
    expect(error).toMatchObject({ status: 200, code: "invalid_response_body", requestId: "req_bad" });
    expect(error.message).toContain("max_concurrent_sess");
  });

  it("throws the same typed errors from raw calls", async () => {
    server.route("GET", "/org/projects/p9", { status: 404, body: { code: "not_found", message: "No project p9." } });
    const error = await rejection(client().GET("/org/projects/{id}", { params: { path: { id: "p9" } } }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(error.code).toBe("not_found");
  });

  it("reports a refused connection as APIConnectionError", async () => {
    const closed = await startTestServer();
    await closed.close();
    const error = await rejection(createClient(testOptions(closed.url, { ...transport, maxRetries: 0 })).limits.get());
    expect(error).toBeInstanceOf(APIConnectionError);
    expect(error.code).toBe("connection_error");
    expect(error.message).toContain(`GET ${closed.url}/org/limits`);
    expect(error.message).toContain("ECONNREFUSED");
    expect(error.cause).toBeDefined();
  });

  it("reports a reset connection as APIConnectionError", async () => {
    server.route("GET", "/org/limits", { reset: true });
    const error = await rejection(client().limits.get());
    expect(error).toBeInstanceOf(APIConnectionError);
  });

  it("reports a connection closed halfway through the body as APIConnectionError", async () => {
    server.route("GET", "/org/limits", (_, response) => {
      response.writeHead(200, { "Content-Type": "application/json", "Content-Length": "1000" });
      response.write('{"max_concurrent_sessions":', () => response.socket?.destroy());
    });
    await expect(client().limits.get()).rejects.toBeInstanceOf(APIConnectionError);
  });

  it("reports no answer within timeoutMs as APITimeoutError", async () => {
    server.route("GET", "/org/limits", { hang: true });
    const error = await rejection(client().limits.get({ timeoutMs: 30 }));
    expect(error).toBeInstanceOf(APITimeoutError);
    expect(error).toMatchObject({ code: "timeout" });
    expect(error.message).toContain("30 ms");
  });

  it("reports the caller's abort as APIUserAbortError", async () => {
    server.route("GET", "/org/limits", { hang: true });
    const controller = new AbortController();
    const call = client().limits.get({ signal: controller.signal });
    await server.waitForRequests(1);
    controller.abort();
    const error = await rejection(call);
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(error.code).toBe("aborted");
  });

  it("sends nothing when the signal has already aborted", async () => {
    server.route("GET", "/org/limits", { body: {} });
    const error = await rejection(client().limits.get({ signal: AbortSignal.abort() }));
    expect(error).toBeInstanceOf(APIUserAbortError);
    expect(server.requests).toHaveLength(0);
  });
});
