import { type SchemaCase, schemaRef } from "./types.js";

const at = (name: string, value: unknown, valid: boolean, rule: string): SchemaCase => ({ schema: schemaRef(name), rule, value, valid });

const create = { domain: "app.acme.example.com", profile_name: "acme-admin" };
const fullCreate = {
  ...create,
  allowed_domains: ["login.acme-idp.example.com", "*.Example.ORG"],
  auto_reauth: false,
  credential: { name: "acme-admin" },
  health_check_interval: 300,
  health_checks: true,
  login_url: "https://app.acme.example.com/login",
  record_session: true,
  save_credentials: false,
};
const hundredAndOne = Array.from({ length: 101 }, (_, i) => `d${i}.example.com`);

const loginResponse = {
  id: "conn_7d2k9q4w1x8m",
  flow_expires_at: "2026-11-02T10:15:00Z",
  flow_type: "LOGIN",
  hosted_url: "https://auth.browser-service.example/login/conn_7d2k9q4w1x8m?i=int_3b7c",
  live_view_url: "https://live.browser-service.example/brs_5h3j8n2p6r",
};

const thirtyThree = Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`fld_${i}`, "v"]));

const field = { id: "fld_code", ref: "sms_code", type: "code", reason: "missing" };
const state = { event: "managed_auth_state", flow_status: "SUCCESS", flow_step: "COMPLETED", timestamp: "2026-11-02T10:02:41Z" };
const inProgress = {
  ...state,
  flow_status: "IN_PROGRESS",
  flow_step: "AWAITING_INPUT",
  hosted_url: "https://auth.browser-service.example/login/conn_1",
  live_view_url: "https://live.browser-service.example/brs_1",
};
const fullState = {
  ...inProgress,
  flow_type: "LOGIN",
  fields: [field],
  choices: [{ id: "mfa_sms_1", type: "mfa_method", label: "Text me a code" }],
  discovered_fields: [{ name: "otp", type: "code", label: "Code", selector: "#otp" }],
  mfa_options: [{ type: "sms", label: "Text message" }],
  pending_sso_buttons: [{ selector: "//button", provider: "google", label: "Continue with Google" }],
  sign_in_options: [{ id: "org_acme", label: "Acme Corp" }],
  website_error: "Incorrect code",
};
const failed = { ...state, flow_status: "FAILED", error_code: "login_failed", error_message: "The site refused the password." };
const errorEvent = { event: "error", timestamp: "2026-11-02T10:03:40Z", error: { code: "internal_error", message: "failed" } };
const heartbeat = { event: "sse_heartbeat", timestamp: "2026-11-02T10:01:27Z" };

const timelineEvent = { id: "flow_9k2m4q7w", type: "login", status: "SUCCESS", timestamp: "2026-11-02T10:00:03Z" };

