import type { SchemaCase } from "./types.js";
import { schemaRef } from "./types.js";

/** Rows for the auth connection (managed auth) area: ManagedAuth and its parts. */

const MA = schemaRef("ManagedAuth");

/** The six required fields of an auth connection and nothing else. */
const minimalConnection = {
  id: "conn_7d2k9q4w1x8m",
  profile_name: "acme-admin",
  domain: "app.acme.example.com",
  status: "AUTHENTICATED",
  save_credentials: true,
  record_session: false,
} as const;

const fullChoice = {
  id: "mfa_sms_1",
  type: "mfa_method",
  label: "Text me a code",
  context: "How do you want to verify it's you?",
  description: "Standard rates apply",
  display_text: "Text a code to •••• 4821",
  masked_destination: "•••• 4821",
  observed_selector: "#verify-sms",
  mfa_type: "sms",
} as const;

const fullField = {
  id: "fld_code",
  ref: "sms_code",
  type: "code",
  reason: "missing",
  label: "Verification code",
  hint: "We sent a code to •••• 4821",
  input_mode: "numeric",
  observed_selector: 'input[name="otp"]',
  required: true,
} as const;

const fullDiscoveredField = {
  name: "otp",
  type: "code",
  label: "Verification code",
  selector: 'input[name="otp"]',
  hint: "We sent a code to •••• 4821",
  placeholder: "6-digit code",
  required: true,
  linked_mfa_type: "sms",
} as const;

const fullMfaOption = {
  type: "sms",
  label: "Text message",
  description: "Get a code by text message",
  target: "•••• 4821",
} as const;

const fullSsoButton = {
  selector: "//button[contains(., 'Continue with Google')]",
  provider: "google",
  label: "Continue with Google",
} as const;

const fullSignInOption = { id: "org_acme", label: "Acme Corp", description: "Admin workspace" } as const;

/** Every field of an auth connection populated: a login in progress awaiting an SMS code. */
const fullConnection = {
  ...minimalConnection,
  status: "NEEDS_AUTH",
  allowed_domains: ["login.acme-idp.example.com", "example.org"],
  auto_reauth: true,
  browser: { region: "eu-west", stealth: true, proxy: { id: "prx_8f2c1a" } },
  browser_session_id: "brs_5h3j8n2p6r",
  browser_telemetry: { enabled: true },
  can_reauth: false,
  can_reauth_reason: "requires_sms_code",
  choices: [fullChoice],
  credential: { name: "acme-admin" },
  discovered_fields: [fullDiscoveredField],
  error_code: null,
  error_message: null,
  external_action_message: null,
  fields: [fullField],
  flow_expires_at: "2026-11-02T10:15:00Z",
  flow_status: "IN_PROGRESS",
  flow_step: "AWAITING_INPUT",
  flow_type: "LOGIN",
  health_check_interval: 3600,
  health_check_unavailable_reason: "no_auth_check_url",
  health_checks: true,
  hosted_url: "https://auth.browser-service.example/login/conn_7d2k9q4w1x8m?i=int_3b7c",
  interaction_id: "int_3b7c",
  last_auth_at: "2026-11-02T09:58:12Z",
  last_auth_check_at: "2026-11-02T09:58:12Z",
  live_view_url: "https://live.browser-service.example/brs_5h3j8n2p6r",
  login_url: "https://app.acme.example.com/login",
  mfa_options: [fullMfaOption],
  pending_sso_buttons: [fullSsoButton],
  post_login_url: "https://app.acme.example.com/dashboard",
  proxy_id: "prx_8f2c1a",
  sign_in_options: [fullSignInOption],
  sso_provider: "google",
  website_error: "Too many attempts, try again later",
} as const;

/** A connection whose flow fields are all null: no flow was started. */
const noFlowConnection = {
  ...minimalConnection,
  browser_session_id: null,
  browser_telemetry: null,
  choices: null,
  discovered_fields: null,
  error_code: null,
  error_message: null,
  external_action_message: null,
  fields: null,
  flow_expires_at: null,
  flow_status: null,
  flow_step: null,
  flow_type: null,
  health_check_interval: null,
  hosted_url: null,
  interaction_id: null,
  live_view_url: null,
  mfa_options: null,
  pending_sso_buttons: null,
  sign_in_options: null,
  sso_provider: null,
  website_error: null,
} as const;

/** A finished successful flow, used as a base where a started flow is needed. */
const finishedFlow = {
  ...minimalConnection,
  flow_status: "SUCCESS",
  flow_step: "COMPLETED",
  flow_type: "LOGIN",
  flow_expires_at: "2026-11-02T10:15:00Z",
} as const;

