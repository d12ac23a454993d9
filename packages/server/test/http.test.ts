import Fastify from "fastify";
import { describe, expect, it } from "vitest";
import { installResponseCheck, type ResponseMismatch } from "../src/http/response-check.js";
import "../src/http/fastify-augment.js";
import { specOperations } from "./support/spec-error-codes.js";
import { useTestServer } from "./support/test-server.js";

const t = useTestServer();
const auth = () => ({ authorization: `Bearer ${t.orgKey}` });

describe("routing", () => {
  it("registers every operation of the spec", () => {
    const operations = specOperations();
    expect(operations.length).toBeGreaterThanOrEqual(17);
    for (const { method, path } of operations) {
      expect(t.server.app.hasRoute({ method: method as "GET", url: path.replace(/\{([^}]+)\}/g, ":$1") }), `${method} ${path}`).toBe(true);
    }
  });

  it("answers an unknown path with 404 not_found and a known path's other methods with 405, even without credentials", async () => {
    for (const request of [
      { method: "GET" as const, url: "/nowhere", status: 404, code: "not_found" },
      { method: "PUT" as const, url: "/org/projects", status: 405, code: "method_not_allowed" },
      { method: "HEAD" as const, url: "/org/limits", status: 405, code: "method_not_allowed" },
    ]) {
      const response = await t.server.app.inject({ method: request.method, url: request.url });
      expect(response.statusCode).toBe(request.status);
      if (request.method !== "HEAD") expect(response.json()).toEqual({ code: request.code, message: expect.stringContaining(request.url) });
      expect(response.headers["x-request-id"]).toMatch(/^req_[0-9a-f]{20}$/);
    }
  });

  it("gives every response its own X-Request-Id", async () => {
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add(String((await t.server.app.inject({ method: "GET", url: "/org/limits", headers: auth() })).headers["x-request-id"]));
    expect(ids.size).toBe(5);
  });

  it("accepts project names of 255 characters in the path", async () => {
    const name = "n".repeat(255);
    await t.client().projects.create({ name });
    expect((await t.client().projects.get(name)).name).toBe(name);
  });
});

