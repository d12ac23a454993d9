import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { PageServer } from "@browser-service/test-pages";
import { type Browser, limits } from "@browser-service/types";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkChromium } from "../../src/browsers/chromium-check.js";
import { ARCHIVE_LIMITS } from "../../src/extensions/archive-rules.js";
import { managedAuth, writeFixtures } from "../support/fixtures.js";
import { tempDataDir, useTestServer } from "../support/test-server.js";
import { waitForTools } from "../support/webmcp-driver.js";
import { goodExtensionZip } from "../support/zip-writer.js";
import { type Exchange, HttpSender, sendRaw } from "./http-exchange.js";
import {
  buildRequest,
  type HttpRequest,
  type OpenApiDocument,
  PoolPick,
  type Pools,
  RequestFactory,
  type SpecOperation,
  specOperations,
} from "./operation-requests.js";
import { RACES, type RaceContext } from "./races.js";
import { RAW_CASES, type RawContext } from "./raw-cases.js";
import { type Allowed5xx, answerProblems, semanticProblems } from "./response-oracle.js";
import { edgyString } from "./schema-arbitrary.js";

// The spec-driven fuzz suite: for every operation of the bundled spec, requests made from
// its schemas (valid ones, and ones breaking each rule of each parameter and body
// property), then raw HTTP that no client library would send. Every answer must be one
// the spec declares. FUZZ_SEED and FUZZ_SCALE (a multiplier of the counts) change the run;
// the seed is printed with the counts so that a failure can be replayed.
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
// About 2,000 requests at scale 1: some 30 s on two cores, Chromium included.
const VALID_RUNS = Math.max(1, Math.round(60 * SCALE));
const RUNS_PER_RULE = Math.max(1, Math.round(4 * SCALE));

// Operations run in this order: reads, then writes, then what destroys the fixtures
// (the browser the WebMCP operations use, projects), so each finds something to act on.
const ORDER = [
  "getHealth",
  "getReadiness",
  "getAuthConnection",
  "listAuthConnections",
  "listAuthConnectionTimeline",
  "followAuthConnection",
  "listProjects",
  "getProject",
  "getOrgLimits",
  "getProjectLimits",
  "listBrowsers",
  "getBrowser",
  "listWebMcpTools",
  "invokeWebMcpTool",
  "listBrowserTelemetryEvents",
  "listExtensions",
  "getExtension",
  "downloadExtension",
  "listCredentials",
  "getCredential",
  "getCredentialTotpCode",
  "listProfiles",
  "getProfile",
  "downloadProfile",
  "createProject",
  "updateProject",
  "updateOrgLimits",
  "updateProjectLimits",
  "uploadExtension",
  "createCredential",
  "updateCredential",
  "createProfile",
  "updateProfile",
  "createAuthConnection",
  "updateAuthConnection",
  "loginAuthConnection",
  "submitAuthConnection",
  "createBrowser",
  "deleteBrowser",
  // After the browsers are gone: a stream of a running browser lasts as long as it runs.
  "streamBrowserTelemetry",
  "deleteAuthConnection",
  "deleteExtension",
  "deleteCredential",
  "deleteProfile",
  "deleteProject",
];

// Tools that answer at once: no invocation may wait for its timeout.
const TOOLS_PAGE = `<!doctype html><title>Fuzz tools</title><p>fuzz</p>
<script>
  const mc = document.modelContext;
  mc.registerTool({ name: "echo", description: "Returns its input.", execute: async (input) => ({ input }) });
  mc.registerTool({ name: "boom", description: "Always fails.", execute: async () => { throw new TypeError("failed on purpose"); } });
  mc.registerTool({
    name: "add", description: "Adds two numbers.",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    execute: async ({ a, b }) => ({ sum: a + b }),
  });
</script>`;

const spec = JSON.parse(readFileSync(createRequire(import.meta.url).resolve("@browser-service/openapi/openapi.json"), "utf8")) as OpenApiDocument;
const operations = specOperations(spec);

