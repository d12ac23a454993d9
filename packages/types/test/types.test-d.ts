import { describe, expectTypeOf, it } from "vitest";
import type {
  BrowserProxyConfig,
  CreateAuthConnectionRequestBody,
  CreateAuthConnectionResponse,
  CreateProjectErrorCode,
  CredentialReference,
  DeleteProjectResponse,
  ErrorCode,
  Extension,
  FollowAuthConnectionResponse,
  InvokeWebMcpToolErrorResponses,
  InvokeWebMcpToolRequestBody,
  ListAuthConnectionsResponse,
  ListAuthConnectionTimelineResponse,
  ListProjectsQuery,
  ListProjectsResponse,
  LoginAuthConnectionRequestBody,
  ManagedAuth,
  ManagedAuthCreateRequest,
  ManagedAuthEvent,
  ManagedAuthLoginRequest,
  ManagedAuthSubmitRequest,
  ManagedAuthTimelineEvent,
  OrgLimits,
  OTLPDestinationRef,
  Project,
  paths,
  SubmitAuthConnectionErrorCode,
  UpdateProjectLimitsRequest,
  WebMcpInvocationResult,
  WebMcpToolSource,
} from "../src/index.js";

describe("exactly-one-of shapes", () => {
  it("accepts each proxy config alternative alone", () => {
    expectTypeOf({ mode: "direct" } as const).toExtend<BrowserProxyConfig>();
    expectTypeOf({ id: "px_1" }).toExtend<BrowserProxyConfig>();
    expectTypeOf({ name: "office" }).toExtend<BrowserProxyConfig>();
  });

  it("rejects two proxy keys at once, an empty object and an unknown mode", () => {
    // @ts-expect-error two alternatives' keys at once
    const twoKeys: BrowserProxyConfig = { mode: "direct", id: "px_1" };
    // @ts-expect-error none of the keys
    const empty: BrowserProxyConfig = {};
    // @ts-expect-error not a mode
    const badMode: BrowserProxyConfig = { mode: "socks" };
    void [twoKeys, empty, badMode];
  });

  it("keeps credential references to one shape", () => {
    const byName: CredentialReference = { name: "github" };
    const byPath: CredentialReference = { provider: "vault", path: "kv/github" };
    const auto: CredentialReference = { provider: "vault", auto: true };
    // @ts-expect-error name and provider together
    const mixed: CredentialReference = { name: "github", provider: "vault" };
    // @ts-expect-error auto must be true
    const autoFalse: CredentialReference = { provider: "vault", auto: false };
    void [byName, byPath, auto, mixed, autoFalse];
  });

  it("keeps a submit to field values or one choice", () => {
    const values: ManagedAuthSubmitRequest = { interaction_id: "int_1", field_values: { fld_code: "492039" } };
    const choice: ManagedAuthSubmitRequest = { selected_choice_id: "mfa_sms_1" };
    // @ts-expect-error field values and a choice together
    const both: ManagedAuthSubmitRequest = { field_values: {}, selected_choice_id: "mfa_sms_1" };
    // @ts-expect-error neither
    const neither: ManagedAuthSubmitRequest = { interaction_id: "int_1" };
    void [values, choice, both, neither];
  });

  it("tells a flow's events apart by `event`", () => {
    const kind = (event: ManagedAuthEvent) =>
      event.event === "managed_auth_state" ? event.flow_status : event.event === "error" ? event.error.code : event.timestamp;
    expectTypeOf(kind).returns.toEqualTypeOf<string>();
    expectTypeOf<ManagedAuthEvent["event"]>().toEqualTypeOf<"managed_auth_state" | "error" | "sse_heartbeat">();
  });

  it("keeps OTLP destinations to id or name", () => {
    const byId: OTLPDestinationRef = { id: "dst_1" };
    // @ts-expect-error id and name together
    const both: OTLPDestinationRef = { id: "dst_1", name: "grafana" };
    void [byId, both];
  });
});

describe("nullability and optionality", () => {
  it("types nullable fields as `| null`", () => {
    expectTypeOf<ManagedAuth["flow_status"]>().toEqualTypeOf<"IN_PROGRESS" | "SUCCESS" | "FAILED" | "EXPIRED" | "CANCELED" | null | undefined>();
    expectTypeOf<Extension["name"]>().toEqualTypeOf<string | null>();
    expectTypeOf<Extension["last_used_at"]>().toEqualTypeOf<string | null>();
    expectTypeOf<OrgLimits["concurrent_sessions_used"]>().toEqualTypeOf<number | null>();
    expectTypeOf<WebMcpToolSource["frame"]>().toEqualTypeOf<{ frame_id: number; url: string } | null>();
  });

  it("keeps required fields required and non-nullable", () => {
    expectTypeOf<ManagedAuth["status"]>().toEqualTypeOf<"AUTHENTICATED" | "NEEDS_AUTH">();
    expectTypeOf<Project["id"]>().toEqualTypeOf<string>();
    expectTypeOf<Extension["checksum"]>().toEqualTypeOf<string | undefined>();
  });

  it("never accepts max_pooled_sessions in a request", () => {
    expectTypeOf<UpdateProjectLimitsRequest["max_pooled_sessions"]>().toEqualTypeOf<undefined>();
    // @ts-expect-error deprecated and never settable
    const pooled: UpdateProjectLimitsRequest = { max_concurrent_sessions: 1, max_pooled_sessions: 2 };
    void pooled;
  });
});