describe("request checks", () => {
  it("refuses a query parameter the operation does not declare, on operations with query parameters and without", async () => {
    for (const url of ["/org/projects?limt=5", "/org/limits?limt=5", "/org/projects/Default?__proto__=1", "/browsers/nothing?a%2Fb=1"]) {
      const response = await t.server.app.inject({ method: "GET", url, headers: auth() });
      expect(response.statusCode, url).toBe(400);
      const name = url.split("?")[1]?.split("=")[0] === "a%2Fb" ? "a~1b" : url.split("?")[1]?.split("=")[0];
      expect(response.json().details, url).toEqual([{ code: "additionalProperties", message: `Query: /${name} is not an allowed property.` }]);
    }
    expect((await t.server.app.inject({ method: "GET", url: "/org/limits", headers: auth() })).statusCode).toBe(200);
  });

  it("refuses __proto__ or constructor.prototype anywhere in a body, saying so: 400 forbidden_property_name", async () => {
    for (const payload of [
      '{"name":"x","__proto__":{"admin":true}}',
      '{"name":"x","\\u005f_proto__":{}}',
      '{"tool_ref":"t","input":{"a":{"constructor":{"prototype":{"admin":true}}}}}',
    ]) {
      const url = payload.includes("tool_ref") ? "/browsers/nothing/webmcp/invoke" : "/org/projects";
      const response = await t.server.app.inject({ method: "POST", url, headers: { ...auth(), "content-type": "application/json" }, payload });
      expect(response.statusCode, payload).toBe(400);
      expect(response.json().details, payload).toEqual([{ code: "forbidden_property_name", message: expect.stringContaining("__proto__") }]);
    }
    // A key that only contains the word is an ordinary key.
    const fine = await t.server.app.inject({
      method: "POST",
      url: "/org/projects",
      headers: { ...auth(), "content-type": "application/json" },
      payload: '{"name":"my __proto__ project"}',
    });
    expect(fine.statusCode).toBe(201);
  });

  it("invalid JSON is 400 bad_request", async () => {
    const response = await t.server.app.inject({
      method: "POST",
      url: "/org/projects",
      headers: { ...auth(), "content-type": "application/json" },
      payload: '{"name":',
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toMatchObject({
      code: "bad_request",
      details: [{ code: "invalid_json", message: expect.stringMatching(/^The body is not valid JSON: .*JSON/) }],
    });
  });

  it("a wrong Content-Type is 415 unsupported_media_type", async () => {
    for (const type of ["text/plain", "application/xml", "multipart/form-data; boundary=x"]) {
      const response = await t.server.app.inject({ method: "POST", url: "/org/projects", headers: { ...auth(), "content-type": type }, payload: "name=x" });
      expect(response.statusCode, type).toBe(415);
      expect(response.json().code).toBe("unsupported_media_type");
    }
  });

  it("a missing required body is 400 with a detail saying so", async () => {
    const response = await t.server.app.inject({ method: "POST", url: "/org/projects", headers: auth() });
    expect(response.statusCode).toBe(400);
    expect(response.json().details).toEqual([{ code: "required", message: expect.stringContaining("body is required") }]);
  });

  it("reports every problem, each naming its JSON pointer, with the rule as code", async () => {
    const response = await t.server.app.inject({ method: "GET", url: "/org/projects?limit=0&offset=x&color=red", headers: auth() });
    expect(response.statusCode).toBe(400);
    const body = response.json() as { message: string; details: { code: string; message: string }[] };
    expect(body.message).toBe("The request is invalid (3 problems).");
    expect(body.details.map((detail) => detail.code).sort()).toEqual(["additionalProperties", "minimum", "type"]);
    expect(body.details.map((detail) => detail.message).join(" ")).toMatch(/\/limit.*|\/offset/);
    const wrongType = await t.server.app.inject({
      method: "POST",
      url: "/org/projects",
      headers: { ...auth(), "content-type": "application/json" },
      payload: { name: 7, extra: true },
    });
    expect(wrongType.json().details).toEqual(
      expect.arrayContaining([
        { code: "type", message: expect.stringContaining("/name") },
        { code: "additionalProperties", message: expect.stringContaining("/extra") },
      ]),
    );
  });

  it("POST /browsers takes an empty body or none, but not a non-object", async () => {
    const response = await t.server.app.inject({ method: "POST", url: "/browsers", headers: { ...auth(), "content-type": "application/json" }, payload: "[]" });
    expect(response.statusCode).toBe(400);
  });
});

describe("the response check", () => {
  it("records a body, status or header that breaks the spec", async () => {
    const mismatches: ResponseMismatch[] = [];
    const app = Fastify();
    installResponseCheck(app, { onMismatch: (mismatch) => mismatches.push(mismatch), errorCodes: { getOrgLimits: { "404": ["project_not_found"] } } });
    app.get("/wrong-body", { config: { operationId: "getOrgLimits" } }, async (_request, reply) =>
      reply.header("x-request-id", "req_1").send({ max_concurrent_sessions: -1 }),
    );
    app.get("/wrong-status", { config: { operationId: "getOrgLimits" } }, async (_request, reply) =>
      reply.code(418).header("x-request-id", "req_2").send({ code: "teapot", message: "x" }),
    );
    app.get("/wrong-code", { config: { operationId: "getOrgLimits" } }, async (_request, reply) =>
      reply.code(404).header("x-request-id", "req_3").send({ code: "not_found", message: "x" }),
    );
    app.get("/no-id", { config: { operationId: "listProjects" } }, async () => []);
    for (const url of ["/wrong-body", "/wrong-status", "/wrong-code", "/no-id"]) await app.inject({ method: "GET", url });
    expect(mismatches.map((mismatch) => [mismatch.url, mismatch.problems.length > 0])).toEqual([
      ["/wrong-body", true],
      ["/wrong-status", true],
      ["/wrong-code", true],
      ["/no-id", true],
    ]);
    expect(mismatches[2]?.problems.join()).toContain("not_found is not listed");
    expect(mismatches[3]?.problems).toEqual(["X-Request-Id is missing", "X-Has-More is not true or false", "X-Next-Offset is not a non-negative integer"]);
    await app.close();
  });
});