interface Failure {
  operation: string;
  label: string;
  request: string;
  answer: string;
  problems: string[];
  /** What the server logged as the error behind a 5xx. */
  serverError?: string;
}

// Where every failure is written in full (requests are cut short in the test output).
const FAILURES_FILE = fileURLToPath(new URL("../../../../test-results/spec-fuzz/failures.json", import.meta.url));
// The server's error log lines by request id: the cause of a 5xx goes with its failure.
const serverErrors = new Map<string, string>();
const logStream = {
  write(line: string): void {
    const entry = JSON.parse(line) as { level: number; reqId?: string; msg?: string; err?: { stack?: string } };
    if (entry.level >= 50 && entry.reqId !== undefined) serverErrors.set(entry.reqId, `${entry.msg ?? ""}: ${entry.err?.stack ?? ""}`);
  },
};

let pages: PageServer;
let sender: HttpSender;
let scopedKey: string;
let browser: Browser;
let allowed5xx: Allowed5xx;
let factory: RequestFactory;
const pools: Pools = { projects: [], activeProjectIds: [], browsers: [], authConnections: [], toolRefs: [], extensions: [], credentials: [], profiles: [] };
const counts = { requests: 0, raw: 0, operations: 0, raced: 0 };
// Statuses answered, by operation: what the fuzzer reached, printed with the counts.
const statuses = new Map<string, Map<string, number>>();
// Each race's answers in order, printed with the counts.
const raceOutcomes: string[] = [];
const failures: Failure[] = [];

/** A stable seed per case, so that adding a case does not change the others' requests. */
function seedOf(...parts: string[]): number {
  let hash = SEED | 0;
  for (const char of parts.join("\u0000")) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193);
  return hash >>> 0;
}

/** The 5xx answers each operation documents, less `internal_error`, and `browser_unavailable` only without a usable Chromium. */
function documented5xx(chromiumUsable: boolean): Allowed5xx {
  const out: Record<string, Record<string, string[]>> = {};
  for (const item of Object.values(spec.paths)) {
    for (const value of Object.values(item)) {
      const operation = value as { operationId?: string; responses?: Record<string, { $ref?: string; "x-error-codes"?: string[] }> };
      if (operation.operationId === undefined) continue;
      const byStatus: Record<string, string[]> = {};
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        if (!status.startsWith("5")) continue;
        const target = response.$ref
          ? (spec.components.responses as Record<string, { "x-error-codes"?: string[] }>)[response.$ref.split("/").pop() as string]
          : response;
        byStatus[status] = (target?.["x-error-codes"] ?? []).filter((code) => code !== "internal_error" && (code !== "browser_unavailable" || !chromiumUsable));
      }
      out[operation.operationId] = byStatus;
    }
  }
  return out;
}

/** Reads what exists now: projects (all pages), browsers, tool refs of the fuzz browser. */
async function refreshPools(): Promise<void> {
  const client = t.client();
  const projects = [];
  for (let offset = 0; ; offset += 100) {
    const page = await client.projects.list({ offset, limit: 100 });
    projects.push(...page);
    if (page.length < 100) break;
  }
  pools.projects = projects.flatMap((project) => [project.id, project.name]);
  pools.activeProjectIds = projects.filter((project) => project.status === "active").map((project) => project.id);
  const browsers = await client.browsers.list({ limit: 100 });
  pools.browsers = browsers.flatMap((row) => [row.id, ...(row.name ? [row.name] : [])]);
  const running = browsers.find((row) => row.id === browser.id && row.status === "running");
  pools.toolRefs = running ? (await client.webmcp.listTools(browser.id)).tools.map((tool) => tool.tool_ref) : ["no-browser"];
  const idsAndNames = (rows: readonly { id: string; name: string | null }[]) => rows.flatMap((row) => [row.id, ...(row.name ? [row.name] : [])]);
  pools.extensions = idsAndNames(await client.extensions.list({ limit: 100 }));
  pools.credentials = idsAndNames(await client.credentials.list({ limit: 100 }));
  pools.profiles = idsAndNames(await client.profiles.list({ limit: 100 }));
}

