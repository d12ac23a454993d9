import { PageServer } from "@browser-service/test-pages";
import type { Browser } from "@browser-service/types";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_COMMAND_DEPTH } from "../../src/cdp/command-text.js";
import { type CdpMessage, CdpRawClient } from "../support/cdp-raw-client.js";
import { depthOf } from "../support/json-depth.js";
import { useTestServer } from "../support/test-server.js";
import { TrackingLauncher } from "../support/tracking-launcher.js";

// The DevTools endpoint fuzzed from a client's side: generated commands (Target wrappers,
// Browser commands, navigations, file inputs, with generated params, values nested past
// any limit, stolen and made-up sessions, bad ids, and raw text no JSON writer produces)
// in batches from one client. After every batch the server must answer the API, a control
// client must still evaluate JavaScript, no browser may have ended, and the server must
// have logged no error; every command a rule refuses must have been answered with an
// error. FUZZ_SEED and FUZZ_SCALE (a multiplier of the batches) change the run; the seed
// is printed with the counts so that a failure can be replayed.
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_123);
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
// About 240 commands at scale 1: some 30 s on two cores, Chromium included.
const BATCHES = Math.max(1, Math.round(8 * SCALE));
const BATCH_SIZE = 30;
// How long a batch's answers are awaited: commands Chromium never answers (a promise that never settles) are only counted.
const BATCH_WAIT_MS = 5_000;

const ALWAYS_REFUSED = [
  "Target.sendMessageToTarget",
  "Target.exposeDevToolsProtocol",
  "Browser.crash",
  "Browser.crashGpuProcess",
  "Extensions.loadUnpacked",
  "Extensions.uninstall",
  "Tethering.bind",
];
const FLAT_ONLY = ["Target.attachToTarget", "Target.setAutoAttach"];
const URL_METHODS = ["Page.navigate", "Target.createTarget", "Network.loadNetworkResource"];
const METHODS = [
  ...ALWAYS_REFUSED,
  ...FLAT_ONLY,
  ...URL_METHODS,
  "Target.autoAttachRelated",
  "Target.attachToBrowserTarget",
  "Target.detachFromTarget",
  "Target.getTargets",
  "Target.getTargetInfo",
  "Target.closeTarget",
  "Target.createBrowserContext",
  "Target.disposeBrowserContext",
  "Target.setDiscoverTargets",
  "Browser.getVersion",
  "Browser.setDownloadBehavior",
  "Page.setDownloadBehavior",
  "Runtime.evaluate",
  "DOM.setFileInputFiles",
  "Input.dispatchDragEvent",
  "Fetch.enable",
  "No.such",
];
const REFUSED_URLS = [
  "file:///etc/passwd",
  "FILE:///etc/passwd",
  " file:///etc/shadow",
  "view-source:file:///etc/passwd",
  "filesystem:file:///x",
  "chrome://version",
  "chrome://inducebrowsercrashforrealz",
  "about:crash",
  "javascript:1",
  "/etc/passwd",
];
const OUTSIDE_FILES = ["/etc/passwd", "relative.txt", "__PROFILE__/../../etc/passwd", "__PROFILE__x/upload.txt", "__PROFILE__/upload.txt\u0000"];
// Expressions that end: a page stuck in a loop would hold the fuzzer, not test the server.
const EXPRESSIONS = [
  "1 + 1",
  "new Promise(() => {})",
  "'x'.repeat(1e6)",
  "document.title",
  "let v = []; for (let i = 0; i < 20000; i++) v = [v]; v",
  "window.close()",
];

/** A piece of JSON text (placeholders such as `__SESSION__` are filled in when it is sent). */
type Piece = string;
const text = (value: unknown): Piece => JSON.stringify(value) ?? "null";
const nested = (depth: number, open: string, close: string, inner = "0") => `${open.repeat(depth)}${inner}${close.repeat(depth)}`;

const deepPiece = fc
  .tuple(fc.integer({ min: MAX_COMMAND_DEPTH - 5, max: 25_000 }), fc.boolean())
  .map(([depth, arrays]) => (arrays ? nested(depth, "[", "]") : nested(depth, '{"a":', "}")));
