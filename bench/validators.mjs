#!/usr/bin/env node
// Validation benchmark: operations per second of checking one full, valid ManagedAuth
// record and one invalid record (several problems, all reported) with
//   - @browser-service/validators: Ajv standalone code compiled ahead of time,
//   - Ajv 8 compiled at run time from the bundled spec (allErrors, ajv-formats), as the
//     spec's own tests use it,
//   - zod 4 with a hand-written equivalent of ManagedAuth (required fields, enums,
//     nullables, the nested browser configuration with the proxy's exactly-one, bounds,
//     formats and the conditional rules),
// side by side with ratios; then the time from importing to a first validation, for the
// validators package and for Ajv compiling ManagedAuth, each the median of fresh node
// processes. Fails (exit 1) if a validator does not accept the valid record or reject
// the invalid one. Runs in about 12 s.
//
//   node bench/validators.mjs          (needs `pnpm build` first: spec and packages)
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { isManagedAuth, validateManagedAuth } from "@browser-service/validators";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { z } from "zod";

const benchDir = fileURLToPath(new URL(".", import.meta.url));
const specPath = fileURLToPath(new URL("../spec/dist/openapi.json", import.meta.url));
const document = JSON.parse(readFileSync(specPath, "utf8"));
const schemas = document.components.schemas;

/** Each case is warmed up, then measured `rounds` times (the best counts). */
const warmUpMs = 250;
const roundMs = 300;
const rounds = 3;
/** Fresh node processes per import measurement. */
const importRuns = 7;

function die(message) {
  console.error(`\nbench/validators FAILED: ${message}`);
  process.exit(1);
}

// Ajv at run time, set up as spec/test/load-document.ts does.
function compileWithAjv() {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
  addFormats(ajv);
  const documentFields = ["openapi", "info", "jsonSchemaDialect", "servers", "paths", "webhooks", "components", "security", "tags"];
  for (const keyword of ["example", "discriminator", "xml", "externalDocs", ...documentFields]) ajv.addKeyword(keyword);
  ajv.addSchema(document, "openapi.json");
  return ajv.getSchema("openapi.json#/components/schemas/ManagedAuth");
}