const excerpt = (text: string, max = 300) => (text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text);
const describeRequest = (request: HttpRequest, max = 200) =>
  `${request.method} ${excerpt(request.target, max)} ${JSON.stringify(request.headers)}${request.body ? ` ${excerpt(request.body.toString("utf8"), max === Infinity ? 4096 : max)}` : ""}`;
const describeAnswer = (exchange: Exchange) => ("error" in exchange ? exchange.error : `${exchange.status} ${excerpt(exchange.body)}`);

/** Sends one request and records what is wrong with its answer, the server's response check included. */
async function exchange(request: HttpRequest): Promise<void> {
  const mismatchesBefore = t.mismatches.length;
  const answer = await sender.send(request);
  counts.requests++;
  const byStatus = statuses.get(request.operationId ?? "-") ?? new Map<string, number>();
  const status = "status" in answer ? String(answer.status) : "none";
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  statuses.set(request.operationId ?? "-", byStatus);
  let sentBody: unknown;
  try {
    sentBody = request.body ? JSON.parse(request.body.toString("utf8")) : undefined;
  } catch {
    sentBody = undefined;
  }
  const problems = [
    ...answerProblems(
      { operationId: request.operationId, label: request.label, method: request.method, ...(request.expect ? { expect: request.expect } : {}) },
      answer,
      allowed5xx,
    ),
    ...semanticProblems(request.operationId, sentBody, answer),
    ...t.mismatches.slice(mismatchesBefore).flatMap((mismatch) => mismatch.problems.map((problem) => `response check: ${problem}`)),
  ];
  if (problems.length > 0) {
    const serverError = "status" in answer ? serverErrors.get(answer.headers["x-request-id"] ?? "") : undefined;
    failures.push({
      operation: request.operationId ?? "-",
      label: request.label,
      request: describeRequest(request, Infinity),
      answer: describeAnswer(answer),
      problems,
      ...(serverError ? { serverError } : {}),
    });
  }
}

/** The failures of one operation or of the raw cases, one line per distinct label and problem, as a readable list. */
function report(operation: string): string[] {
  const seen = new Map<string, Failure>();
  for (const failure of failures.filter((f) => f.operation === operation)) {
    for (const problem of failure.problems) {
      const key = `${failure.label}: ${problem.replace(/\d+/g, "N").slice(0, 120)}`;
      if (!seen.has(key)) seen.set(key, { ...failure, problems: [problem] });
    }
  }
  return [...seen.values()].map(
    (f) =>
      `[${f.label}] ${f.problems[0]}\n    request: ${excerpt(f.request)}\n    answer: ${f.answer}${f.serverError ? `\n    server: ${excerpt(f.serverError, 600)}` : ""}`,
  );
}

beforeAll(async () => {
  rmSync(FAILURES_FILE, { force: true });
  pages = await PageServer.start();
  pages.serve("/fuzz", TOOLS_PAGE);
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages?.close();
});

const t = useTestServer(() => {
  const dataDir = tempDataDir();
  const flow = {
    flow_status: "IN_PROGRESS",
    flow_step: "AWAITING_INPUT",
    flow_type: "LOGIN",
    flow_expires_at: "2020-01-01T00:00:00Z",
    hosted_url: "https://login.example.org/h",
    live_view_url: "https://live.example.org/v",
  };
  const connections = [
    { project: "Default", ...managedAuth("mac_plain") },
    { project: "Default", ...managedAuth("mac_expired_flow", flow) },
    { project: "fuzz-other", ...managedAuth("mac_other_project") },
  ];
  // Two browsers at most at once, the fuzz browser and one more: every other POST /browsers that passes its checks is 429.
  return { dataDir, planLimit: 2, fixtures: writeFixtures(dataDir, { auth_connections: connections }), logger: { level: "error", stream: logStream } };
});