describe("operation types", () => {
  it("names list inputs and outputs", () => {
    expectTypeOf<ListProjectsQuery>().toEqualTypeOf<{ offset?: number; limit?: number; name?: string; query?: string }>();
    expectTypeOf<ListProjectsResponse>().toEqualTypeOf<Project[]>();
    expectTypeOf<DeleteProjectResponse>().toEqualTypeOf<void>();
  });

  it("types the auth connection operations", () => {
    expectTypeOf<CreateAuthConnectionRequestBody>().toEqualTypeOf<ManagedAuthCreateRequest>();
    expectTypeOf<CreateAuthConnectionResponse>().toEqualTypeOf<ManagedAuth>();
    expectTypeOf<ListAuthConnectionsResponse>().toEqualTypeOf<ManagedAuth[]>();
    expectTypeOf<ListAuthConnectionTimelineResponse>().toEqualTypeOf<ManagedAuthTimelineEvent[]>();
    expectTypeOf<LoginAuthConnectionRequestBody>().toEqualTypeOf<ManagedAuthLoginRequest>();
    expectTypeOf<FollowAuthConnectionResponse>().toEqualTypeOf<ReadableStream<Uint8Array<ArrayBuffer>>>();
    expectTypeOf<ManagedAuthCreateRequest["credential"]>().toEqualTypeOf<{ name: string } | undefined>();
    expectTypeOf<
      "flow_in_progress" | "no_flow" | "stale_interaction" | "invalid_submission" | "auth_connection_exists" | "credential_not_found"
    >().toExtend<ErrorCode>();
    expectTypeOf<"stale_interaction">().toExtend<SubmitAuthConnectionErrorCode>();
  });

  it("types the WebMCP invoke body, result and its 504 body", () => {
    expectTypeOf<InvokeWebMcpToolRequestBody>().toEqualTypeOf<{
      tool_ref: string;
      input: { [key: string]: unknown };
      timeout_sec?: number;
    }>();
    expectTypeOf<WebMcpInvocationResult["status"]>().toEqualTypeOf<"completed" | "canceled" | "error" | "awaiting_submission">();
    expectTypeOf<InvokeWebMcpToolErrorResponses[504]["code"]>().toEqualTypeOf<"outcome_unknown">();
    expectTypeOf<InvokeWebMcpToolErrorResponses[504]["invocation_id"]>().toEqualTypeOf<string | undefined>();
  });

  it("lists each operation's error codes", () => {
    expectTypeOf<"name_conflict">().toExtend<CreateProjectErrorCode>();
    expectTypeOf<"tool_ref_stale">().not.toExtend<CreateProjectErrorCode>();
    expectTypeOf<"tool_ref_stale" | "outcome_unknown" | "concurrency_limit_exceeded">().toExtend<ErrorCode>();
  });

  it("exposes paths for openapi-fetch", () => {
    expectTypeOf<keyof paths>().toEqualTypeOf<
      | "/healthz"
      | "/readyz"
      | "/auth/connections"
      | "/auth/connections/{id}"
      | "/auth/connections/{id}/login"
      | "/auth/connections/{id}/submit"
      | "/auth/connections/{id}/events"
      | "/auth/connections/{id}/timeline"
      | "/org/projects"
      | "/org/projects/{id}"
      | "/org/limits"
      | "/org/projects/{id}/limits"
      | "/extensions"
      | "/extensions/{id_or_name}"
      | "/extensions/{id_or_name}/metadata"
      | "/profiles"
      | "/profiles/{id_or_name}"
      | "/profiles/{id_or_name}/download"
      | "/credentials"
      | "/credentials/{id_or_name}"
      | "/credentials/{id_or_name}/totp-code"
      | "/browsers"
      | "/browsers/{id_or_name}"
      | "/browsers/{id_or_name}/webmcp/tools"
      | "/browsers/{id_or_name}/webmcp/invoke"
      | "/browsers/{id_or_name}/telemetry/events"
      | "/browsers/{id_or_name}/telemetry/stream"
    >();
  });
});