// zod: the same contract, written by hand; enum values are read from the spec so that they match.
function zodManagedAuth() {
  const values = (name) => schemas[name].enum;
  const nullableString = z.string().nullable();
  const dateTime = z.iso.datetime({ offset: true });
  const telemetryCategory = z.strictObject({ enabled: z.boolean().optional() });
  const categories = z.strictObject({
    control: z
      .strictObject({
        enabled: z.boolean().optional(),
        cdp: z
          .strictObject({
            excluded_methods: z
              .array(z.enum(values("TelemetryCdpMethod")))
              .refine((methods) => new Set(methods).size === methods.length, "duplicate method")
              .optional(),
          })
          .optional(),
      })
      .optional(),
    ...Object.fromEntries(
      ["connection", "system", "captcha", "console", "network", "page", "interaction", "screenshot", "platform"].map((n) => [n, telemetryCategory.optional()]),
    ),
  });
  const destination = z.union([z.strictObject({ id: z.string().min(1) }), z.strictObject({ name: z.string().min(1) })]);
  const otlp = z
    .strictObject({ destination: destination.optional(), enabled: z.boolean().optional() })
    .refine((o) => !(o.enabled === false && o.destination !== undefined), "destination with enabled false")
    .refine((o) => !(o.enabled === true && o.destination === undefined), "enabled without destination");
  const telemetry = z
    .strictObject({
      enabled: z.boolean().optional(),
      browser: categories.optional(),
      export: z.strictObject({ otlp }).optional(),
      storage: z.strictObject({ enabled: z.boolean().optional() }).optional(),
    })
    .refine((t) => !(t.enabled === false && t.browser !== undefined), "browser with enabled false")
    .refine((t) => !(t.enabled === false && t.export !== undefined), "export with enabled false")
    .refine((t) => t.storage?.enabled !== false || t.export?.otlp.destination !== undefined, "storage off without destination");
  const proxy = z.union([
    z.strictObject({ mode: z.enum(["direct", "default"]) }),
    z.strictObject({ id: z.string().min(1) }),
    z.strictObject({ name: z.string().min(1) }),
  ]);
  const credential = z.union([
    z.strictObject({ name: z.string().min(1) }),
    z.strictObject({ provider: z.string().min(1), path: z.string().min(1) }),
    z.strictObject({ provider: z.string().min(1), auto: z.literal(true) }),
  ]);
  const choice = z.strictObject({
    id: z.string(),
    type: z.enum(values("ManagedAuthChoiceType")),
    label: z.string(),
    context: nullableString.optional(),
    description: nullableString.optional(),
    display_text: nullableString.optional(),
    masked_destination: nullableString.optional(),
    observed_selector: nullableString.optional(),
    mfa_type: z.enum(values("ManagedAuthMFAMethod")).nullable().optional(),
  });
  const field = z.strictObject({
    id: z.string(),
    ref: z.string(),
    type: z.enum(["identifier", "password", "code", "totp_code", "totp_secret", "text"]),
    reason: z.enum(["missing", "rejected"]),
    label: z.string().optional(),
    hint: z.string().optional(),
    input_mode: z.enum(["text", "email", "tel", "numeric"]).optional(),
    observed_selector: nullableString.optional(),
    required: z.boolean().optional(),
  });
  const discoveredField = z.strictObject({
    name: z.string(),
    type: z.enum(["text", "email", "password", "tel", "number", "url", "code", "totp"]),
    label: z.string(),
    selector: z.string(),
    hint: z.string().optional(),
    placeholder: z.string().optional(),
    required: z.boolean().optional(),
    linked_mfa_type: z.enum(values("MFAType")).nullable().optional(),
  });
  const mfaOption = z.strictObject({
    type: z.enum(values("MFAType")),
    label: z.string(),
    description: nullableString.optional(),
    target: nullableString.optional(),
  });
  const ssoButton = z.strictObject({ selector: z.string(), provider: z.string(), label: z.string() });
  const signInOption = z.strictObject({ id: z.string(), label: z.string(), description: nullableString.optional() });
  const list = (item) => z.array(item).nullable().optional();
  const flowFields = [
    "flow_step",
    "flow_type",
    "flow_expires_at",
    "discovered_fields",
    "mfa_options",
    "pending_sso_buttons",
    "sign_in_options",
    "choices",
    "fields",
    "interaction_id",
    "hosted_url",
    "live_view_url",
    "browser_session_id",
    "external_action_message",
    "error_code",
    "error_message",
    "website_error",
  ];
  const eligibleRule = schemas.ManagedAuth.allOf.find((rule) => rule.if?.properties?.can_reauth?.const === true);
  const eligible = new Set(eligibleRule.then.properties.can_reauth_reason.enum);
  return z
    .strictObject({
      id: z.string(),
      profile_name: z.string(),
      domain: z.string(),
      status: z.enum(values("ManagedAuthStatus")),
      save_credentials: z.boolean(),
      record_session: z.boolean(),
      allowed_domains: z.array(z.string().regex(/^(?!www\.|\*\.)/)).optional(),
      auto_reauth: z.boolean().optional(),
      browser: z
        .strictObject({
          proxy: proxy.optional(),
          region: z.enum(values("Region")).optional(),
          stealth: z.boolean().optional(),
          telemetry: telemetry.nullable().optional(),
        })
        .optional(),
      browser_session_id: nullableString.optional(),
      browser_telemetry: telemetry.nullable().optional(),
      can_reauth: z.boolean().optional(),
      can_reauth_reason: z.enum(values("ManagedAuthCanReauthReason")).optional(),
      choices: list(choice),
      credential: credential.optional(),
      discovered_fields: list(discoveredField),
      error_code: nullableString.optional(),
      error_message: nullableString.optional(),
      external_action_message: nullableString.optional(),
      fields: list(field),
      flow_expires_at: dateTime.nullable().optional(),
      flow_status: z.enum(values("ManagedAuthFlowStatus")).nullable().optional(),
      flow_step: z.enum(values("ManagedAuthFlowStep")).nullable().optional(),
      flow_type: z.enum(values("ManagedAuthFlowType")).nullable().optional(),
      health_check_interval: z.int().min(300).max(86400).nullable().optional(),
      health_check_unavailable_reason: z.enum(values("ManagedAuthHealthCheckUnavailableReason")).optional(),
      health_checks: z.boolean().optional(),
      hosted_url: z.url().nullable().optional(),
      interaction_id: nullableString.optional(),
      last_auth_at: dateTime.optional(),
      last_auth_check_at: dateTime.optional(),
      live_view_url: z.url().nullable().optional(),
      login_url: z.url().optional(),
      mfa_options: list(mfaOption),
      pending_sso_buttons: list(ssoButton),
      post_login_url: z.url().optional(),
      proxy_id: z.string().optional(),
      sign_in_options: list(signInOption),
      sso_provider: nullableString.optional(),
      website_error: nullableString.optional(),
    })
    .superRefine((c, ctx) => {
      const problem = (path, message) => ctx.addIssue({ code: "custom", path: [path], message });
      if (c.flow_status == null) for (const f of flowFields) if (c[f] != null) problem(f, "must be null with no flow");
      if (c.flow_status === "FAILED") for (const f of ["error_code", "error_message"]) if (typeof c[f] !== "string") problem(f, "required when FAILED");
      if (c.flow_step === "AWAITING_EXTERNAL_ACTION" && typeof c.external_action_message !== "string") problem("external_action_message", "required");
      if (c.flow_status === "IN_PROGRESS")
        for (const f of ["hosted_url", "live_view_url"]) if (typeof c[f] !== "string") problem(f, "required while in progress");
      if (c.can_reauth !== undefined && c.can_reauth_reason !== undefined && eligible.has(c.can_reauth_reason) !== c.can_reauth)
        problem("can_reauth_reason", "does not match can_reauth");
      if (c.health_checks === false && c.health_check_unavailable_reason !== undefined) problem("health_check_unavailable_reason", "only with health checks");
    });
}