const without = (value: Record<string, unknown>, key: string): Record<string, unknown> => {
  const { [key]: _omitted, ...rest } = value;
  return rest;
};

const requiredMissingRows = (name: string, base: Record<string, unknown>, keys: readonly string[]): SchemaCase[] =>
  keys.map((key) => ({ schema: schemaRef(name), rule: `required: ${key} missing`, value: without(base, key), valid: false }));

const enumRows = (name: string, values: readonly string[], bad: readonly unknown[]): SchemaCase[] => [
  ...values.map((value) => ({ schema: schemaRef(name), rule: `enum: ${value}`, value, valid: true })),
  ...bad.map((value) => ({ schema: schemaRef(name), rule: `enum: ${JSON.stringify(value)} rejected`, value, valid: false })),
];

const eligibleReasons = [
  "external_credential",
  "cua_has_credential",
  "has_credential",
  "viable_plans_found",
  "no_requirements_recorded",
  "totp_reauth_allowed",
  "optimistic_totp_attempt",
  "requirements_satisfiable",
] as const;

const notEligibleReasons = [
  "no_prior_successful_login",
  "no_credential",
  "no_viable_plans",
  "viable_plans_require_external_action",
  "requires_external_action",
  "requires_totp_without_secret",
  "requires_sms_code",
  "requires_email_code",
  "requires_customer_input",
] as const;