beforeAll(async () => {
  scopedKey = (await t.server.issueApiKey("fuzz-other")).secret;
  pools.authConnections = ["mac_plain", "mac_expired_flow", "mac_other_project", "mac_unknown"];
  allowed5xx = documented5xx((await checkChromium(process.env.CHROMIUM_PATH ?? "/usr/bin/chromium")).usable);
  browser = await t.client().browsers.create({ name: "fuzz-browser", start_url: pages.url("/fuzz") });
  await t.client().extensions.upload({ file: goodExtensionZip(), name: "fuzz-extension" });
  await t.client().credentials.create({ name: "fuzz-credential", domain: "fuzz.example", values: { username: "u" }, totp_secret: "JBSWY3DPEHPK3PXPJBSWY3DP" });
  await t.client().profiles.create({ name: "fuzz-profile" });
  await waitForTools(t.client(), browser.id, (tools) => tools.length === 3);
  sender = new HttpSender(t.url);
  // start_url: this machine's pages only (a valid URL elsewhere would send Chromium there); tool_ref: mostly real tools.
  const loopbackUrls = fc.oneof(
    fc.constantFrom(pages.url("/fuzz"), pages.url("/fuzz", "localhost"), `${pages.origin()}/no-such-page`),
    fc.webPath().map((path) => `${pages.origin()}${path.startsWith("/") ? path : `/${path}`}`),
  );
  const toolRefs = fc.nat().map((index) => new PoolPick("toolRefs", index));
  const totpSecrets = fc.constantFrom("JBSWY3DPEHPK3PXP", "jbsw y3dp ehpk 3pxp", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=8&algorithm=SHA256");
  const fewValues = fc.dictionary(fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/), fc.string({ minLength: 1, maxLength: 40 }), { maxKeys: 5 });
  // WebMcpInvokeRequest.input, as its description restricts it: ASCII property names, well-formed strings (of any script).
  // biome-ignore lint/suspicious/noControlCharactersInRegex: a name is made of any ASCII characters, controls included; \p{Cc} is only the controls.
  const asciiName = fc.string({ unit: fc.stringMatching(/^[\x00-\x7f]$/), maxLength: 12 }).filter((name) => name !== "__proto__");
  const anyText = edgyString({ maxLength: 12 }).filter((text) => !/\p{Cs}/u.test(text));
  const input = fc.dictionary(asciiName, fc.oneof(fc.jsonValue({ maxDepth: 3 }), anyText), { maxKeys: 6 });
  factory = new RequestFactory(spec, {
    formats: { uri: loopbackUrls },
    overrides: {
      // Valid secrets, and few values: a random string is no base32, and 50 random values
      // merged into the stored ones pass the cap, both rightly refused.
      createCredential: { "/totp_secret": totpSecrets, "/values": fewValues },
      updateCredential: { "/totp_secret": fc.oneof(totpSecrets, fc.constant("")), "/values": fewValues },
      // BrowserTelemetryRequestConfig's rules are `not` and `if`/`then` in an `allOf`: valid
      // values are listed, and the rules are broken by the prose rules below.
      createBrowser: {
        "/telemetry": fc.constantFrom(
          null,
          {},
          { enabled: true },
          { enabled: false },
          { browser: { console: { enabled: true }, captcha: { enabled: false } } },
          { browser: { control: { cdp: { excluded_methods: ["Page.navigate", "Input.insertText"] } } } },
          { enabled: true, storage: { enabled: true } },
        ),
      },
      invokeWebMcpTool: {
        "/tool_ref": fc.oneof({ weight: 3, arbitrary: toolRefs }, { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 30 }) }),
        "/input": input,
      },
    },
    opaque: { createBrowser: ["/telemetry"] },
    proseRules: {
      createBrowser: [
        {
          label: "/telemetry rules of BrowserTelemetryRequestConfig",
          values: fc
            .constantFrom(
              { enabled: false, browser: {} },
              { enabled: false, export: { otlp: { destination: { name: "x" } } } },
              { storage: { enabled: false } },
              { export: { otlp: { enabled: false, destination: { id: "x" } } } },
              { export: { otlp: { enabled: true } } },
              { browser: { control: { cdp: { excluded_methods: ["Runtime.evaluate"] } } } },
              { browser: { monitor: { enabled: true } } },
              { enabled: "yes" },
            )
            .map((telemetry) => ({ telemetry })),
        },
      ],
      invokeWebMcpTool: [
        {
          label: "/input property name past ASCII",
          values: fc
            .tuple(toolRefs, fc.constantFrom("\u00e9", "\u540d\u524d", "\u200e", "\ud83d\ude00", "a\u0301", "\ud800"))
            .map(([tool_ref, name]) => ({ tool_ref, input: { ok: { [name]: 1 } } })),
        },
        // JSON.parse makes __proto__ an own property, as a client's JSON would carry it.
        {
          label: "/input __proto__ or constructor.prototype",
          values: fc
            .tuple(toolRefs, fc.constantFrom('{"__proto__":{"admin":true}}', '{"a":[{"constructor":{"prototype":{}}}]}'))
            .map(([tool_ref, input]) => ({ tool_ref, input: JSON.parse(input) as unknown })),
        },
        {
          label: "/input unpaired surrogate",
          values: fc.tuple(toolRefs, fc.constantFrom("\ud800", "a\udfff", "\udbff\ud800")).map(([tool_ref, text]) => ({ tool_ref, input: { a: [text] } })),
        },
      ],
    },
  });
}, 120_000);