const valid = schemas.ManagedAuth.examples[0];
const invalid = {
  ...valid,
  status: "authenticated",
  health_check_interval: 10,
  browser: { ...valid.browser, proxy: { id: "prx_1", name: "residential-us" } },
  last_auth_check_at: "yesterday",
  nickname: "acme",
};

const ajvValidate = compileWithAjv();
const zodSchema = zodManagedAuth();
// Each returns the number of problems it reports (0 for a valid value), so that every
// contender builds its whole report.
const contenders = [
  {
    name: "@browser-service/validators",
    problems: (value) => {
      const result = validateManagedAuth(value);
      return result.ok ? 0 : result.errors.length;
    },
  },
  { name: "  (isManagedAuth: no report)", problems: (value) => (isManagedAuth(value) ? 0 : 1) },
  { name: "Ajv, compiled at run time", problems: (value) => (ajvValidate(value) ? 0 : ajvValidate.errors.length) },
  {
    name: "zod 4",
    problems: (value) => {
      const result = zodSchema.safeParse(value);
      return result.success ? 0 : result.error.issues.length;
    },
  },
];
for (const { name, problems } of contenders) {
  if (problems(valid) !== 0) die(`${name.trim()} rejects the valid record`);
  if (problems(invalid) === 0) die(`${name.trim()} accepts the invalid record`);
}

/** Calls per second of `run(value)` over `ms`. */
function opsPerSecond(run, value, ms) {
  let calls = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < ms) {
    for (let i = 0; i < 200; i++) run(value);
    calls += 200;
    elapsed = performance.now() - start;
  }
  return (calls * 1000) / elapsed;
}

/**
 * The best of `rounds` measurements of every contender on every record, taken in turn so
 * that a burst of load on the machine does not fall on one contender only.
 */