const placeholder = fc.constantFrom('"__TARGET__"', '"__BROWSER_TARGET__"', '"__SESSION__"', '"__STOLEN__"', '"__CONTEXT__"');
const urlPiece = fc.oneof(
  fc.constantFrom(...REFUSED_URLS.map(text)),
  fc.constantFrom('"__PAGE__"', text("about:blank"), text("data:text/html,<p>d"), text(""), text("chrome-extension://abc/x.html")),
);
const filesPiece = fc.array(fc.oneof(fc.constantFrom(...OUTSIDE_FILES), fc.constant("__PROFILE__/upload.txt")), { maxLength: 3 }).map(text);
const anyPiece: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 8, arbitrary: fc.jsonValue({ maxDepth: 3 }).map(text) },
  { weight: 1, arbitrary: deepPiece },
  { weight: 2, arbitrary: placeholder },
  { weight: 2, arbitrary: urlPiece },
  { weight: 1, arbitrary: filesPiece },
  { weight: 2, arbitrary: fc.constantFrom("true", "false", '"true"', "1", "null") },
  { weight: 1, arbitrary: fc.constantFrom(...EXPRESSIONS.map(text)) },
  { weight: 1, arbitrary: fc.constant(text(JSON.stringify({ id: 1, method: "Browser.close" }))) },
);
const KEYS = [
  "targetId",
  "flatten",
  "url",
  "sessionId",
  "message",
  "files",
  "expression",
  "downloadPath",
  "behavior",
  "autoAttach",
  "waitForDebuggerOnStart",
  "awaitPromise",
  "returnByValue",
  "frameId",
  "data",
  "browserContextId",
  "newWindow",
  "discover",
];
// Members likely to get a command past Chromium's own checks, so that it reaches real work.
const SENSIBLE: Record<string, fc.Arbitrary<[string, Piece][]>> = {
  "Target.attachToTarget": fc
    .tuple(placeholder, fc.constantFrom("true", "false", '"true"', ""))
    .map(([target, flatten]) => [["targetId", target], ...(flatten === "" ? [] : [["flatten", flatten] as [string, Piece]])]),
  "Target.setAutoAttach": fc
    .constantFrom("true", "false", "")
    .map((flatten) => [["autoAttach", "true"], ["waitForDebuggerOnStart", "false"], ...(flatten === "" ? [] : [["flatten", flatten] as [string, Piece]])]),
  "Target.sendMessageToTarget": fc.tuple(placeholder, fc.constantFrom("targetId", "sessionId")).map(([to, key]) => [
    [key, to],
    ["message", text(JSON.stringify({ id: 1, method: "Browser.close" }))],
  ]),
  "Page.navigate": urlPiece.map((url) => [["url", url]]),
  "Target.createTarget": urlPiece.map((url) => [["url", url]]),
  "Network.loadNetworkResource": urlPiece.map((url) => [
    ["url", url],
    ["frameId", '"__FRAME__"'],
    ["options", text({ disableCache: true, includeCredentials: false })],
  ]),
  "DOM.setFileInputFiles": filesPiece.map((files) => [
    ["files", files],
    ["nodeId", "1"],
  ]),
  "Runtime.evaluate": fc.constantFrom(...EXPRESSIONS).map((expression) => [
    ["expression", text(expression)],
    ["awaitPromise", "true"],
    ["returnByValue", "true"],
  ]),
  "Browser.setDownloadBehavior": fc.constant([
    ["behavior", text("allow")],
    ["downloadPath", text("/tmp/not-here")],
  ]),
};

/** One generated message: the command's parts, and how its text may be broken on the wire. */
interface Plan {
  method: string;
  methodPiece: Piece;
  idPiece: Piece | undefined;
  members: [string, Piece][];
  paramsShape: "object" | "other" | "none";
  otherParams: Piece;
  sessionPiece: Piece | undefined;
  duplicateMethod: boolean;
  breakage: "none" | "truncate" | "raw-nul" | "binary-invalid-utf8" | "wrap-array";
  at: number;
}

