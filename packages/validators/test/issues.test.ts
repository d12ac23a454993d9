import { describe, expect, it } from "vitest";
import type { ValidationIssue, ValidationResult } from "../src/index.js";
import {
  validateBrowserProxyConfig,
  validateBrowserTelemetryCdpConfig,
  validateBrowserTelemetryRequestConfig,
  validateCreateBrowserRequest,
  validateCreateProjectRequest,
  validateCredentialReference,
  validateManagedAuth,
  validateProject,
  validateProjectName,
  validateRegion,
  validateUpdateOrgLimitsRequest,
  validateWebMcpInvocationResult,
  validateWebMcpInvokeRequest,
} from "../src/index.js";

const connection = {
  id: "conn_1",
  profile_name: "acme-admin",
  domain: "app.acme.example.com",
  status: "AUTHENTICATED",
  save_credentials: true,
  record_session: false,
};

function issuesOf(result: ValidationResult<unknown>): readonly ValidationIssue[] {
  if (result.ok) throw new Error("expected the value to be rejected");
  return result.errors;
}

describe("issues", () => {
  it("reports a missing required property at its own pointer", () => {
    const { id: _id, ...withoutId } = connection;
    expect(issuesOf(validateManagedAuth(withoutId))).toEqual([{ pointer: "/id", rule: "required", message: "/id is required." }]);
  });

  it("reports an unknown property at its own pointer", () => {
    expect(issuesOf(validateManagedAuth({ ...connection, nickname: "x" }))).toEqual([
      { pointer: "/nickname", rule: "additionalProperties", message: "/nickname is not an allowed property." },
    ]);
  });

  it("reports every problem, nested ones by their full pointer", () => {
    const issues = issuesOf(validateManagedAuth({ ...connection, status: "authenticated", health_check_interval: 10, browser: { stealth: "yes" } }));
    expect(issues.map((i) => [i.pointer, i.rule])).toEqual([
      ["/status", "enum"],
      ["/browser/stealth", "type"],
      ["/health_check_interval", "minimum"],
    ]);
  });

  it("tells bounds, with the limit", () => {
    expect(issuesOf(validateWebMcpInvokeRequest({ tool_ref: "wmt_1", input: {}, timeout_sec: 121 }))).toEqual([
      { pointer: "/timeout_sec", rule: "maximum", message: "/timeout_sec must be at most 120." },
    ]);
    expect(issuesOf(validateWebMcpInvokeRequest({ tool_ref: "", input: {} }))).toEqual([
      { pointer: "/tool_ref", rule: "minLength", message: "/tool_ref must not be empty." },
    ]);
  });

  it("lists the allowed values of an enum, and names the value itself when it is the root", () => {
    expect(issuesOf(validateRegion("mars"))).toEqual([
      { pointer: "", rule: "enum", message: 'The value must be one of "us-east", "eu-west" or "ap-southeast".' },
    ]);
  });

  it("tells the expected format with an example", () => {
    expect(issuesOf(validateManagedAuth({ ...connection, last_auth_check_at: "yesterday", login_url: "/login" }))).toEqual([
      { pointer: "/last_auth_check_at", rule: "format", message: "/last_auth_check_at must be an RFC 3339 date-time such as 2026-11-02T10:15:00Z." },
      { pointer: "/login_url", rule: "format", message: "/login_url must be an absolute URI such as https://example.com/path." },
    ]);
  });

  it("sums up an exactly-one-of failure in one issue instead of every alternative's errors", () => {
    expect(issuesOf(validateManagedAuth({ ...connection, browser: { proxy: { id: "prx_1", name: "residential" } } }))).toEqual([
      { pointer: "/browser/proxy", rule: "oneOf", message: "/browser/proxy must have exactly one of mode, id, name." },
    ]);
    expect(issuesOf(validateBrowserProxyConfig({}))).toEqual([{ pointer: "", rule: "oneOf", message: "The value must have exactly one of mode, id, name." }]);
    expect(issuesOf(validateCredentialReference({ provider: "my-1password" }))).toEqual([
      { pointer: "", rule: "oneOf", message: "The value must match exactly one of these shapes: {name}, {provider, path}, {provider, auto}." },
    ]);
  });

  it("reports within the one alternative that the value chose", () => {
    expect(issuesOf(validateBrowserProxyConfig({ mode: "stealth" }))).toEqual([
      { pointer: "/mode", rule: "enum", message: '/mode must be one of "direct" or "default".' },
    ]);
    expect(issuesOf(validateBrowserProxyConfig({ mode: "direct", region: "us-east" }))).toEqual([
      { pointer: "/region", rule: "additionalProperties", message: "/region is not an allowed property." },
    ]);
    expect(issuesOf(validateBrowserProxyConfig("direct"))).toEqual([{ pointer: "", rule: "type", message: "The value must be an object." }]);
  });

  it("says null is also accepted where a value is nullable", () => {
    expect(issuesOf(validateManagedAuth({ ...connection, flow_status: "SUCCESS", flow_type: "RELOGIN", browser_telemetry: "on" }))).toEqual([
      { pointer: "/browser_telemetry", rule: "type", message: "/browser_telemetry must be an object or null." },
      { pointer: "/flow_type", rule: "enum", message: '/flow_type must be one of "LOGIN", "REAUTH" or null.' },
    ]);
  });

  it("gives the condition of an if/then rule", () => {
    expect(issuesOf(validateManagedAuth({ ...connection, flow_status: "FAILED", error_message: "Failed" }))).toEqual([
      { pointer: "/error_code", rule: "required", message: '/error_code is required when /flow_status is "FAILED".' },
    ]);
    expect(issuesOf(validateManagedAuth({ ...connection, hosted_url: "https://auth.example/x" }))).toEqual([
      { pointer: "/hosted_url", rule: "type", message: "/hosted_url must be null when /flow_status is null or missing." },
    ]);
    expect(issuesOf(validateBrowserTelemetryRequestConfig({ enabled: true, storage: { enabled: false }, export: { otlp: {} } }))).toEqual([
      {
        pointer: "/export/otlp/destination",
        rule: "required",
        message: "/export/otlp/destination is required when /storage/enabled is false.",
      },
    ]);
    expect(issuesOf(validateWebMcpInvocationResult({ invocation_id: "inv_1", status: "awaiting_submission", output: { form_populated: true } }))).toEqual([
      { pointer: "/output/submitted", rule: "required", message: '/output/submitted is required when /status is "awaiting_submission".' },
    ]);
  });

  it("names what a `not` forbids", () => {
    expect(issuesOf(validateBrowserTelemetryRequestConfig({ enabled: false, browser: {} }))).toEqual([
      { pointer: "/browser", rule: "not", message: "/browser is not allowed when /enabled is false." },
    ]);
    expect(issuesOf(validateUpdateOrgLimitsRequest({ default_project_max_concurrent_sessions: 1, max_pooled_sessions: 2 }))).toEqual([
      { pointer: "/max_pooled_sessions", rule: "not", message: "/max_pooled_sessions is not allowed." },
    ]);
    expect(issuesOf(validateManagedAuth({ ...connection, health_checks: false, health_check_unavailable_reason: "no_auth_check_url" }))).toEqual([
      {
        pointer: "/health_check_unavailable_reason",
        rule: "not",
        message: "/health_check_unavailable_reason is not allowed when /health_checks is false.",
      },
    ]);
  });

  it("says what a `not` of a pattern forbids: a name in the form of an id", () => {
    expect(issuesOf(validateCreateBrowserRequest({ name: "brw_5n8b2v6c4x1z9a3s7d0f2g4h" }))).toEqual([
      { pointer: "/name", rule: "not", message: "/name must not match the pattern ^brw_[a-z0-9]{24}$." },
    ]);
    expect(issuesOf(validateCreateProjectRequest({ name: "proj_abcdefghijklmnopqrstuvwx" }))).toEqual([
      { pointer: "/name", rule: "not", message: "/name must not match the pattern ^proj_[a-z0-9]{24}$." },
    ]);
  });

  it("refuses NUL, bidi overrides, zero-width joiners and lone surrogates in a project name, once each", () => {
    for (const name of ["a\u0000b", "\u202Egnp.exe", "Def\u200Dault", "a\uD800b"]) {
      const issues = issuesOf(validateCreateProjectRequest({ name }));
      expect(
        issues.map((issue) => [issue.pointer, issue.rule]),
        JSON.stringify(name),
      ).toEqual([["/name", "pattern"]]);
    }
    expect(validateProjectName("caf\u00e9 \u{1F680}").ok).toBe(true);
    expect(validateProjectName("cafe\u0301").ok).toBe(true);
  });

  it("points at a duplicate's array", () => {
    expect(issuesOf(validateBrowserTelemetryCdpConfig({ excluded_methods: ["Page.navigate", "Page.navigate"] }))).toEqual([
      { pointer: "/excluded_methods", rule: "uniqueItems", message: "/excluded_methods must not contain duplicates (items 0 and 1 are equal)." },
    ]);
  });

  it("escapes property names in pointers", () => {
    expect(
      issuesOf(validateProject({ id: "p", name: "n", status: "active", created_at: "2026-11-01T09:30:00Z", updated_at: "2026-11-01T09:30:00Z", "a/b~c": 1 })),
    ).toEqual([{ pointer: "/a~1b~0c", rule: "additionalProperties", message: "/a~1b~0c is not an allowed property." }]);
  });
});