function measure(records) {
  const results = contenders.map((c) => ({ ...c, ...Object.fromEntries(Object.keys(records).map((r) => [r, 0])) }));
  for (const result of results) for (const value of Object.values(records)) opsPerSecond(result.problems, value, warmUpMs);
  for (let round = 0; round < rounds; round++) {
    for (const result of results) {
      for (const [record, value] of Object.entries(records)) result[record] = Math.max(result[record], opsPerSecond(result.problems, value, roundMs));
    }
  }
  return results;
}

/** Milliseconds from the start of a fresh node process's import to its first validation, median of `importRuns`. */
function importTime(code) {
  const times = [];
  for (let run = 0; run < importRuns; run++) {
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: benchDir, encoding: "utf8" });
    if (child.status !== 0) die(`import measurement failed:\n${child.stderr}`);
    times.push(Number(child.stdout));
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

const formatOps = (ops) => (ops >= 1e6 ? `${(ops / 1e6).toFixed(2)} M/s` : `${(ops / 1e3).toFixed(1)} k/s`);
const ratio = (a, b) => `${(a / b).toFixed(1)}x`;

function printTable(rows) {
  const widths = rows[0].map((_, col) => Math.max(...rows.map((row) => row[col].length)));
  const line = (row) => `| ${row.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]) : cell.padStart(widths[col]))).join(" | ")} |`;
  console.log(line(rows[0]));
  console.log(`|${widths.map((w, col) => (col === 0 ? ":" : "-").padEnd(w + 1, "-") + (col === 0 ? "-" : ":")).join("|")}|`);
  for (const row of rows.slice(1)) console.log(line(row));
}

console.log(`bench/validators: ManagedAuth, best of ${rounds} rounds of ${roundMs} ms per case, node ${process.version}\n`);
const results = measure({ valid, invalid });
const [ours, , ajv, zod] = results;
printTable([
  ["validator", "valid record", "invalid record", "problems reported", "vs Ajv (valid / invalid)", "vs zod (valid / invalid)"],
  ...results.map((r) => [
    r.name,
    formatOps(r.valid),
    formatOps(r.invalid),
    r === results[1] ? "-" : String(r.problems(invalid)),
    `${ratio(r.valid, ajv.valid)} / ${ratio(r.invalid, ajv.invalid)}`,
    `${ratio(r.valid, zod.valid)} / ${ratio(r.invalid, zod.invalid)}`,
  ]),
]);

const validatorsImport = importTime(`
  const start = performance.now();
  const { validateManagedAuth } = await import("@browser-service/validators");
  validateManagedAuth({});
  process.stdout.write(String(performance.now() - start));`);
const ajvImport = importTime(`
  import { readFileSync } from "node:fs";
  const start = performance.now();
  const { Ajv2020 } = await import("ajv/dist/2020.js");
  const { default: addFormats } = await import("ajv-formats");
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictRequired: false, strictTypes: false });
  addFormats(ajv);
  for (const k of ["example", "discriminator", "xml", "externalDocs", "openapi", "info", "jsonSchemaDialect", "servers", "paths", "webhooks", "components", "security", "tags"]) ajv.addKeyword(k);
  ajv.addSchema(JSON.parse(readFileSync(${JSON.stringify(specPath)}, "utf8")), "openapi.json");
  ajv.getSchema("openapi.json#/components/schemas/ManagedAuth")({});
  process.stdout.write(String(performance.now() - start));`);
console.log(`\nimport to first validation, median of ${importRuns} fresh processes:\n`);
printTable([
  ["", "time", "ratio"],
  ["@browser-service/validators", `${validatorsImport.toFixed(1)} ms`, "1.0x"],
  ["ajv + ajv-formats, compile ManagedAuth", `${ajvImport.toFixed(1)} ms`, ratio(ajvImport, validatorsImport)],
]);
console.log(`\nbench/validators: ok, ${ratio(ours.valid, ajv.valid)} Ajv's speed on the valid record, ${ratio(ours.invalid, ajv.invalid)} on the invalid one.`);
