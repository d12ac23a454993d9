import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { BrowserServiceError, ClientOptionsError, createClient } from "../../src/index.js";
import { useTestServer } from "../helpers/test-server.js";

const server = useTestServer();
beforeEach(() => {
  server.route("GET", "/org/projects", { body: [], headers: { "X-Has-More": "false", "X-Next-Offset": "0" } });
  server.route("GET", "/org/limits", { body: { max_concurrent_sessions: 5 } });
  // Every test starts with none of the client's variables set, whatever the shell has.
  vi.stubEnv("BROWSER_SERVICE_API_KEY", "");
  vi.stubEnv("BROWSER_SERVICE_BASE_URL", "");
  vi.stubEnv("BROWSER_SERVICE_PROJECT_ID", "");
});
afterEach(() => vi.unstubAllEnvs());

const lastHeaders = () => server.requests.at(-1)!.headers;

describe("bearer auth and the project header", () => {
  it("sends Authorization: Bearer <apiKey> and X-Service-Project-Id on every call", async () => {
    const client = createClient({ apiKey: "key_1", baseUrl: server.url, projectId: "proj_a" });
    await client.projects.list();
    await client.limits.get();
    await client.GET("/org/limits");
    expect(server.requests).toHaveLength(3);
    for (const request of server.requests) {
      expect(request.headers.authorization).toBe("Bearer key_1");
      expect(request.headers["x-service-project-id"]).toBe("proj_a");
    }
  });

  it("sends no project header when no project is configured", async () => {
    await createClient({ apiKey: "key_1", baseUrl: server.url }).limits.get();
    expect(lastHeaders()).not.toHaveProperty("x-service-project-id");
  });

  it("lets one call name another project, or none, through the facade and raw calls", async () => {
    const client = createClient({ apiKey: "key_1", baseUrl: server.url, projectId: "proj_a" });
    await client.limits.get({ projectId: "proj_b" });
    expect(lastHeaders()["x-service-project-id"]).toBe("proj_b");
    await client.limits.get({ projectId: null });
    expect(lastHeaders()).not.toHaveProperty("x-service-project-id");
    await client.GET("/org/limits", { projectId: "proj_c" });
    expect(lastHeaders()["x-service-project-id"]).toBe("proj_c");
    await client.GET("/org/limits", { projectId: null });
    expect(lastHeaders()).not.toHaveProperty("x-service-project-id");
    await client.limits.get();
    expect(lastHeaders()["x-service-project-id"]).toBe("proj_a");
  });

  it("adds a project to one call of a client that has none", async () => {
    const client = createClient({ apiKey: "key_1", baseUrl: server.url });
    await client.projects.list({ query: "stag" }, { projectId: "proj_b" });
    expect(lastHeaders()["x-service-project-id"]).toBe("proj_b");
    expect(server.requests.at(-1)!.url).toBe("/org/projects?query=stag");
  });

  it("adds the client's and the call's extra headers, and never lets them replace the key", async () => {
    const client = createClient({ apiKey: "key_1", baseUrl: server.url, headers: { "X-Team": "agents" } });
    await client.limits.get({ headers: { "X-Trace": "t1" } });
    expect(lastHeaders()).toMatchObject({ "x-team": "agents", "x-trace": "t1", authorization: "Bearer key_1" });
    await createClient({ apiKey: "key_1", baseUrl: server.url, headers: { Authorization: "Bearer other" } }).limits.get();
    expect(lastHeaders().authorization).toBe("Bearer key_1");
  });
});

describe("environment variables", () => {
  it("reads the key, base URL and project from the environment when the options are absent", async () => {
    vi.stubEnv("BROWSER_SERVICE_API_KEY", "env_key");
    vi.stubEnv("BROWSER_SERVICE_BASE_URL", server.url);
    vi.stubEnv("BROWSER_SERVICE_PROJECT_ID", "proj_env");
    await createClient().limits.get();
    expect(lastHeaders()).toMatchObject({ authorization: "Bearer env_key", "x-service-project-id": "proj_env" });
  });

  it("prefers options to the environment, and projectId: null to the variable", async () => {
    vi.stubEnv("BROWSER_SERVICE_API_KEY", "env_key");
    vi.stubEnv("BROWSER_SERVICE_BASE_URL", "http://127.0.0.1:9");
    vi.stubEnv("BROWSER_SERVICE_PROJECT_ID", "proj_env");
    await createClient({ apiKey: "opt_key", baseUrl: server.url, projectId: null }).limits.get();
    expect(lastHeaders().authorization).toBe("Bearer opt_key");
    expect(lastHeaders()).not.toHaveProperty("x-service-project-id");
  });

  it("reads the environment when the client is created, not when the module loads", async () => {
    vi.stubEnv("BROWSER_SERVICE_API_KEY", "late_key");
    await createClient({ baseUrl: server.url }).limits.get();
    expect(lastHeaders().authorization).toBe("Bearer late_key");
  });
});

describe("a missing API key", () => {
  it.each([
    ["no option and no variable", {}],
    ["an empty option", { apiKey: "" }],
  ])("is a ClientOptionsError at creation (%s) that says how to fix it", (_, options) => {
    let caught: unknown;
    try {
      createClient(options);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ClientOptionsError);
    expect(caught).toBeInstanceOf(BrowserServiceError);
    expect(caught).toMatchObject({ code: "missing_api_key", name: "ClientOptionsError" });
    expect((caught as Error).message).toContain("createClient({ apiKey })");
    expect((caught as Error).message).toContain("BROWSER_SERVICE_API_KEY");
    expect(server.requests).toHaveLength(0);
  });

  it("treats a blank variable as missing", () => {
    vi.stubEnv("BROWSER_SERVICE_API_KEY", "   ");
    expect(() => createClient()).toThrow(ClientOptionsError);
  });
});