// The commands the rules are about come more often than the rest.
const WEIGHTS: Record<string, number> = {
  "Target.attachToTarget": 4,
  "Target.setAutoAttach": 3,
  "Page.navigate": 4,
  "Target.createTarget": 3,
  "Network.loadNetworkResource": 3,
  "Runtime.evaluate": 4,
  "DOM.setFileInputFiles": 3,
};
const PAGE_DOMAIN = /^(Page|Runtime|Network|DOM|Input|Fetch)\./;
const methodArbitrary = fc.oneof(...METHODS.map((method) => ({ weight: WEIGHTS[method] ?? 1, arbitrary: fc.constant(method) })));

const planArbitrary: fc.Arbitrary<Plan> = methodArbitrary.chain((method) =>
  fc.record({
    method: fc.constant(method),
    methodPiece: fc.oneof(
      { weight: 19, arbitrary: fc.constant(text(method)) },
      { weight: 1, arbitrary: fc.constantFrom("1", "null", '""', text(method.toLowerCase())) },
    ),
    idPiece: fc.oneof(
      { weight: 30, arbitrary: fc.constant("__ID__") },
      { weight: 2, arbitrary: fc.constantFrom("1e400", "123456789012345678901234567890", "-1", "1.5", '"7"', "null") },
      { weight: 1, arbitrary: fc.constant(undefined) },
    ),
    members: fc
      .tuple(SENSIBLE[method] ?? fc.constant([]), fc.array(fc.tuple(fc.constantFrom(...KEYS), anyPiece), { maxLength: 2 }))
      .map(([sensible, extra]) => [...sensible, ...extra]),
    paramsShape: fc.oneof(
      { weight: 8, arbitrary: fc.constant("object" as const) },
      { weight: 1, arbitrary: fc.constantFrom("other" as const, "none" as const) },
    ),
    otherParams: fc.oneof(fc.constantFrom("[]", '"x"', "3", "null"), deepPiece),
    // Page-level domains mostly on the client's page session, browser-level ones mostly on its browser session.
    sessionPiece: fc.oneof(
      { weight: PAGE_DOMAIN.test(method) ? 1 : 8, arbitrary: fc.constant(undefined) },
      { weight: PAGE_DOMAIN.test(method) ? 8 : 1, arbitrary: fc.constant('"__SESSION__"') },
      { weight: 1, arbitrary: fc.constantFrom('"__STOLEN__"', text("[".repeat(20_000)), "7", '"nope"') },
    ),
    duplicateMethod: fc.oneof({ weight: 9, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
    breakage: fc.oneof(
      { weight: 12, arbitrary: fc.constant("none" as const) },
      { weight: 1, arbitrary: fc.constantFrom("truncate" as const, "raw-nul" as const, "binary-invalid-utf8" as const, "wrap-array" as const) },
    ),
    at: fc.double({ min: 0, max: 1, noNaN: true }),
  }),
);

/** The rule that must refuse a parsed command, by an account independent of the router's. */
function mustRefuse(command: Record<string, unknown>, profile: string): string | undefined {
  if (depthOf(command) > MAX_COMMAND_DEPTH) return "too deep";
  const { method, params } = command as { method: unknown; params?: Record<string, unknown> };
  if (typeof method !== "string" || (params !== undefined && (typeof params !== "object" || params === null || Array.isArray(params)))) return "not a command";
  if (ALWAYS_REFUSED.includes(method)) return method;
  if (FLAT_ONLY.includes(method) && params?.flatten !== true) return `${method} without flatten: true`;
  if (URL_METHODS.includes(method) && REFUSED_URLS.includes(params?.url as string)) return `${method} ${String(params?.url)}`;
  const files = params?.files;
  if (method === "DOM.setFileInputFiles" && Array.isArray(files) && files.some((file) => file !== `${profile}/upload.txt`)) return "a file outside the profile";
  return undefined;
}

let launcher: TrackingLauncher;
let pages: PageServer;
let target: Browser;
let neighbour: Browser;
let neighbourProject: string;
let profile: string;
const serverErrors: string[] = [];
const counts = { batches: 0, messages: 0, broken: 0, answered: 0, errors: 0, refusedByRule: 0, unanswered: 0 };
const byRule = new Map<string, number>();

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/plain", "<!doctype html><title>Plain</title><p>plain</p>");
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages.close();
});