export const managedAuthCases: readonly SchemaCase[] = [
  // ManagedAuth: whole records
  { schema: MA, rule: "full record: every field populated", value: fullConnection, valid: true },
  { schema: MA, rule: "minimal record: required fields only", value: minimalConnection, valid: true },
  { schema: MA, rule: "no flow started: flow fields null", value: noFlowConnection, valid: true },
  { schema: MA, rule: "finished flow", value: finishedFlow, valid: true },
  { schema: MA, rule: "type: object (array rejected)", value: [minimalConnection], valid: false },
  { schema: MA, rule: "type: object (null rejected)", value: null, valid: false },
  ...requiredMissingRows("ManagedAuth", minimalConnection, ["id", "profile_name", "domain", "status", "save_credentials", "record_session"]),
  { schema: MA, rule: "additionalProperties: unknown property", value: { ...minimalConnection, nickname: "x" }, valid: false },
  { schema: MA, rule: "additionalProperties: unknown property on full record", value: { ...fullConnection, extra: 1 }, valid: false },

  // ManagedAuth: types and nullability of plain fields
  { schema: MA, rule: "id: string (number rejected)", value: { ...minimalConnection, id: 42 }, valid: false },
  { schema: MA, rule: "id: not nullable", value: { ...minimalConnection, id: null }, valid: false },
  { schema: MA, rule: "profile_name: not nullable", value: { ...minimalConnection, profile_name: null }, valid: false },
  { schema: MA, rule: "domain: not nullable", value: { ...minimalConnection, domain: null }, valid: false },
  { schema: MA, rule: "status: NEEDS_AUTH", value: { ...minimalConnection, status: "NEEDS_AUTH" }, valid: true },
  { schema: MA, rule: "status: enum (lowercase rejected)", value: { ...minimalConnection, status: "authenticated" }, valid: false },
  { schema: MA, rule: "status: not nullable", value: { ...minimalConnection, status: null }, valid: false },
  { schema: MA, rule: "save_credentials: boolean (string rejected)", value: { ...minimalConnection, save_credentials: "true" }, valid: false },
  { schema: MA, rule: "save_credentials: not nullable", value: { ...minimalConnection, save_credentials: null }, valid: false },
  { schema: MA, rule: "record_session: boolean (number rejected)", value: { ...minimalConnection, record_session: 1 }, valid: false },
  { schema: MA, rule: "record_session: not nullable", value: { ...minimalConnection, record_session: null }, valid: false },
  { schema: MA, rule: "auto_reauth: boolean", value: { ...minimalConnection, auto_reauth: false }, valid: true },
  { schema: MA, rule: "auto_reauth: not nullable", value: { ...minimalConnection, auto_reauth: null }, valid: false },
  { schema: MA, rule: "health_checks: boolean", value: { ...minimalConnection, health_checks: false }, valid: true },
  { schema: MA, rule: "health_checks: not nullable", value: { ...minimalConnection, health_checks: null }, valid: false },
  { schema: MA, rule: "can_reauth: not nullable", value: { ...minimalConnection, can_reauth: null }, valid: false },
  { schema: MA, rule: "credential: not nullable", value: { ...minimalConnection, credential: null }, valid: false },
  { schema: MA, rule: "credential: provider auto", value: { ...minimalConnection, credential: { provider: "op", auto: true } }, valid: true },
  { schema: MA, rule: "credential: invalid reference rejected", value: { ...minimalConnection, credential: {} }, valid: false },
  { schema: MA, rule: "browser: not nullable", value: { ...minimalConnection, browser: null }, valid: false },
  {
    schema: MA,
    rule: "browser: direct proxy",
    value: { ...minimalConnection, browser: { region: "eu-west", stealth: true, proxy: { mode: "direct" } } },
    valid: true,
  },
  { schema: MA, rule: "browser_telemetry: nullable", value: { ...minimalConnection, browser_telemetry: null }, valid: true },
  { schema: MA, rule: "browser_telemetry: object (string rejected)", value: { ...minimalConnection, browser_telemetry: "on" }, valid: false },
  { schema: MA, rule: "browser_session_id: nullable string", value: { ...finishedFlow, browser_session_id: null }, valid: true },
  { schema: MA, rule: "browser_session_id: string (number rejected)", value: { ...finishedFlow, browser_session_id: 7 }, valid: false },
  { schema: MA, rule: "interaction_id: string (number rejected)", value: { ...finishedFlow, interaction_id: 7 }, valid: false },
  { schema: MA, rule: "sso_provider: nullable string", value: { ...minimalConnection, sso_provider: null }, valid: true },
  { schema: MA, rule: "sso_provider: string (boolean rejected)", value: { ...minimalConnection, sso_provider: true }, valid: false },
  { schema: MA, rule: "website_error: string (number rejected)", value: { ...finishedFlow, website_error: 500 }, valid: false },
  { schema: MA, rule: "proxy_id: deprecated string accepted", value: { ...minimalConnection, proxy_id: "prx_8f2c1a" }, valid: true },
  { schema: MA, rule: "proxy_id: not nullable", value: { ...minimalConnection, proxy_id: null }, valid: false },

  // ManagedAuth: allowed_domains
  { schema: MA, rule: "allowed_domains: empty array (unrestricted)", value: { ...minimalConnection, allowed_domains: [] }, valid: true },
  { schema: MA, rule: "allowed_domains: hostname roots", value: { ...minimalConnection, allowed_domains: ["example.com", "login.example.org"] }, valid: true },
  { schema: MA, rule: "allowed_domains: not nullable", value: { ...minimalConnection, allowed_domains: null }, valid: false },
  { schema: MA, rule: "allowed_domains: items are strings", value: { ...minimalConnection, allowed_domains: [1] }, valid: false },
  { schema: MA, rule: "allowed_domains: leading www. normalized away", value: { ...minimalConnection, allowed_domains: ["www.example.com"] }, valid: false },
  { schema: MA, rule: "allowed_domains: leading *. normalized away", value: { ...minimalConnection, allowed_domains: ["*.example.com"] }, valid: false },

  // ManagedAuth: can_reauth_reason
  { schema: MA, rule: "can_reauth_reason: enum value", value: { ...minimalConnection, can_reauth_reason: "no_credential" }, valid: true },
  { schema: MA, rule: "can_reauth_reason: unknown value", value: { ...minimalConnection, can_reauth_reason: "maybe" }, valid: false },
  { schema: MA, rule: "can_reauth_reason: not nullable", value: { ...minimalConnection, can_reauth_reason: null }, valid: false },
  ...eligibleReasons.map((reason) => ({
    schema: MA,
    rule: `can_reauth true with eligible reason ${reason}`,
    value: { ...minimalConnection, can_reauth: true, can_reauth_reason: reason },
    valid: true,
  })),
  ...notEligibleReasons.map((reason) => ({
    schema: MA,
    rule: `can_reauth false with not-eligible reason ${reason}`,
    value: { ...minimalConnection, can_reauth: false, can_reauth_reason: reason },
    valid: true,
  })),
  {
    schema: MA,
    rule: "can_reauth true with not-eligible reason rejected",
    value: { ...minimalConnection, can_reauth: true, can_reauth_reason: "requires_sms_code" },
    valid: false,
  },
  {
    schema: MA,
    rule: "can_reauth false with eligible reason rejected",
    value: { ...minimalConnection, can_reauth: false, can_reauth_reason: "has_credential" },
    valid: false,
  },
  { schema: MA, rule: "can_reauth without reason", value: { ...minimalConnection, can_reauth: true }, valid: true },

  // ManagedAuth: health checks
  { schema: MA, rule: "health_check_interval: minimum 300", value: { ...minimalConnection, health_check_interval: 300 }, valid: true },
  { schema: MA, rule: "health_check_interval: maximum 86400", value: { ...minimalConnection, health_check_interval: 86400 }, valid: true },
  { schema: MA, rule: "health_check_interval: below minimum (299)", value: { ...minimalConnection, health_check_interval: 299 }, valid: false },
  { schema: MA, rule: "health_check_interval: above maximum (86401)", value: { ...minimalConnection, health_check_interval: 86401 }, valid: false },
  { schema: MA, rule: "health_check_interval: integer (600.5 rejected)", value: { ...minimalConnection, health_check_interval: 600.5 }, valid: false },
  { schema: MA, rule: "health_check_interval: string rejected", value: { ...minimalConnection, health_check_interval: "3600" }, valid: false },
  { schema: MA, rule: "health_check_interval: nullable", value: { ...minimalConnection, health_check_interval: null }, valid: true },
  { schema: MA, rule: "health_check_interval: Free plan minimum 21600", value: { ...minimalConnection, health_check_interval: 21600 }, valid: true },
  {
    schema: MA,
    rule: "health_check_unavailable_reason: no_auth_check_url",
    value: { ...minimalConnection, health_checks: true, health_check_unavailable_reason: "no_auth_check_url" },
    valid: true,
  },
  {
    schema: MA,
    rule: "health_check_unavailable_reason: unknown value",
    value: { ...minimalConnection, health_check_unavailable_reason: "no_url" },
    valid: false,
  },
  { schema: MA, rule: "health_check_unavailable_reason: not nullable", value: { ...minimalConnection, health_check_unavailable_reason: null }, valid: false },
  {
    schema: MA,
    rule: "health_check_unavailable_reason: only while health_checks enabled",
    value: { ...minimalConnection, health_checks: false, health_check_unavailable_reason: "no_auth_check_url" },
    valid: false,
  },

  // ManagedAuth: formats
  { schema: MA, rule: "last_auth_check_at: date-time", value: { ...minimalConnection, last_auth_check_at: "2026-11-02T09:58:12.120+01:00" }, valid: true },
  { schema: MA, rule: "last_auth_check_at: bad date-time", value: { ...minimalConnection, last_auth_check_at: "yesterday" }, valid: false },
  { schema: MA, rule: "last_auth_check_at: date without time rejected", value: { ...minimalConnection, last_auth_check_at: "2026-11-02" }, valid: false },
  { schema: MA, rule: "last_auth_check_at: not nullable", value: { ...minimalConnection, last_auth_check_at: null }, valid: false },
  { schema: MA, rule: "last_auth_at: deprecated alias accepted", value: { ...minimalConnection, last_auth_at: "2026-11-02T09:58:12Z" }, valid: true },
  { schema: MA, rule: "last_auth_at: bad date-time", value: { ...minimalConnection, last_auth_at: "2026-13-45T99:00:00Z" }, valid: false },
  { schema: MA, rule: "last_auth_at: not nullable", value: { ...minimalConnection, last_auth_at: null }, valid: false },
  { schema: MA, rule: "flow_expires_at: bad date-time", value: { ...finishedFlow, flow_expires_at: "soon" }, valid: false },
  { schema: MA, rule: "flow_expires_at: nullable", value: { ...minimalConnection, flow_expires_at: null }, valid: true },
  { schema: MA, rule: "login_url: uri", value: { ...minimalConnection, login_url: "https://app.acme.example.com/login" }, valid: true },
  { schema: MA, rule: "login_url: bad uri (relative)", value: { ...minimalConnection, login_url: "/login" }, valid: false },
  { schema: MA, rule: "login_url: not nullable", value: { ...minimalConnection, login_url: null }, valid: false },
  { schema: MA, rule: "post_login_url: bad uri", value: { ...minimalConnection, post_login_url: "not a url" }, valid: false },
  { schema: MA, rule: "post_login_url: not nullable", value: { ...minimalConnection, post_login_url: null }, valid: false },
  { schema: MA, rule: "hosted_url: bad uri", value: { ...fullConnection, hosted_url: "auth page" }, valid: false },
  { schema: MA, rule: "hosted_url: nullable once the flow ended", value: { ...finishedFlow, hosted_url: null }, valid: true },
  { schema: MA, rule: "live_view_url: bad uri", value: { ...fullConnection, live_view_url: "live view" }, valid: false },
  { schema: MA, rule: "live_view_url: nullable once the flow ended", value: { ...finishedFlow, live_view_url: null }, valid: true },

  // ManagedAuth: flow enums
  ...(["IN_PROGRESS", "SUCCESS", "FAILED", "EXPIRED", "CANCELED"] as const).map((flow_status) => ({
    schema: MA,
    rule: `flow_status: ${flow_status}`,
    value: { ...fullConnection, flow_status, error_code: "login_failed", error_message: "Login failed" },
    valid: true,
  })),
  { schema: MA, rule: "flow_status: unknown value", value: { ...finishedFlow, flow_status: "DONE" }, valid: false },
  {
    schema: MA,
    rule: "flow_step: AWAITING_EXTERNAL_ACTION with message",
    value: { ...fullConnection, flow_step: "AWAITING_EXTERNAL_ACTION", external_action_message: "Approve the sign-in on your phone" },
    valid: true,
  },
  { schema: MA, rule: "flow_step: unknown value", value: { ...finishedFlow, flow_step: "WAITING" }, valid: false },
  { schema: MA, rule: "flow_type: REAUTH", value: { ...finishedFlow, flow_type: "REAUTH" }, valid: true },
  { schema: MA, rule: "flow_type: unknown value", value: { ...finishedFlow, flow_type: "RELOGIN" }, valid: false },

  // ManagedAuth: flow arrays
  { schema: MA, rule: "choices: nullable", value: { ...finishedFlow, choices: null }, valid: true },
  { schema: MA, rule: "choices: empty array", value: { ...finishedFlow, choices: [] }, valid: true },
  { schema: MA, rule: "choices: items are ManagedAuthChoice", value: { ...finishedFlow, choices: [{ id: "x" }] }, valid: false },
  {
    schema: MA,
    rule: "fields: items are ManagedAuthField",
    value: { ...finishedFlow, fields: [{ id: "f", ref: "r", type: "pin", reason: "missing" }] },
    valid: false,
  },
  { schema: MA, rule: "fields: object rejected (array expected)", value: { ...finishedFlow, fields: fullField }, valid: false },
  { schema: MA, rule: "discovered_fields: items are DiscoveredField", value: { ...finishedFlow, discovered_fields: [{ name: "otp" }] }, valid: false },
  { schema: MA, rule: "mfa_options: items are MFAOption", value: { ...finishedFlow, mfa_options: [{ type: "passkey", label: "Passkey" }] }, valid: false },
  { schema: MA, rule: "pending_sso_buttons: items are SSOButton", value: { ...finishedFlow, pending_sso_buttons: [{ provider: "google" }] }, valid: false },
  { schema: MA, rule: "sign_in_options: items are SignInOption", value: { ...finishedFlow, sign_in_options: [{ label: "Acme" }] }, valid: false },
  { schema: MA, rule: "sign_in_options: nullable", value: { ...finishedFlow, sign_in_options: null }, valid: true },

  // ManagedAuth: conditional rules
  { schema: MA, rule: "no flow: flow_step must be null", value: { ...minimalConnection, flow_step: "AWAITING_INPUT" }, valid: false },
  {
    schema: MA,
    rule: "no flow (flow_status null): flow_type must be null",
    value: { ...minimalConnection, flow_status: null, flow_type: "LOGIN" },
    valid: false,
  },
  { schema: MA, rule: "no flow: flow_expires_at must be null", value: { ...minimalConnection, flow_expires_at: "2026-11-02T10:15:00Z" }, valid: false },
  { schema: MA, rule: "no flow: fields must be null", value: { ...minimalConnection, fields: [] }, valid: false },
  { schema: MA, rule: "no flow: hosted_url must be null", value: { ...minimalConnection, hosted_url: "https://auth.example/x" }, valid: false },
  { schema: MA, rule: "no flow: error_code must be null", value: { ...minimalConnection, flow_status: null, error_code: "x" }, valid: false },
  {
    schema: MA,
    rule: "FAILED with error_code and error_message",
    value: { ...finishedFlow, flow_status: "FAILED", error_code: "invalid_credentials", error_message: "The site rejected the password" },
    valid: true,
  },
  { schema: MA, rule: "FAILED without error_code", value: { ...finishedFlow, flow_status: "FAILED", error_message: "Failed" }, valid: false },
  { schema: MA, rule: "FAILED without error_message", value: { ...finishedFlow, flow_status: "FAILED", error_code: "x" }, valid: false },
  {
    schema: MA,
    rule: "FAILED with null error_code",
    value: { ...finishedFlow, flow_status: "FAILED", error_code: null, error_message: "Failed" },
    valid: false,
  },
  {
    schema: MA,
    rule: "AWAITING_EXTERNAL_ACTION without message",
    value: { ...fullConnection, flow_step: "AWAITING_EXTERNAL_ACTION", external_action_message: null },
    valid: false,
  },
  {
    schema: MA,
    rule: "AWAITING_EXTERNAL_ACTION message omitted",
    value: without({ ...fullConnection, flow_step: "AWAITING_EXTERNAL_ACTION" }, "external_action_message"),
    valid: false,
  },
  { schema: MA, rule: "IN_PROGRESS without hosted_url", value: without(fullConnection, "hosted_url"), valid: false },
  { schema: MA, rule: "IN_PROGRESS with null live_view_url", value: { ...fullConnection, live_view_url: null }, valid: false },
  {
    schema: MA,
    rule: "IN_PROGRESS stale (past flow_expires_at) still valid",
    value: { ...fullConnection, flow_expires_at: "2020-01-01T00:00:00Z" },
    valid: true,
  },

  // ManagedAuthStatus
  ...enumRows("ManagedAuthStatus", ["AUTHENTICATED", "NEEDS_AUTH"], ["UNKNOWN", "authenticated", null]),

  // ManagedAuthFlowStatus
  ...enumRows("ManagedAuthFlowStatus", ["IN_PROGRESS", "SUCCESS", "FAILED", "EXPIRED", "CANCELED"], ["CANCELLED", null]),

  // ManagedAuthFlowStep
  ...enumRows("ManagedAuthFlowStep", ["DISCOVERING", "AWAITING_INPUT", "AWAITING_EXTERNAL_ACTION", "SUBMITTING", "COMPLETED"], ["DONE", null]),

  // ManagedAuthFlowType
  ...enumRows("ManagedAuthFlowType", ["LOGIN", "REAUTH"], ["login", null]),

  // ManagedAuthCanReauthReason
  ...enumRows("ManagedAuthCanReauthReason", [...eligibleReasons, ...notEligibleReasons], ["unknown", "", null]),

  // ManagedAuthHealthCheckUnavailableReason
  ...enumRows("ManagedAuthHealthCheckUnavailableReason", ["no_auth_check_url"], ["health_checks_disabled", null]),

  // CredentialReference
  { schema: schemaRef("CredentialReference"), rule: "exactly one of: {name}", value: { name: "acme-admin" }, valid: true },
  {
    schema: schemaRef("CredentialReference"),
    rule: "exactly one of: {provider, path}",
    value: { provider: "my-1password", path: "Engineering/acme" },
    valid: true,
  },
  { schema: schemaRef("CredentialReference"), rule: "exactly one of: {provider, auto: true}", value: { provider: "my-1password", auto: true }, valid: true },
  { schema: schemaRef("CredentialReference"), rule: "exactly one of: empty object", value: {}, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "exactly one of: {name, provider}", value: { name: "acme-admin", provider: "my-1password" }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "exactly one of: {name, path}", value: { name: "acme-admin", path: "x" }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "exactly one of: {provider} alone", value: { provider: "my-1password" }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "exactly one of: {path} alone", value: { path: "Engineering/acme" }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "exactly one of: {auto: true} alone", value: { auto: true }, valid: false },
  {
    schema: schemaRef("CredentialReference"),
    rule: "auto: const true ({provider, auto: false})",
    value: { provider: "my-1password", auto: false },
    valid: false,
  },
  {
    schema: schemaRef("CredentialReference"),
    rule: "exactly one of: {provider, path, auto: true}",
    value: { provider: "my-1password", path: "x", auto: true },
    valid: false,
  },
  {
    schema: schemaRef("CredentialReference"),
    rule: "exactly one of: {provider, path, auto: false}",
    value: { provider: "my-1password", path: "x", auto: false },
    valid: false,
  },
  {
    schema: schemaRef("CredentialReference"),
    rule: "exactly one of: {name, provider, auto: true}",
    value: { name: "a", provider: "p", auto: true },
    valid: false,
  },
  { schema: schemaRef("CredentialReference"), rule: "additionalProperties: {name, extra}", value: { name: "acme-admin", id: "cred_1" }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "auto: boolean (string rejected)", value: { provider: "my-1password", auto: "true" }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "name: minLength 1", value: { name: "" }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "provider: minLength 1", value: { provider: "", path: "x" }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "path: minLength 1", value: { provider: "p", path: "" }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "provider: minLength 1 (auto)", value: { provider: "", auto: true }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "name: string (number rejected)", value: { name: 5 }, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "not nullable", value: null, valid: false },
  { schema: schemaRef("CredentialReference"), rule: "object (string rejected)", value: "acme-admin", valid: false },

  // ManagedAuthChoice
  { schema: schemaRef("ManagedAuthChoice"), rule: "all fields populated", value: fullChoice, valid: true },
  { schema: schemaRef("ManagedAuthChoice"), rule: "required fields only", value: { id: "sso_google", type: "sso_provider", label: "Google" }, valid: true },
  {
    schema: schemaRef("ManagedAuthChoice"),
    rule: "nullable strings and mfa_type null",
    value: {
      id: "acct_1",
      type: "account",
      label: "jane@acme.example",
      context: null,
      description: null,
      display_text: null,
      masked_destination: null,
      observed_selector: null,
      mfa_type: null,
    },
    valid: true,
  },
  ...requiredMissingRows("ManagedAuthChoice", fullChoice, ["id", "type", "label"]),
  { schema: schemaRef("ManagedAuthChoice"), rule: "additionalProperties: unknown property", value: { ...fullChoice, selected: true }, valid: false },
  { schema: schemaRef("ManagedAuthChoice"), rule: "type: unknown value", value: { ...fullChoice, type: "mfa" }, valid: false },
  { schema: schemaRef("ManagedAuthChoice"), rule: "type: not nullable", value: { ...fullChoice, type: null }, valid: false },
  { schema: schemaRef("ManagedAuthChoice"), rule: "label: not nullable", value: { ...fullChoice, label: null }, valid: false },
  { schema: schemaRef("ManagedAuthChoice"), rule: "id: not nullable", value: { ...fullChoice, id: null }, valid: false },
  { schema: schemaRef("ManagedAuthChoice"), rule: "mfa_type: passkey", value: { ...fullChoice, mfa_type: "passkey" }, valid: true },
  { schema: schemaRef("ManagedAuthChoice"), rule: "mfa_type: unknown value", value: { ...fullChoice, mfa_type: "carrier_pigeon" }, valid: false },
  {
    schema: schemaRef("ManagedAuthChoice"),
    rule: "masked_destination: string (number rejected)",
    value: { ...fullChoice, masked_destination: 4821 },
    valid: false,
  },

  // ManagedAuthChoiceType
  ...enumRows("ManagedAuthChoiceType", ["mfa_method", "sso_provider", "sign_in_method", "auth_method", "identifier_method", "account", "other"], ["mfa", null]),

  // ManagedAuthMFAMethod
  ...enumRows("ManagedAuthMFAMethod", ["sms", "call", "email", "totp", "push", "password", "passkey", "switch", "other"], ["SMS", "webauthn", null]),

  // ManagedAuthField
  { schema: schemaRef("ManagedAuthField"), rule: "all fields populated", value: fullField, valid: true },
  {
    schema: schemaRef("ManagedAuthField"),
    rule: "required fields only (required defaults to true)",
    value: { id: "fld_pw", ref: "password", type: "password", reason: "rejected" },
    valid: true,
  },
  ...requiredMissingRows("ManagedAuthField", fullField, ["id", "ref", "type", "reason"]),
  { schema: schemaRef("ManagedAuthField"), rule: "additionalProperties: unknown property", value: { ...fullField, value: "123456" }, valid: false },
  ...(["identifier", "password", "code", "totp_code", "totp_secret", "text"] as const).map((type) => ({
    schema: schemaRef("ManagedAuthField"),
    rule: `type: ${type}`,
    value: { ...fullField, type },
    valid: true,
  })),
  { schema: schemaRef("ManagedAuthField"), rule: "type: unknown value", value: { ...fullField, type: "pin" }, valid: false },
  { schema: schemaRef("ManagedAuthField"), rule: "reason: rejected", value: { ...fullField, reason: "rejected" }, valid: true },
  { schema: schemaRef("ManagedAuthField"), rule: "reason: unknown value", value: { ...fullField, reason: "expired" }, valid: false },
  ...(["text", "email", "tel", "numeric"] as const).map((input_mode) => ({
    schema: schemaRef("ManagedAuthField"),
    rule: `input_mode: ${input_mode}`,
    value: { ...fullField, input_mode },
    valid: true,
  })),
  { schema: schemaRef("ManagedAuthField"), rule: "input_mode: unknown value", value: { ...fullField, input_mode: "number" }, valid: false },
  { schema: schemaRef("ManagedAuthField"), rule: "input_mode: not nullable", value: { ...fullField, input_mode: null }, valid: false },
  { schema: schemaRef("ManagedAuthField"), rule: "observed_selector: nullable", value: { ...fullField, observed_selector: null }, valid: true },
  { schema: schemaRef("ManagedAuthField"), rule: "label: not nullable", value: { ...fullField, label: null }, valid: false },
  { schema: schemaRef("ManagedAuthField"), rule: "hint: not nullable", value: { ...fullField, hint: null }, valid: false },
  { schema: schemaRef("ManagedAuthField"), rule: "required: false", value: { ...fullField, required: false }, valid: true },
  { schema: schemaRef("ManagedAuthField"), rule: "required: boolean (string rejected)", value: { ...fullField, required: "yes" }, valid: false },
  { schema: schemaRef("ManagedAuthField"), rule: "required: not nullable", value: { ...fullField, required: null }, valid: false },

  // DiscoveredField
  { schema: schemaRef("DiscoveredField"), rule: "all fields populated", value: fullDiscoveredField, valid: true },
  {
    schema: schemaRef("DiscoveredField"),
    rule: "required fields only (required defaults to true)",
    value: { name: "email", type: "email", label: "Email", selector: "#email" },
    valid: true,
  },
  ...requiredMissingRows("DiscoveredField", fullDiscoveredField, ["name", "type", "label", "selector"]),
  { schema: schemaRef("DiscoveredField"), rule: "additionalProperties: unknown property", value: { ...fullDiscoveredField, value: "x" }, valid: false },
  ...(["text", "email", "password", "tel", "number", "url", "code", "totp"] as const).map((type) => ({
    schema: schemaRef("DiscoveredField"),
    rule: `type: ${type}`,
    value: { ...fullDiscoveredField, type },
    valid: true,
  })),
  { schema: schemaRef("DiscoveredField"), rule: "type: unknown value", value: { ...fullDiscoveredField, type: "checkbox" }, valid: false },
  { schema: schemaRef("DiscoveredField"), rule: "linked_mfa_type: nullable", value: { ...fullDiscoveredField, linked_mfa_type: null }, valid: true },
  { schema: schemaRef("DiscoveredField"), rule: "linked_mfa_type: MFAType value", value: { ...fullDiscoveredField, linked_mfa_type: "totp" }, valid: true },
  {
    schema: schemaRef("DiscoveredField"),
    rule: "linked_mfa_type: passkey is not an MFAType",
    value: { ...fullDiscoveredField, linked_mfa_type: "passkey" },
    valid: false,
  },
  { schema: schemaRef("DiscoveredField"), rule: "required: false", value: { ...fullDiscoveredField, required: false }, valid: true },
  { schema: schemaRef("DiscoveredField"), rule: "required: boolean (string rejected)", value: { ...fullDiscoveredField, required: "true" }, valid: false },
  { schema: schemaRef("DiscoveredField"), rule: "selector: not nullable", value: { ...fullDiscoveredField, selector: null }, valid: false },
  { schema: schemaRef("DiscoveredField"), rule: "placeholder: not nullable", value: { ...fullDiscoveredField, placeholder: null }, valid: false },

  // MFAOption
  { schema: schemaRef("MFAOption"), rule: "all fields populated", value: fullMfaOption, valid: true },
  { schema: schemaRef("MFAOption"), rule: "required fields only", value: { type: "push", label: "Send a push notification" }, valid: true },
  {
    schema: schemaRef("MFAOption"),
    rule: "description and target nullable",
    value: { type: "totp", label: "Authenticator app", description: null, target: null },
    valid: true,
  },
  ...requiredMissingRows("MFAOption", fullMfaOption, ["type", "label"]),
  { schema: schemaRef("MFAOption"), rule: "additionalProperties: unknown property", value: { ...fullMfaOption, id: "x" }, valid: false },
  { schema: schemaRef("MFAOption"), rule: "type: unknown value (other is not an MFAType)", value: { ...fullMfaOption, type: "other" }, valid: false },
  { schema: schemaRef("MFAOption"), rule: "type: not nullable", value: { ...fullMfaOption, type: null }, valid: false },
  { schema: schemaRef("MFAOption"), rule: "target: string (number rejected)", value: { ...fullMfaOption, target: 4821 }, valid: false },

  // MFAType
  ...enumRows("MFAType", ["sms", "call", "email", "totp", "push", "password", "switch"], ["passkey", "other", null]),

  // SSOButton
  { schema: schemaRef("SSOButton"), rule: "all fields populated", value: fullSsoButton, valid: true },
  ...requiredMissingRows("SSOButton", fullSsoButton, ["selector", "provider", "label"]),
  {
    schema: schemaRef("SSOButton"),
    rule: "additionalProperties: unknown property",
    value: { ...fullSsoButton, url: "https://accounts.google.com" },
    valid: false,
  },
  { schema: schemaRef("SSOButton"), rule: "provider: not nullable", value: { ...fullSsoButton, provider: null }, valid: false },

  // SignInOption
  { schema: schemaRef("SignInOption"), rule: "all fields populated", value: fullSignInOption, valid: true },
  { schema: schemaRef("SignInOption"), rule: "required fields only", value: { id: "org_beta", label: "Beta Inc" }, valid: true },
  { schema: schemaRef("SignInOption"), rule: "description nullable", value: { id: "org_beta", label: "Beta Inc", description: null }, valid: true },
  ...requiredMissingRows("SignInOption", fullSignInOption, ["id", "label"]),
  { schema: schemaRef("SignInOption"), rule: "additionalProperties: unknown property", value: { ...fullSignInOption, selected: false }, valid: false },
  { schema: schemaRef("SignInOption"), rule: "label: not nullable", value: { ...fullSignInOption, label: null }, valid: false },
];
