import { beforeEach, describe, expect, it } from "vitest";
import { createClient } from "../../src/index.js";
import { useTestServer } from "../helpers/test-server.js";
import { testOptions, transports } from "../helpers/transports.js";

const server = useTestServer();
beforeEach(() => {});

const project = { id: "proj_1", name: "staging", status: "active", created_at: "2025-01-01T00:00:00Z", updated_at: "2025-01-01T00:00:00Z" };
const client = () => createClient(testOptions(server.url));
const last = () => {
  const request = server.requests.at(-1)!;
  return {
    method: request.method,
    url: request.url,
    body: request.body.length ? JSON.parse(request.body.toString()) : undefined,
    type: request.headers["content-type"],
  };
};

describe("the operation facade", () => {
  it("creates with a JSON body and returns the parsed 201 body", async () => {
    server.route("POST", "/org/projects", { status: 201, body: project });
    await expect(client().projects.create({ name: "staging" })).resolves.toEqual(project);
    expect(last()).toEqual({ method: "POST", url: "/org/projects", body: { name: "staging" }, type: "application/json" });
  });

  it("puts the path parameter first, then the body", async () => {
    server.route("PATCH", "/org/projects/proj_1", { body: { ...project, status: "archived" } });
    await expect(client().projects.update("proj_1", { status: "archived" })).resolves.toMatchObject({ status: "archived" });
    expect(last()).toMatchObject({ method: "PATCH", url: "/org/projects/proj_1", body: { status: "archived" } });
    server.route("PATCH", "/org/projects/proj_1/limits", { body: { max_concurrent_sessions: 3 } });
    await expect(client().projects.updateLimits("proj_1", { max_concurrent_sessions: 3 })).resolves.toEqual({ max_concurrent_sessions: 3 });
    expect(last()).toMatchObject({ method: "PATCH", url: "/org/projects/proj_1/limits", body: { max_concurrent_sessions: 3 } });
  });

  it("encodes path parameters", async () => {
    server.route("GET", "/org/projects/my%20project%2Fv2", { body: project });
    await client().projects.get("my project/v2");
    expect(last().url).toBe("/org/projects/my%20project%2Fv2");
  });

  it("reads without arguments, or with the path parameter only", async () => {
    server.route("GET", "/org/limits", { body: { max_concurrent_sessions: 10 } });
    await expect(client().limits.get()).resolves.toEqual({ max_concurrent_sessions: 10 });
    server.route("GET", "/org/projects/proj_1/limits", { body: { max_concurrent_sessions: null } });
    await expect(client().projects.getLimits("proj_1")).resolves.toEqual({ max_concurrent_sessions: null });
    server.route("GET", "/auth/connections/conn_1", { body: { id: "conn_1", domain: "example.org" } });
    await expect(client().authConnections.get("conn_1")).resolves.toMatchObject({ id: "conn_1" });
    server.route("GET", "/browsers/b1/webmcp/tools", { body: { tools: [] } });
    await expect(client().webmcp.listTools("b1")).resolves.toEqual({ tools: [] });
    expect(server.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
      "GET /org/limits",
      "GET /org/projects/proj_1/limits",
      "GET /auth/connections/conn_1",
      "GET /browsers/b1/webmcp/tools",
    ]);
  });

  it("returns undefined for a 204", async () => {
    server.route("DELETE", "/org/projects/proj_1", { status: 204 });
    await expect(client().projects.delete("proj_1")).resolves.toBeUndefined();
    expect(last()).toMatchObject({ method: "DELETE", url: "/org/projects/proj_1", body: undefined });
  });

  it("resolves an archive download to its exact bytes, and a refusal to a typed error", async () => {
    // Not UTF-8 and not JSON: every byte value, as a zip holds them.
    const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
    server.route("GET", "/extensions/ad-blocker", { headers: { "content-type": "application/zip" }, body: bytes });
    const downloaded = await client().extensions.download("ad-blocker");
    expect(downloaded).toBeInstanceOf(Uint8Array);
    expect(Buffer.from(downloaded).equals(bytes)).toBe(true);
    server.route("GET", "/extensions/gone", { status: 404, body: { code: "not_found", message: "No extension." } });
    await expect(client().extensions.download("gone")).rejects.toMatchObject({ status: 404, code: "not_found" });
    server.route("GET", "/extensions/empty", { headers: { "content-type": "application/zip", "content-length": "0" }, body: "" });
    await expect(client().extensions.download("empty")).resolves.toEqual(new Uint8Array(0));
  });

  it("sends an optional body only when given", async () => {
    server.route("POST", "/browsers", { status: 201, body: { id: "brw_1" } });
    await client().browsers.create();
    expect(last()).toMatchObject({ body: undefined, type: undefined });
    await client().browsers.create({ name: "checkout-agent", start_url: "https://shop.example.org/" });
    expect(last().body).toEqual({ name: "checkout-agent", start_url: "https://shop.example.org/" });
  });

  it("invokes a WebMCP tool with the body as given", async () => {
    const result = { invocation_id: "inv_1", status: "awaiting_submission", output: { form_populated: true, submitted: false } };
    server.route("POST", "/browsers/my-browser/webmcp/invoke", { body: result });
    const body = { tool_ref: "tref_1", input: { q: "shoes" }, timeout_sec: 30 };
    await expect(client().webmcp.invoke("my-browser", body)).resolves.toEqual(result);
    expect(last()).toMatchObject({ url: "/browsers/my-browser/webmcp/invoke", body });
  });
});

describe("raw calls", () => {
  it("take openapi-fetch's params and resolve to { data, response }", async () => {
    server.route("GET", "/org/projects", { body: [project], headers: { "X-Has-More": "false", "X-Next-Offset": "0", "X-Request-Id": "req_1" } });
    const { data, response } = await client().GET("/org/projects", { params: { query: { name: "staging", limit: 5 } } });
    expect(data).toEqual([project]);
    expect(response.status).toBe(200);
    expect(response.headers.get("x-request-id")).toBe("req_1");
    expect(last().url).toBe("/org/projects?name=staging&limit=5");
  });

  it("fill path parameters and send bodies", async () => {
    server.route("PATCH", "/org/projects/proj_1", { body: project });
    const { data } = await client().PATCH("/org/projects/{id}", { params: { path: { id: "proj_1" } }, body: { name: "staging" } });
    expect(data).toEqual(project);
    expect(last()).toMatchObject({ method: "PATCH", body: { name: "staging" } });
  });

  it.each(transports)("read the body as parseAs asks over the %s", async (_, transport) => {
    server.route("GET", "/org/limits", { body: { max_concurrent_sessions: 10 } });
    const raw = createClient(testOptions(server.url, transport));
    const text = '{"max_concurrent_sessions":10}';
    expect((await raw.GET("/org/limits", { parseAs: "text" })).data).toBe(text);
    expect(new TextDecoder().decode((await raw.GET("/org/limits", { parseAs: "arrayBuffer" })).data)).toBe(text);
    expect(await (await raw.GET("/org/limits", { parseAs: "blob" })).data.text()).toBe(text);
    expect(await new Response((await raw.GET("/org/limits", { parseAs: "stream" })).data).text()).toBe(text);
  });

  it("resolve a 204 to undefined data", async () => {
    server.route("DELETE", "/browsers/b1", { status: 204 });
    const { data, response } = await client().DELETE("/browsers/{id_or_name}", { params: { path: { id_or_name: "b1" } } });
    expect(data).toBeUndefined();
    expect(response.status).toBe(204);
  });
});