/** Auth connections: creates, updates, logins, submits, the events of a flow and the timeline. */
export const authConnectionCases: readonly SchemaCase[] = [
  // ManagedAuthCreateRequest
  at("ManagedAuthCreateRequest", create, true, "domain and profile_name"),
  at("ManagedAuthCreateRequest", fullCreate, true, "every setting"),
  at("ManagedAuthCreateRequest", { ...create, domain: "*.Acme.Example.COM" }, true, "domain before normalization"),
  at("ManagedAuthCreateRequest", { profile_name: "acme-admin" }, false, "domain is required"),
  at("ManagedAuthCreateRequest", { domain: "acme.example.com" }, false, "profile_name is required"),
  at("ManagedAuthCreateRequest", { ...create, domain: "https://acme.example.com" }, false, "domain is a host name, not a URL"),
  at("ManagedAuthCreateRequest", { ...create, profile_name: "acme admin" }, false, "profile_name follows ProfileName"),
  at("ManagedAuthCreateRequest", { ...create, profile_name: "prof_aaaaaaaaaaaaaaaaaaaaaaaa" }, false, "profile_name is not shaped like an id"),
  at("ManagedAuthCreateRequest", { ...create, allowed_domains: ["a b.com"] }, false, "allowed_domains are host names"),
  at("ManagedAuthCreateRequest", { ...create, allowed_domains: hundredAndOne }, false, "allowed_domains: at most 100"),
  at("ManagedAuthCreateRequest", { ...create, health_check_interval: 299 }, false, "health_check_interval: at least 300"),
  at("ManagedAuthCreateRequest", { ...create, health_check_interval: 86401 }, false, "health_check_interval: at most 86400"),
  at("ManagedAuthCreateRequest", { ...create, health_check_interval: 600.5 }, false, "health_check_interval: an integer"),
  at("ManagedAuthCreateRequest", { ...create, login_url: "ftp://acme.example.com/login" }, false, "login_url: http or https"),
  at("ManagedAuthCreateRequest", { ...create, login_url: "" }, false, "login_url: not empty on create"),
  at("ManagedAuthCreateRequest", { ...create, credential: { provider: "my-1password", path: "Engineering/acme" } }, false, "credential: no external provider"),
  at("ManagedAuthCreateRequest", { ...create, credential: { provider: "my-1password", auto: true } }, false, "credential: no provider lookup"),
  at("ManagedAuthCreateRequest", { ...create, proxy: { id: "prx_1" } }, false, "no proxy"),
  at("ManagedAuthCreateRequest", { ...create, browser_telemetry: { enabled: true } }, false, "no browser_telemetry"),

  // ManagedAuthCredentialRef
  at("ManagedAuthCredentialRef", { name: "acme-admin" }, true, "by name"),
  at("ManagedAuthCredentialRef", {}, false, "name is required"),
  at("ManagedAuthCredentialRef", { name: "acme-admin", provider: "my-1password" }, false, "name is the only property"),
  at("ManagedAuthCredentialRef", { name: "with space" }, false, "name follows CredentialName"),

  // ManagedAuthUpdateRequest
  at("ManagedAuthUpdateRequest", { health_check_interval: 7200 }, true, "one setting"),
  at("ManagedAuthUpdateRequest", (({ domain: _d, profile_name: _p, ...rest }) => rest)(fullCreate), true, "every setting"),
  at("ManagedAuthUpdateRequest", { login_url: "" }, true, "an empty login_url clears it"),
  at("ManagedAuthUpdateRequest", { allowed_domains: [] }, true, "an empty allowed_domains empties the list"),
  at("ManagedAuthUpdateRequest", {}, false, "at least one property"),
  at("ManagedAuthUpdateRequest", { domain: "other.example.com" }, false, "domain cannot change"),
  at("ManagedAuthUpdateRequest", { profile_name: "other" }, false, "profile_name cannot change"),
  at("ManagedAuthUpdateRequest", { login_url: "not a url" }, false, "login_url: a URL or empty"),
  at("ManagedAuthUpdateRequest", { health_check_interval: 100 }, false, "health_check_interval: at least 300"),
  at("ManagedAuthUpdateRequest", { credential: { provider: "vault", path: "kv/acme" } }, false, "credential: no external provider"),

  // ManagedAuthLoginRequest and ManagedAuthLoginResponse
  at("ManagedAuthLoginRequest", {}, true, "no options"),
  at("ManagedAuthLoginRequest", { record_session: true }, true, "record this login"),
  at("ManagedAuthLoginRequest", { record_session: "yes" }, false, "record_session is a boolean"),
  at("ManagedAuthLoginRequest", { proxy: { id: "prx_1" } }, false, "no proxy override"),
  at("ManagedAuthLoginResponse", loginResponse, true, "the started flow"),
  at("ManagedAuthLoginResponse", { ...loginResponse, flow_type: "REAUTH" }, true, "a re-authentication"),
  at("ManagedAuthLoginResponse", (({ live_view_url: _l, ...rest }) => rest)(loginResponse), false, "live_view_url is required"),
  at("ManagedAuthLoginResponse", { ...loginResponse, flow_type: "login" }, false, "flow_type: LOGIN or REAUTH"),
  at("ManagedAuthLoginResponse", { ...loginResponse, handoff_code: "x" }, false, "no other properties"),

  // ManagedAuthSubmitRequest and ManagedAuthSubmitResponse
  at("ManagedAuthSubmitRequest", { field_values: { fld_code: "492039" } }, true, "field values"),
  at("ManagedAuthSubmitRequest", { interaction_id: "int_3b7c", field_values: { fld_code: "492039" } }, true, "field values for an interaction"),
  at("ManagedAuthSubmitRequest", { selected_choice_id: "mfa_sms_1" }, true, "a choice"),
  at("ManagedAuthSubmitRequest", { interaction_id: "int_3b7c", selected_choice_id: "mfa_sms_1" }, true, "a choice for an interaction"),
  at("ManagedAuthSubmitRequest", { field_values: { fld_code: "x".repeat(4096) } }, true, "a value of 4,096 characters"),
  at("ManagedAuthSubmitRequest", {}, false, "exactly one of: neither"),
  at("ManagedAuthSubmitRequest", { interaction_id: "int_3b7c" }, false, "exactly one of: interaction_id alone"),
  at("ManagedAuthSubmitRequest", { field_values: { fld_code: "1" }, selected_choice_id: "mfa_sms_1" }, false, "exactly one of: both"),
  at("ManagedAuthSubmitRequest", { field_values: { fld_code: "x".repeat(4097) } }, false, "a value is at most 4,096 characters"),
  at("ManagedAuthSubmitRequest", { field_values: { fld_code: 492039 } }, false, "a value is a string"),
  at("ManagedAuthSubmitRequest", { field_values: thirtyThree }, false, "at most 32 values"),
  at("ManagedAuthSubmitRequest", { field_values: { "": "v" } }, false, "a field id is not empty"),
  at("ManagedAuthSubmitRequest", { selected_choice_id: "" }, false, "a choice id is not empty"),
  at("ManagedAuthSubmitRequest", { fields: { otp: "492039" } }, false, "no older fields map"),
  at("ManagedAuthSubmitRequest", { sso_provider: "google" }, false, "no older sso_provider"),
  at("ManagedAuthSubmitResponse", { accepted: true }, true, "accepted"),
  at("ManagedAuthSubmitResponse", {}, false, "accepted is required"),

  // The events of a flow
  at("ManagedAuthStateEvent", state, true, "a finished flow"),
  at("ManagedAuthStateEvent", fullState, true, "a flow awaiting input, every field"),
  at("ManagedAuthStateEvent", failed, true, "a failed flow with its error"),
  at("ManagedAuthStateEvent", (({ error_message: _m, ...rest }) => rest)(failed), false, "a failed flow has error_message"),
  at("ManagedAuthStateEvent", (({ hosted_url: _h, ...rest }) => rest)(inProgress), false, "a flow in progress has hosted_url"),
  at(
    "ManagedAuthStateEvent",
    { ...inProgress, flow_step: "AWAITING_EXTERNAL_ACTION", external_action_message: "Approve the sign-in on your phone." },
    true,
    "an external action with its message",
  ),
  at("ManagedAuthStateEvent", { ...inProgress, flow_step: "AWAITING_EXTERNAL_ACTION" }, false, "an external action has its message"),
  at("ManagedAuthStateEvent", (({ timestamp: _t, ...rest }) => rest)(state), false, "timestamp is required"),
  at("ManagedAuthStateEvent", { ...state, flow_type: null }, false, "fields are omitted, never null"),
  at("ManagedAuthStateEvent", { ...state, interaction_id: "int_1" }, false, "no other properties"),
  at("ManagedAuthErrorEvent", errorEvent, true, "an error"),
  at("ManagedAuthErrorEvent", { ...errorEvent, error: { code: "internal_error" } }, false, "the error is an Error body"),
  at("ManagedAuthHeartbeatEvent", heartbeat, true, "a heartbeat"),
  at("ManagedAuthHeartbeatEvent", { event: "sse_heartbeat" }, false, "timestamp is required"),
  at("ManagedAuthEvent", state, true, "a state"),
  at("ManagedAuthEvent", errorEvent, true, "an error"),
  at("ManagedAuthEvent", heartbeat, true, "a heartbeat"),
  at("ManagedAuthEvent", { ...heartbeat, event: "log" }, false, "event is one of three"),
  at("ManagedAuthEvent", { ...heartbeat, event: "managed_auth_state" }, false, "a state has its flow fields"),
  at("ManagedAuthEvent", { ...state, error: errorEvent.error }, false, "one kind at a time"),

  // ManagedAuthTimelineEvent
  at("ManagedAuthTimelineEvent", timelineEvent, true, "a login"),
  at(
    "ManagedAuthTimelineEvent",
    {
      ...timelineEvent,
      type: "reauth",
      status: "FAILED",
      browser_session_id: "brs_1",
      error_code: "login_failed",
      error_message: "The site refused the password.",
      step: "SUBMITTING",
      updated_at: "2026-11-02T10:01:00Z",
      website_error: "Incorrect password",
    },
    true,
    "a failed re-authentication, every field",
  ),
  at(
    "ManagedAuthTimelineEvent",
    { id: "hc_1", type: "health_check", status: "NEEDS_AUTH", timestamp: "2026-11-02T09:58:12Z", previous_status: "AUTHENTICATED" },
    true,
    "a health check",
  ),
  at("ManagedAuthTimelineEvent", { ...timelineEvent, step: "EXPIRED", status: "EXPIRED" }, true, "an expired flow"),
  at("ManagedAuthTimelineEvent", { ...timelineEvent, type: "logout" }, false, "type is one of three"),
  at("ManagedAuthTimelineEvent", { ...timelineEvent, status: "UNKNOWN" }, false, "status is one of seven"),
  at("ManagedAuthTimelineEvent", { ...timelineEvent, previous_status: "IN_PROGRESS" }, false, "previous_status is a connection status"),
  at("ManagedAuthTimelineEvent", { ...timelineEvent, step: "INITIALIZED" }, false, "step is one of six"),
  at("ManagedAuthTimelineEvent", { ...timelineEvent, error_code: null }, false, "fields are omitted, never null"),
  at("ManagedAuthTimelineEvent", (({ timestamp: _t, ...rest }) => rest)(timelineEvent), false, "timestamp is required"),
];
