import { PageServer } from "@browser-service/test-pages";
import type { Browser } from "@browser-service/types";
import type { Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type HeldDevTools, type HeldMessage, HoldingLauncher } from "./support/held-devtools.js";
import { useTestServer } from "./support/test-server.js";
import { type DrivenBrowser, drive, waitForTools } from "./support/webmcp-driver.js";

// Concurrent GETs of one browser's tool snapshot share one build of its body, but only
// when that build gives each caller the body it would build itself. The server's own
// DevTools channel holds back the answers to Target.getTargets (each GET reads the tab
// titles with one) and chosen events, so that each race is played out in a fixed order
// instead of by timing.

const TOOLS = 400;
// About 3.3 MB of snapshot: its build takes several slices of the event loop (512 KB
// each), so that it is still running when the callers below arrive.
const LARGE_PAGE = `<!doctype html><title>Large</title><script>
  const description = "D".repeat(8000);
  for (let i = 0; i < ${TOOLS}; i++) document.modelContext.registerTool({ name: "t" + i, description, execute: async () => ({}) });
  window.registerLate = () => document.modelContext.registerTool({ name: "late", description: "Registered last.", execute: async () => ({}) });
</script>`;

const GET_TARGETS = "Target.getTargets";
const TOOLS_ADDED = "WebMCP.toolsAdded";

let pages: PageServer;
let launcher: HoldingLauncher;
let browser: Browser;
let driven: DrivenBrowser;
let page: Page;
let devtools: HeldDevTools;

beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/large", LARGE_PAGE);
});

// Registered before the server's hooks: vitest runs it after the server closed.
afterAll(async () => {
  await pages?.close();
});

// Titles read for every listing (not once per x-max-age-ms), so that each GET's read is
// one held answer the test releases in its chosen order.
const t = useTestServer(() => {
  launcher = new HoldingLauncher();
  return { launcher, webmcpTitleMaxAgeMs: 0 };
});

beforeAll(async () => {
  browser = await t.client().browsers.create({ name: "shared" });
  devtools = launcher.devtools();
  driven = await drive(browser.cdp_ws_url);
  page = await driven.open(pages.url("/large"));
  await waitForTools(t.client(), browser.id, (tools) => tools.length === TOOLS);
});

afterEach(() => devtools.stop());

afterAll(async () => {
  devtools?.stop();
  await driven?.disconnect();
});

/** One raw GET of the snapshot: status, ETag and the body as text. */
async function get(): Promise<{ status: number; etag: string | null; body: string }> {
  const response = await fetch(`${t.url}/browsers/${browser.id}/webmcp/tools`, { headers: { authorization: `Bearer ${t.orgKey}` } });
  return { status: response.status, etag: response.headers.get("etag"), body: await response.text() };
}

type Answer = Awaited<ReturnType<typeof get>>;

const answerTo = (ordinal: number) => (held: HeldMessage) => held.kind === "answer" && held.method === GET_TARGETS && held.ordinal === ordinal;

/**
 * Starts a GET and resolves, with its answer to come, once the browser has answered the
 * server's reading of the tab titles for it (the answer is held: the GET waits for it).
 */
