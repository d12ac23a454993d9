// Opens the built docs site (dist/site, served on 127.0.0.1 by src/serve.mjs) in headless
// Chromium, follows every link of its front page, and checks that each page loads without
// a 404 or an error and without a request leaving 127.0.0.1. Saves a screenshot of each
// page to test-results/site-*.png.
//
// Needs `pnpm build` first. CHROMIUM_PATH overrides /usr/bin/chromium.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { hasTypeScriptApi, publicPackages } from "@browser-service/release/workspace";
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultSiteDir, startSiteServer } from "../src/serve.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const resultsDir = join(packageDir, "test-results");
const packages = publicPackages();

describe("the docs site's package", () => {
  it("depends on every public package, so turbo builds them first and rebuilds the site when one changes", () => {
    const manifest = JSON.parse(readFileSync(join(packageDir, "package.json"), "utf8"));
    const declared = { ...manifest.dependencies, ...manifest.devDependencies };
    expect(packages.filter((pkg) => declared[pkg.name] !== "workspace:*").map((pkg) => pkg.name)).toEqual([]);
  });
});

describe("the docs site (dist/site in headless Chromium)", () => {
  let close: (() => Promise<void>) | undefined;
  let browser: Browser | undefined;
  let context: BrowserContext;
  let origin: string;
  let siteUrl: string;
  let links: { text: string; href: string }[] = [];
  const offsite: string[] = [];
  const problems: string[] = [];

  /** Opens a page that records every failed response, page error and console error. */
  async function open(url: string): Promise<{ page: Page; status: number | undefined }> {
    const page = await context.newPage();
    const where = new URL(url).pathname;
    page.on("pageerror", (error) => problems.push(`${where}: page error: ${error.message}`));
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(`${where}: console error: ${message.text()}`);
    });
    page.on("response", (response) => {
      if (response.status() >= 400) problems.push(`${where}: HTTP ${response.status()} for ${response.url()}`);
    });
    const response = await page.goto(url, { waitUntil: "networkidle" });
    return { page, status: response?.status() };
  }

  const screenshot = (page: Page, name: string) => page.screenshot({ path: join(resultsDir, `site-${name}.png`), fullPage: false });

  beforeAll(async () => {
    if (!existsSync(join(defaultSiteDir, "index.html"))) throw new Error(`${defaultSiteDir}/index.html is missing: run \`pnpm build\` first.`);
    const executablePath = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
    if (!existsSync(executablePath)) throw new Error(`No Chromium at ${executablePath}: install Debian's (apt-get install chromium) or set CHROMIUM_PATH.`);
    mkdirSync(resultsDir, { recursive: true });

    const server = await startSiteServer({ port: 0 });
    close = server.close;
    siteUrl = server.url;
    origin = new URL(server.url).origin;
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
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: "block" });
    // Every request that would leave the test server is recorded and blocked.
    const isLocal = (url: string) => /^(data|about):/.test(url) || url.startsWith(`blob:${origin}/`) || new URL(url).origin === origin;
    await context.route("**/*", async (route) => {
      if (isLocal(route.request().url())) return route.continue();
      offsite.push(`${route.request().method()} ${route.request().url()}`);
      return route.abort("blockedbyclient");
    });

    const { page } = await open(siteUrl);
    links = await page.$$eval("a[href]", (anchors) => anchors.map((a) => ({ text: a.textContent?.trim() ?? "", href: (a as HTMLAnchorElement).href })));
    await screenshot(page, "index");
    await page.close();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await close?.();
  });

  it("links the API reference and the docs of every public package", () => {
    expect(links.find((link) => link.text === "API reference")?.href).toBe(`${siteUrl}api/index.html`);
    const undocumented = packages.filter((pkg) => !links.some((link) => link.text === pkg.name)).map((pkg) => pkg.name);
    expect(undocumented).toEqual([]);
  });

  it("follows every link of the front page to a page that loads, and screenshots it", async () => {
    const targets = [...new Set(links.map((link) => link.href))];
    expect(targets.length).toBeGreaterThan(packages.length);
    const failed: string[] = [];
    for (const href of targets) {
      const { page, status } = await open(href);
      if (status !== 200) failed.push(`${href}: HTTP ${status}`);
      const path = new URL(href).pathname;
      await screenshot(
        page,
        path
          .replace(/\/index\.html$/, "")
          .replace(/[^a-z0-9.]+/gi, "-")
          .replace(/^-|-$/g, "") || "root",
      );
      await page.close();
    }
    expect(failed).toEqual([]);
  }, 120_000);

  it("shows the API reference, rendered by the Redoc copy beside it", async () => {
    const { page } = await open(`${siteUrl}api/index.html`);
    const title = JSON.parse(readFileSync(join(defaultSiteDir, "api", "openapi.json"), "utf8")).info.title;
    await page.getByRole("heading", { level: 1 }).first().waitFor({ state: "visible", timeout: 15_000 });
    expect(await page.getByRole("heading", { level: 1 }).first().innerText()).toContain(title);
    await page.close();
  });

  it.each(packages.filter(hasTypeScriptApi).map((pkg) => pkg.name))("shows the TypeDoc of %s", async (name) => {
    const href = links.find((link) => link.text === name)?.href;
    expect(href).toBeDefined();
    const { page } = await open(href!);
    expect(await page.title()).toContain(name);
    // The sidebar, which TypeDoc's script fills with the package's exports.
    await page.locator(".tsd-navigation a").nth(1).waitFor({ timeout: 10_000 });
    expect(await page.locator(".tsd-navigation a").count()).toBeGreaterThan(1);
    await page.close();
  });

  it("shows the guides' images, copied beside the pages", async () => {
    const href = links.find((link) => link.text === "Watch a browser")?.href;
    expect(href).toBe(`${siteUrl}guides/05-live-view.html`);
    const { page } = await open(href!);
    const images = await page.$$eval("main img", (all) =>
      all.map((img) => ({ src: (img as HTMLImageElement).src, loaded: (img as HTMLImageElement).complete && (img as HTMLImageElement).naturalWidth > 0 })),
    );
    expect(images).toEqual([
      { src: `${siteUrl}guides/images/live-view.png`, loaded: true },
      { src: `${siteUrl}guides/images/live-view-read-only.png`, loaded: true },
    ]);
    await page.close();
  });

  it("works offline: no request left 127.0.0.1", () => {
    expect(offsite).toEqual([]);
  });

  it("has no failed requests, page errors or console errors", () => {
    expect(problems).toEqual([]);
  });
});
