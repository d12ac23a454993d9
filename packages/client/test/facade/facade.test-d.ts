import type {
  Browser,
  Extension,
  ManagedAuth,
  ManagedAuthLoginResponse,
  ManagedAuthSubmitResponse,
  ManagedAuthTimelineEvent,
  OrgLimits,
  Project,
  ProjectLimits,
  WebMcpInvocationResult,
  WebMcpToolList,
} from "@browser-service/types";
import { describe, expectTypeOf, it } from "vitest";
import { type APIError, type BrowserServiceClient, createClient, type OutcomeUnknownError } from "../../src/index.js";

declare const client: BrowserServiceClient;

describe("facade types", () => {
  it("returns the operation's success body, and void for 204", () => {
    expectTypeOf(client.projects.list()).resolves.toEqualTypeOf<Project[]>();
    expectTypeOf(client.projects.create({ name: "staging" })).resolves.toEqualTypeOf<Project>();
    expectTypeOf(client.projects.delete("proj_1")).resolves.toEqualTypeOf<void>();
    expectTypeOf(client.projects.getLimits("proj_1")).resolves.toEqualTypeOf<ProjectLimits>();
    expectTypeOf(client.limits.get()).resolves.toEqualTypeOf<OrgLimits>();
    expectTypeOf(client.authConnections.get("conn_1")).resolves.toEqualTypeOf<ManagedAuth>();
    expectTypeOf(client.authConnections.create({ domain: "example.com", profile_name: "shop" })).resolves.toEqualTypeOf<ManagedAuth>();
    expectTypeOf(client.authConnections.update("conn_1", { login_url: "" })).resolves.toEqualTypeOf<ManagedAuth>();
    expectTypeOf(client.authConnections.delete("conn_1")).resolves.toEqualTypeOf<void>();
    expectTypeOf(client.authConnections.login("conn_1")).resolves.toEqualTypeOf<ManagedAuthLoginResponse>();
    expectTypeOf(client.authConnections.submit("conn_1", { selected_choice_id: "c1" })).resolves.toEqualTypeOf<ManagedAuthSubmitResponse>();
    expectTypeOf(client.authConnections.follow("conn_1")).resolves.toEqualTypeOf<ReadableStream<Uint8Array<ArrayBuffer>>>();
    expectTypeOf(client.authConnections.timelineAll("conn_1", { type: "health_check" })).toEqualTypeOf<
      AsyncGenerator<ManagedAuthTimelineEvent, void, undefined>
    >();
    expectTypeOf(client.browsers.create()).resolves.toEqualTypeOf<Browser>();
    expectTypeOf(client.webmcp.listTools("b1")).resolves.toEqualTypeOf<WebMcpToolList>();
    expectTypeOf(client.webmcp.invoke("b1", { tool_ref: "t", input: {} })).resolves.toEqualTypeOf<WebMcpInvocationResult>();
    expectTypeOf(client.extensions.upload({ file: new Uint8Array() })).resolves.toEqualTypeOf<Extension>();
  });

  it("iterates items with listAll", () => {
    expectTypeOf(client.projects.listAll({ query: "stag" })).toEqualTypeOf<AsyncGenerator<Project, void, undefined>>();
    expectTypeOf(client.browsers.listAll()).toEqualTypeOf<AsyncGenerator<Browser, void, undefined>>();
  });

  it("requires the body's required fields and rejects wrong ones", () => {
    // @ts-expect-error name is required
    void client.projects.create({});
    // @ts-expect-error name is a string
    void client.projects.create({ name: 1 });
    // @ts-expect-error the body is required
    void client.projects.create();
    // @ts-expect-error tool_ref and input are required
    void client.webmcp.invoke("b1", { timeout_sec: 5 });
    // @ts-expect-error the browser id or name comes first
    void client.webmcp.invoke({ tool_ref: "t", input: {} });
    // @ts-expect-error not a status
    void client.projects.update("p1", { status: "deleted" });
    // @ts-expect-error max_pooled_sessions can never be set
    void client.projects.updateLimits("p1", { max_pooled_sessions: 3 });
    // @ts-expect-error not a query parameter of listProjects
    void client.projects.list({ sort: "name" });
    // @ts-expect-error profile_name is required
    void client.authConnections.create({ domain: "example.com" });
    // @ts-expect-error field values or a choice, not both
    void client.authConnections.submit("conn_1", { field_values: {}, selected_choice_id: "c1" });
    // @ts-expect-error only a credential of the project, by name
    void client.authConnections.update("conn_1", { credential: { provider: "vault", path: "kv/x" } });
  });

  it("takes a path, bytes, a Blob or a stream as the upload file", () => {
    void client.extensions.upload({ file: "./ext.zip", name: "ad-blocker" });
    void client.extensions.upload({ file: new Blob([]) });
    void client.extensions.upload({ file: new ArrayBuffer(8) });
    void client.extensions.upload({ file: new ReadableStream<Uint8Array>() });
    // @ts-expect-error not a file
    void client.extensions.upload({ file: 42 });
    // @ts-expect-error the file is required
    void client.extensions.upload({ name: "ad-blocker" });
  });

  it("takes per-call options last", () => {
    void client.limits.get({ projectId: null, timeoutMs: 1000, maxRetries: 0, signal: AbortSignal.timeout(5) });
    void client.projects.get("p1", { projectId: "proj_2", headers: { "X-Trace": "1" } });
    // @ts-expect-error not an option
    void client.limits.get({ retries: 1 });
  });
});

describe("archive downloads", () => {
  it("resolve to bytes", () => {
    expectTypeOf(client.extensions.download("ad-blocker")).resolves.toEqualTypeOf<Uint8Array>();
  });
});

describe("raw call types", () => {
  it("types data from paths, without an error branch", async () => {
    const { data, response } = await client.GET("/org/projects", { params: { query: { limit: 5 } } });
    expectTypeOf(data).toEqualTypeOf<Project[]>();
    expectTypeOf(response).toEqualTypeOf<Response>();
    const patched = await client.PATCH("/org/projects/{id}", { params: { path: { id: "p1" } }, body: { name: "x" }, projectId: null });
    expectTypeOf(patched.data).toEqualTypeOf<Project>();
  });

  it("requires path parameters and bodies, and knows the paths", () => {
    // @ts-expect-error path parameters are required
    void client.GET("/org/projects/{id}");
    // @ts-expect-error no such path
    void client.GET("/org/nothing");
    // @ts-expect-error the body is required
    void client.POST("/org/projects", {});
    // @ts-expect-error PATCH /extensions does not exist
    void client.PATCH("/extensions");
  });
});

describe("creation and errors", () => {
  it("takes every option as optional", () => {
    expectTypeOf(createClient).parameter(0).toEqualTypeOf<Parameters<typeof createClient>[0]>();
    void createClient();
    void createClient({ apiKey: "k", baseUrl: "http://127.0.0.1:8787", projectId: null, timeoutMs: 1, maxRetries: 0, fetch });
  });

  it("gives OutcomeUnknownError its invocation id", () => {
    expectTypeOf<OutcomeUnknownError["invocationId"]>().toEqualTypeOf<string | undefined>();
    expectTypeOf<OutcomeUnknownError>().toExtend<APIError>();
  });
});