async function arrive(): Promise<{ answer: Promise<Answer>; titlesRead: number }> {
  const titlesRead = devtools.sent(GET_TARGETS) + 1;
  const answer = get();
  await devtools.until(() => devtools.held().some(answerTo(titlesRead)));
  // Wrapped: an async function returning the promise itself would wait for it.
  return { answer, titlesRead };
}
/** Lets the server run until the event loop's next turn: a build of the large snapshot is then past its first slice. */
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
const names = (body: string) => (JSON.parse(body) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
const titles = (body: string) => new Set((JSON.parse(body) as { tools: { source: { page_title: string } }[] }).tools.map((tool) => tool.source.page_title));

describe("GET /browsers/{id}/webmcp/tools, many at once", () => {
  it("builds a large snapshot once for callers that arrive together, and gives each the same body and ETag", async () => {
    devtools.hold({ answersTo: [GET_TARGETS] });
    const first = devtools.sent(GET_TARGETS);
    const before = t.server.webmcpSnapshotBuilds();
    const responses = [];
    for (let i = 0; i < 6; i++) responses.push(await arrive());
    // Six GETs, each with its own reading of the titles...
    expect(devtools.sent(GET_TARGETS) - first).toBe(6);
    devtools.release();
    const answers = await Promise.all(responses.map(({ answer }) => answer));
    // ...and one build.
    expect(t.server.webmcpSnapshotBuilds()).toEqual({ built: before.built + 1, shared: before.shared + 5, remembered: before.remembered });
    expect(answers.map((answer) => answer.status)).toEqual(Array(6).fill(200));
    expect(new Set(answers.map((answer) => answer.body)).size).toBe(1);
    expect(new Set(answers.map((answer) => answer.etag)).size).toBe(1);
    expect(names(answers[0]!.body)).toHaveLength(TOOLS);
    expect(t.mismatches).toEqual([]);
  });

  it("never hands a caller that arrived after a registration the build started before it", async () => {
    devtools.hold({ answersTo: [GET_TARGETS], events: [TOOLS_ADDED] });
    await page.evaluate(() => (window as unknown as { registerLate(): void }).registerLate());
    await devtools.until(() => devtools.held().some((held) => held.method === TOOLS_ADDED));
    const early = await arrive();
    const alongside = await arrive();
    const late = await arrive();
    const before = t.server.webmcpSnapshotBuilds();

    // The first two callers' titles arrive: one build starts before the registration, the other caller shares it.
    devtools.release(answerTo(early.titlesRead));
    devtools.release(answerTo(alongside.titlesRead));
    await nextTurn();
    expect(t.server.webmcpSnapshotBuilds()).toEqual({ built: before.built + 1, shared: before.shared + 1, remembered: before.remembered });
    // Then, while that build runs, the registration is seen, and then the third caller's titles arrive.
    devtools.release((held) => held.method === TOOLS_ADDED);
    devtools.release(answerTo(late.titlesRead));
    // Its titles were read before the registration was seen: it reads them again.
    await devtools.until(() => devtools.held().some(answerTo(late.titlesRead + 1)));
    devtools.release(answerTo(late.titlesRead + 1));
    const [earlyAnswer, alongsideAnswer, lateAnswer] = await Promise.all([early.answer, alongside.answer, late.answer]);

    expect(names(earlyAnswer.body)).not.toContain("late");
    expect(alongsideAnswer.body).toBe(earlyAnswer.body);
    expect(names(lateAnswer.body)).toContain("late");
    expect(lateAnswer.etag).not.toBe(earlyAnswer.etag);
    expect(t.server.webmcpSnapshotBuilds()).toEqual({ built: before.built + 2, shared: before.shared + 1, remembered: before.remembered });
    // A GET after both still sees the registration.
    devtools.stop();
    expect(names((await get()).body)).toContain("late");
    expect(t.mismatches).toEqual([]);
  });

  it("never shares a build with a caller that read other tab titles (a title changes without any event)", async () => {
    devtools.hold({ answersTo: [GET_TARGETS] });
    const early = await arrive();
    await page.evaluate(() => {
      document.title = "Renamed";
    });
    // Asked after the rename, so the browser answers this caller with the new title.
    const late = await arrive();
    const before = t.server.webmcpSnapshotBuilds();

    devtools.release(answerTo(early.titlesRead));
    await nextTurn();
    devtools.release(answerTo(late.titlesRead));
    const [earlyAnswer, lateAnswer] = await Promise.all([early.answer, late.answer]);

    expect(titles(earlyAnswer.body)).toEqual(new Set(["Large"]));
    expect(titles(lateAnswer.body)).toEqual(new Set(["Renamed"]));
    expect(t.server.webmcpSnapshotBuilds()).toEqual({ built: before.built + 2, shared: before.shared, remembered: before.remembered });
    expect(t.mismatches).toEqual([]);
  });
});