const t = useTestServer(() => {
  launcher = new TrackingLauncher();
  const logStream = {
    write(line: string): void {
      const entry = JSON.parse(line) as { level: number; msg?: string; err?: { stack?: string } };
      if (entry.level >= 50) serverErrors.push(`${entry.msg ?? ""}: ${entry.err?.stack ?? ""}`);
    },
  };
  return { launcher, logger: { level: "error", stream: logStream }, cdpLimits: { maxClients: 4 } };
});

beforeAll(async () => {
  target = await t.client().browsers.create({ start_url: pages.url("/plain") });
  profile = launcher.latest().userDataDir as string;
  const other = await t.client().projects.create({ name: `cdp-fuzz-${SEED}` });
  neighbourProject = other.id;
  neighbour = await t.client().browsers.create({}, { projectId: other.id });
}, 120_000);

afterAll(async () => {
  console.log(
    `cdp fuzz (seed ${SEED}, scale ${SCALE}): ${counts.batches} batches, ${counts.messages} messages (${counts.broken} broken on the wire), ` +
      `${counts.answered} answers (${counts.errors} errors), ${counts.refusedByRule} refused by a rule, ${counts.unanswered} never answered within the wait\n` +
      `rules met: ${[...byRule]
        .sort()
        .map(([rule, n]) => `${rule}×${n}`)
        .join(", ")}`,
  );
});

/** Fills the placeholders of a piece of text with what exists now. */
function fill(raw: string, values: Record<string, string>): string {
  return raw.replace(/__([A-Z_]+)__/g, (whole, name: string) => values[name] ?? whole);
}

/** The text of a plan's message, placeholders filled, before any breakage. */
function messageText(plan: Plan, id: number): string {
  const members: string[] = [];
  if (plan.idPiece !== undefined) members.push(`"id":${plan.idPiece.replace("__ID__", String(id))}`);
  members.push(`"method":${plan.methodPiece}`);
  if (plan.duplicateMethod) members.push('"method":"Browser.getVersion"');
  if (plan.paramsShape === "object") members.push(`"params":{${plan.members.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`);
  else if (plan.paramsShape === "other") members.push(`"params":${plan.otherParams}`);
  if (plan.sessionPiece !== undefined) members.push(`"sessionId":${plan.sessionPiece}`);
  return `{${members.join(",")}}`;
}

/** A page target of the browser (the fuzzer may have closed every tab): an existing one, or a new one. */
async function ensurePage(client: CdpRawClient): Promise<void> {
  const { targetInfos } = (await client.send("Target.getTargets")).result as { targetInfos: { type: string }[] };
  if (!targetInfos.some((info) => info.type === "page")) await client.send("Target.createTarget", { url: "about:blank" });
}

/** Evaluates 1 + 1 in a new tab of `browser` from a client of its own: the browser and its DevTools path work. */
async function controlEvaluates(browser: Browser): Promise<number> {
  const control = await CdpRawClient.open(browser.cdp_ws_url);
  try {
    const { targetId } = (await control.send("Target.createTarget", { url: "about:blank" })).result as { targetId: string };
    const { sessionId } = (await control.send("Target.attachToTarget", { targetId, flatten: true })).result as { sessionId: string };
    const answer = await control.send("Runtime.evaluate", { expression: "1 + 1", returnByValue: true }, sessionId);
    await control.send("Target.closeTarget", { targetId });
    return (answer.result as { result: { value: number } }).result.value;
  } finally {
    await control.close();
  }
}

