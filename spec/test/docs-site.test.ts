// Opens the built docs site (dist/docs, served by scripts/serve-docs.mjs on 127.0.0.1)
// in headless Chromium and checks that it works offline and shows every operation of
// dist/openapi.json. Saves a full-page screenshot to test-results/docs.png.
//
// Needs `pnpm build` first. CHROMIUM_PATH overrides /usr/bin/chromium; DOCS_DIST_DIR
// points the test at another build output (default: ../dist).
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDocsServer } from "../scripts/serve-docs.mjs";

const specDir = fileURLToPath(new URL("..", import.meta.url));
const distDir = resolve(specDir, process.env.DOCS_DIST_DIR ?? "dist");
const screenshotPath = resolve(specDir, "test-results", "docs.png");
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace", "query"] as const;

interface Operation {
  method: string;
  path: string;
  operationId: string;
  summary: string;
}

function operationsOf(document: { paths?: Record<string, Record<string, { operationId?: string; summary?: string }>> }): Operation[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => item?.[method]).map((method) => ({
      method,
      path,
      operationId: item[method]!.operationId ?? "",
      summary: item[method]!.summary ?? "",
    })),
  );
}

describe("docs site (dist/docs in headless Chromium)", () => {
  let close: (() => Promise<void>) | undefined;
  let browser: Browser | undefined;
  let page: Page;
  let origin: string;
  let operations: Operation[];
  let title: string;
  const offsite: string[] = [];
  const local: string[] = [];
  const pageProblems: string[] = [];

  beforeAll(async () => {
    for (const file of ["docs/index.html", "docs/redoc.standalone.js", "openapi.json"]) {
      if (!existsSync(resolve(distDir, file))) {
        throw new Error(`${resolve(distDir, file)} is missing: run \`pnpm build\` (node scripts/build.mjs) first.`);
      }
    }
    const document = JSON.parse(readFileSync(resolve(distDir, "openapi.json"), "utf8"));
    operations = operationsOf(document);
    title = document.info?.title ?? "";

    const server = await startDocsServer({ port: 0, distDir });
    close = server.close;
    origin = new URL(server.url).origin;

    const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
    if (!existsSync(executablePath)) {
      throw new Error(`No Chromium at ${executablePath}: install Debian's (apt-get install chromium) or set CHROMIUM_PATH.`);
    }
    browser = await chromium.launch({
      executablePath,
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: "block" });
    const isLocal = (url: string) => {
      if (/^(data|blob|about):/.test(url)) return url.startsWith("blob:") ? url.startsWith(`blob:${origin}/`) : true;
      return new URL(url).origin === origin;
    };
    // Every request that would leave the test server is recorded and blocked.
    await context.route("**/*", async (route) => {
      const url = route.request().url();
      if (isLocal(url)) return route.continue();
      offsite.push(`${route.request().method()} ${url}`);
      return route.abort("blockedbyclient");
    });
    context.on("request", (request) => {
      if (isLocal(request.url())) local.push(new URL(request.url()).pathname);
      else offsite.push(`${request.method()} ${request.url()} (seen)`);
    });
    page = await context.newPage();
    page.on("websocket", (socket) => offsite.push(`websocket ${socket.url()}`));
    page.on("pageerror", (error) => pageProblems.push(`page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") pageProblems.push(`console error: ${message.text()}`);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) pageProblems.push(`HTTP ${response.status()} for ${response.url()}`);
    });
    await page.addInitScript(() => {
      document.addEventListener("securitypolicyviolation", (event: SecurityPolicyViolationEvent) => {
        console.error(`CSP violation: ${event.violatedDirective} ${event.blockedURI}`);
      });
    });
    await page.goto(server.url, { waitUntil: "networkidle" });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await close?.();
  });

  it("has operations to look for", () => {
    expect(operations.length).toBeGreaterThan(0);
  });

  it("renders the API title", async () => {
    await expect(page.title()).resolves.toBe(title);
    await page.getByRole("heading", { level: 1 }).first().waitFor({ state: "visible", timeout: 15_000 });
    expect(await page.getByRole("heading", { level: 1 }).first().innerText()).toContain(title);
  });

  /**
   * Redoc draws a section only while it is near the viewport: grow the viewport to the
   * page's height until the height settles, so that every section is drawn at once.
   */
  async function drawWholePage(): Promise<number> {
    await page.setViewportSize({ width: 1280, height: 900 });
    await page.evaluate(() => window.scrollTo(0, 0));
    let height = 0;
    // Redoc draws lazily; on a loaded machine a pause between two looks is not the end, so
    // the height must hold for three looks in a row.
    let steady = 0;
    for (let i = 0; i < 60 && steady < 3; i++) {
      await page.waitForTimeout(300);
      const next = await page.evaluate(() => document.documentElement.scrollHeight);
      steady = next === height ? steady + 1 : 0;
      if (next === height) continue;
      height = next;
      await page.setViewportSize({ width: 1280, height: Math.min(height, 32_000) });
    }
    return height;
  }

  /** The operation sections drawn now: section id and heading text. */
  async function drawnSections(): Promise<{ id: string; heading: string }[]> {
    return page.evaluate(() =>
      Array.from(document.querySelectorAll("[data-section-id]")).map((element) => ({
        id: element.getAttribute("data-section-id") ?? "",
        heading: element.querySelector("h1, h2, h3")?.textContent?.trim() ?? "",
      })),
    );
  }

  const sectionOf = (operation: Operation) => `/${operation.operationId.toLowerCase()}`;

  it("lists every operation in the overview (a link to its section)", async () => {
    await drawWholePage();
    // A tag's overview lists its first eight operations, then a "Show N more..." button.
    for (const more of await page.getByTestId("show-more-operations").all()) await more.click();
    const links = await page.evaluate(() => Array.from(document.querySelectorAll("a[href]")).map((a) => a.getAttribute("href") ?? ""));
    const missing = operations.filter((op) => !links.some((href) => href.toLowerCase().endsWith(sectionOf(op))));
    expect(missing.map((op) => `${op.method.toUpperCase()} ${op.path} (${op.operationId})`)).toEqual([]);
    mkdirSync(dirname(screenshotPath), { recursive: true });
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.screenshot({ path: screenshotPath, fullPage: true });
  }, 60_000);

  it("shows every operation of dist/openapi.json with its summary (one tag expanded at a time)", async () => {
    // Redoc 3 expands only the tag of the current route: its "+ Show" button navigates
    // to #/<tag>. Open each tag in turn and collect the operations drawn with their summary.
    const shown = new Map<string, string>(); // operationId -> the tag route that showed it
    const collect = async (route: string) => {
      const sections = await drawnSections();
      for (const op of operations) {
        if (shown.has(op.operationId)) continue;
        if (sections.some((s) => s.id.toLowerCase().endsWith(sectionOf(op)) && s.heading === op.summary)) shown.set(op.operationId, route);
      }
    };
    await drawWholePage();
    await collect("/");
    const tags = await page.evaluate(() =>
      Array.from(document.querySelectorAll("[data-section-id]"))
        .filter((section) => Array.from(section.querySelectorAll(":scope button")).some((b) => /^\+\s*Show$/.test(b.textContent?.trim() ?? "")))
        .map((section) => section.getAttribute("data-section-id") ?? ""),
    );
    expect(tags.length).toBeGreaterThan(0);
    for (const tag of tags) {
      const clicked = await page.evaluate((id) => {
        const section = Array.from(document.querySelectorAll("[data-section-id]")).find((s) => s.getAttribute("data-section-id") === id);
        const button = Array.from(section?.querySelectorAll("button") ?? []).find((b) => /^\+\s*Show$/.test(b.textContent?.trim() ?? ""));
        button?.click();
        return Boolean(button);
      }, tag);
      expect(clicked, `no "+ Show" button in ${tag}`).toBe(true);
      // The page routes by hash (#/projects) when served as a static file.
      await page.waitForFunction((route) => window.location.hash === `#${route}` || window.location.pathname === route, tag, { timeout: 10_000 });
      await drawWholePage();
      await collect(tag);
      const shot = resolve(dirname(screenshotPath), `docs${tag.replace(/[^a-z0-9]+/gi, "-")}.png`);
      await page.screenshot({ path: shot, fullPage: true });
    }
    const missing = operations
      .filter((op) => !shown.has(op.operationId))
      .map((op) => `${op.method.toUpperCase()} ${op.path} (${op.operationId}): no section ending in ${sectionOf(op)} headed "${op.summary}"`);
    expect(missing).toEqual([]);
  }, 120_000);

  it("saved the screenshots", () => {
    expect(existsSync(screenshotPath)).toBe(true);
  });

  it("works offline: no request left 127.0.0.1, and Redoc came from next to the page", () => {
    expect(offsite).toEqual([]);
    expect(local).toContain("/redoc.standalone.js");
  });

  it("has no page errors, failed requests or CSP violations", () => {
    expect(pageProblems).toEqual([]);
  });
});