/** Deletes every browser of every active project (the fuzzer starts some through the project header). */
async function deleteAllBrowsers(): Promise<void> {
  await refreshPools();
  for (const projectId of pools.activeProjectIds) {
    const client = t.client({ projectId });
    for (const row of await client.browsers.list({ limit: 100 })) await client.browsers.delete(row.id).catch(() => undefined);
  }
}

afterAll(async () => {
  sender?.close();
  // Every browser the fuzzer started ends here, whatever the fuzzer left running (a server
  // that never started rejects this too).
  await deleteAllBrowsers().catch(() => undefined);
  // Reported before the server closes: a failed check of its responses there must not keep the report from being written.
  const operationsFailed = new Set(failures.map((failure) => failure.operation)).size;
  if (failures.length > 0) {
    mkdirSync(dirname(FAILURES_FILE), { recursive: true });
    writeFileSync(FAILURES_FILE, `${JSON.stringify({ seed: SEED, scale: SCALE, failures }, null, 2)}\n`);
    console.log(`spec fuzz: every failure in full in ${FAILURES_FILE}`);
  }
  const reached = [...statuses].map(
    ([operation, byStatus]) =>
      `  ${operation}: ${[...byStatus]
        .sort()
        .map(([status, n]) => `${status}×${n}`)
        .join(" ")}`,
  );
  console.log(
    `spec fuzz (seed ${SEED}, scale ${SCALE}): ${counts.requests} generated requests over ${counts.operations} of ${operations.length} operations, ${counts.raw} raw HTTP cases, ${counts.raced} racing requests; ` +
      `${failures.length} failed requests in ${operationsFailed} operations\nstatuses by operation:\n${reached.join("\n")}\nraces:\n${raceOutcomes.join("\n")}`,
  );
});