describe("DevTools endpoint fuzzing", () => {
  for (let batch = 0; batch < BATCHES; batch++) {
    it(`batch ${batch + 1} of ${BATCHES}: the server, the browser and its neighbours survive, and every rule refuses`, async () => {
      const plans = fc.sample(planArbitrary, { seed: SEED + batch, numRuns: BATCH_SIZE });
      const stolen = await CdpRawClient.open(target.cdp_ws_url);
      const attacker = await CdpRawClient.open(target.cdp_ws_url);
      const failures: string[] = [];
      try {
        await ensurePage(attacker);
        const stolenSession = await stolen.attachToPage();
        const session = await attacker.attachToPage();
        const { targetInfos } = (await attacker.send("Target.getTargets")).result as { targetInfos: { targetId: string; type: string }[] };
        const { targetInfo } = (await attacker.send("Target.getTargetInfo")).result as { targetInfo: { targetId: string } };
        const { frameTree } = (await attacker.send("Page.getFrameTree", {}, session)).result as { frameTree: { frame: { id: string } } };
        const values = {
          SESSION: session,
          STOLEN: stolenSession,
          TARGET: targetInfos.find((info) => info.type === "page")?.targetId ?? "none",
          BROWSER_TARGET: targetInfo.targetId,
          CONTEXT: "none",
          FRAME: frameTree.frame.id,
          PAGE: pages.url("/plain"),
          PROFILE: profile,
        };
        // The setup's commands above were all answered: what comes from here on answers the batch.
        const setupAnswers = attacker.received.length;
        const expected = new Map<number, { rule: string | undefined; text: string }>();
        let nextId = 1000;
        for (const plan of plans) {
          const id = nextId++;
          const message = fill(messageText(plan, id), values);
          counts.messages++;
          if (plan.breakage === "none") {
            let parsed: unknown;
            try {
              parsed = JSON.parse(message);
            } catch {
              parsed = undefined;
            }
            if (plan.idPiece === "__ID__" && typeof parsed === "object" && parsed !== null)
              expected.set(id, { rule: mustRefuse(parsed as Record<string, unknown>, profile), text: message });
            attacker.sendRaw(message);
            continue;
          }
          counts.broken++;
          const cut = Math.floor(plan.at * message.length);
          if (plan.breakage === "truncate") attacker.sendRaw(message.slice(0, cut));
          else if (plan.breakage === "raw-nul") attacker.sendRaw(`${message.slice(0, cut)}\u0000${message.slice(cut)}`);
          else if (plan.breakage === "wrap-array") attacker.sendRaw(`[${message}]`);
          else
            attacker.sendRaw(Buffer.concat([Buffer.from(message.slice(0, cut)), Buffer.from([0xff, 0xc3]), Buffer.from(message.slice(cut))]), { binary: true });
        }
        const answerOf = (id: number): CdpMessage | undefined => attacker.received.find((message) => message.id === id);
        const ruled = [...expected].filter(([, { rule }]) => rule !== undefined);
        // Refusals come at once; other commands as the browser answers, or never.
        await expect.poll(() => !attacker.open || ruled.every(([id]) => answerOf(id) !== undefined), { timeout: BATCH_WAIT_MS }).toBe(true);
        await new Promise((resolve) => setTimeout(resolve, Math.min(BATCH_WAIT_MS, 1_000)));
        for (const [id, { rule, text: sent }] of ruled) {
          const answer = answerOf(id);
          byRule.set(rule as string, (byRule.get(rule as string) ?? 0) + 1);
          if (answer?.error !== undefined) counts.refusedByRule++;
          else failures.push(`${rule}: ${sent.slice(0, 300)} was answered ${JSON.stringify(answer)?.slice(0, 300)}`);
        }
        const answers = attacker.received.slice(setupAnswers).filter((message) => typeof message.id === "number");
        counts.answered += answers.length;
        counts.errors += answers.filter((message) => message.error !== undefined).length;
        counts.unanswered += [...expected.keys()].filter((id) => answerOf(id) === undefined).length;
        // Every answer names a command this client sent (0: one the server could not read).
        for (const answer of answers)
          if (answer.id !== 0 && (answer.id as number) < 1000) failures.push(`an answer to an id never sent: ${JSON.stringify(answer).slice(0, 200)}`);
      } finally {
        await attacker.close();
        await stolen.close();
      }
      counts.batches++;
      expect(failures, `seed ${SEED + batch}`).toEqual([]);
      expect(serverErrors, `seed ${SEED + batch}`).toEqual([]);
      for (const [browser, projectId] of [
        [target, t.defaultProjectId],
        [neighbour, neighbourProject],
      ] as const) {
        const row = await t
          .client({ projectId })
          .browsers.get(browser.id)
          .catch(() => undefined);
        expect(row?.status ?? "gone", browser.id).toBe("running");
        expect((await t.client({ projectId }).browsers.list()).map((each) => each.id)).toContain(browser.id);
        expect(await controlEvaluates(browser)).toBe(2);
      }
    });
  }
});