describe("spec-driven fuzzing", () => {
  it("covers every operation of the spec, in a known order", () => {
    expect([...operations.map((operation) => operation.operationId)].sort()).toEqual([...ORDER].sort());
  });

  const ordered = ORDER.map((id) => operations.find((operation) => operation.operationId === id)).filter(
    (operation): operation is SpecOperation => operation !== undefined,
  );
  for (const operation of ordered) {
    it(`${operation.operationId}: valid requests and one case per broken rule`, async () => {
      await refreshPools();
      const cases = factory.casesOf(operation);
      counts.operations++;
      const plans = [
        ...fc.sample(cases.valid, { seed: seedOf(operation.operationId, "valid"), numRuns: VALID_RUNS }),
        ...cases.invalid.flatMap((c) => fc.sample(c.plans, { seed: seedOf(operation.operationId, c.label), numRuns: RUNS_PER_RULE })),
      ];
      const files = { zip: goodExtensionZip(), maxArchiveBytes: ARCHIVE_LIMITS.maxArchiveBytes };
      const seen = new Set<string>();
      for (const plan of plans) {
        const request = buildRequest(operation, plan, pools, { orgKey: t.orgKey, scopedKey }, files);
        const key = `${request.label} ${request.target} ${JSON.stringify(request.headers)} ${request.body ? createHash("sha256").update(request.body).digest("hex") : ""}`;
        if (seen.has(key)) continue;
        seen.add(key);
        await exchange(request);
      }
      expect(report(operation.operationId), `seed ${SEED}`).toEqual([]);
    });
    // The raw cases need the fuzz browser running: before the operations that delete it.
    if (operation.operationId === "createBrowser") {
      it("raw HTTP: framing, limits, methods, encodings, upgrades and the DevTools endpoint", async () => {
        const token = new URL(browser.cdp_ws_url ?? "ws://x/?token=").searchParams.get("token") ?? "";
        const context: RawContext = {
          orgKey: t.orgKey,
          browserId: browser.id,
          browserToken: token,
          projectId: pools.activeProjectIds.find((id) => id !== t.defaultProjectId) ?? t.defaultProjectId,
        };
        for (const rawCase of RAW_CASES) {
          const mismatchesBefore = t.mismatches.length;
          const bytes = rawCase.bytes(context);
          const answer = await sendRaw(t.url, bytes, { halfClose: rawCase.keepOpen !== true });
          counts.raw++;
          const method = String(bytes).split(" ")[0] ?? "";
          const problems = [
            ...answerProblems(
              {
                operationId: undefined,
                label: rawCase.label,
                method,
                ...(rawCase.expect ? { expect: rawCase.expect } : {}),
                ...(rawCase.code ? { code: rawCase.code } : {}),
                ...(rawCase.allow ? { allow: rawCase.allow } : {}),
              },
              answer,
              allowed5xx,
            ),
            ...t.mismatches.slice(mismatchesBefore).flatMap((mismatch) => mismatch.problems.map((problem) => `response check: ${problem}`)),
          ];
          if (problems.length > 0)
            failures.push({ operation: "raw", label: rawCase.label, request: excerpt(String(bytes), 200), answer: describeAnswer(answer), problems });
        }
        expect(report("raw"), `seed ${SEED}`).toEqual([]);
      });
    }
  }

  it("races: the same request several times at once keeps the spec's rules", async () => {
    // Room for a browser in the race that starts one: no other browser, no cap of 0 left by the fuzzer.
    await deleteAllBrowsers();
    await t
      .client()
      .limits.update({ default_project_max_concurrent_sessions: limits.schemas.UpdateOrgLimitsRequest.default_project_max_concurrent_sessions.maximum });
    const racer = new HttpSender(t.url, 8);
    let made = 0;
    const context: RaceContext = {
      orgKey: t.orgKey,
      together: (requests) => Promise.all(requests.map((request) => racer.send(request))),
      alone: (request) => sender.send(request),
      unique: (prefix) => `${prefix}-${SEED}-${++made}`,
      zip: goodExtensionZip(),
    };
    try {
      for (const race of RACES) {
        const mismatchesBefore = t.mismatches.length;
        const result = await race.run(context);
        counts.raced += result.sent.length;
        raceOutcomes.push(`  ${race.label}: ${result.sent.map(({ answer }) => ("status" in answer ? answer.status : "none")).join(" ")}`);
        const problems = [
          ...result.problems,
          ...result.sent.flatMap(({ request, answer }) =>
            answerProblems({ operationId: request.operationId, label: race.label, method: request.method }, answer, allowed5xx),
          ),
          ...t.mismatches.slice(mismatchesBefore).flatMap((mismatch) => mismatch.problems.map((problem) => `response check: ${problem}`)),
        ];
        if (problems.length > 0)
          failures.push({
            operation: "race",
            label: race.label,
            request: result.sent.map(({ request }) => describeRequest(request)).join("\n"),
            answer: result.sent.map(({ answer }) => describeAnswer(answer)).join("\n"),
            problems,
          });
      }
    } finally {
      racer.close();
    }
    expect(report("race"), `seed ${SEED}`).toEqual([]);
  });
});
