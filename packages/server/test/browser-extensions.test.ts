import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { type BrowserServiceClient, NotFoundError, UnprocessableEntityError } from "@browser-service/client";
import { PageServer } from "@browser-service/test-pages";
import type { Browser } from "@browser-service/types";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChromiumLauncher } from "../src/browsers/chromium-launcher.js";
import { blockingExtension, extensionZip, markingExtension, staticRulesExtension, toolExtension } from "./support/extension-zips.js";
import { storedRows } from "./support/stored-rows.js";
import { startTestServer, useTestServer } from "./support/test-server.js";
import { type DrivenBrowser, drive, waitForTools } from "./support/webmcp-driver.js";
import { buildZip } from "./support/zip-writer.js";

// Uploaded extensions run in the browsers created with them: their content scripts in the
// pages, their network rules on the pages' requests. Real extensions, built as zips here,
// loaded into real Chromium, seen from the outside through cdp_ws_url, in a browser taken
// from the warm pool and in one launched cold.

const MIB = 1024 * 1024;

let pages: PageServer;
beforeAll(async () => {
  pages = await PageServer.start();
  pages.serve("/page", "<!doctype html><title>Plain page</title><p>hello</p>");
  pages.serve("/allowed", "allowed");
  pages.serve("/blocked", "blocked");
});
afterAll(async () => {
  await pages?.close();
});

const driven: DrivenBrowser[] = [];
afterAll(async () => {
  for (const each of driven) await each.disconnect().catch(() => undefined);
});

/** The `data-marked-by` of a page opened at `path` in the browser, once loaded. */
async function markOf(browser: Browser, path = "/page"): Promise<string | undefined> {
  const driver = await drive(browser.cdp_ws_url);
  driven.push(driver);
  const page = await driver.open(pages.url(path));
  return page.evaluate(() => document.documentElement.dataset["markedBy"]);
}

describe.each([
  ["a warm browser", 1],
  ["a cold browser", 0],
])("extensions in %s", (_, warmBrowsers) => {
  const t = useTestServer({ warmBrowsers });
  let client: BrowserServiceClient;
  beforeAll(() => {
    client = t.client();
  });

  it("runs a content script in the pages it opens, and records the extensions and their use", async () => {
    const marker = await client.extensions.upload({ file: markingExtension("marker"), name: "marker" });
    expect(marker.last_used_at).toBeNull();
    const browser = await client.browsers.create({ extensions: [{ name: "marker" }] });
    expect(browser.extensions).toEqual([{ id: marker.id, name: "marker" }]);
    expect(await markOf(browser)).toBe("marker");
    // In a browser context a client creates too (Target.createBrowserContext).
    const context = await driven.at(-1)!.playwright.newContext();
    const isolated = await context.newPage();
    await isolated.goto(pages.url("/page"));
    expect(await isolated.evaluate(() => document.documentElement.dataset["markedBy"])).toBe("marker");
    await context.close();
    // The record says so on every read; the extension was used when the browser started.
    expect((await client.browsers.get(browser.id)).extensions).toEqual([{ id: marker.id, name: "marker" }]);
    expect((await client.browsers.list()).find((each) => each.id === browser.id)?.extensions).toEqual([{ id: marker.id, name: "marker" }]);
    // A browser created without extensions runs none.
    const plain = await client.browsers.create();
    expect(plain.extensions).toEqual([]);
    expect(await markOf(plain)).toBeUndefined();
    await client.browsers.delete(plain.id);
    await client.browsers.delete(browser.id);
  });

  it("loads several, by id and by name, in the order given", async () => {
    const first = await client.extensions.upload({ file: markingExtension("first") });
    const second = await client.extensions.upload({ file: markingExtension("second"), name: `second-${warmBrowsers}` });
    const browser = await client.browsers.create({ extensions: [{ id: first.id }, { name: `second-${warmBrowsers}` }] });
    expect(browser.extensions).toEqual([
      { id: first.id, name: null },
      { id: second.id, name: `second-${warmBrowsers}` },
    ]);
    // Both content scripts ran in the page.
    expect((await markOf(browser))?.split(" ").sort()).toEqual(["first", "second"]);
    await client.browsers.delete(browser.id);
  });

  it("starts its service worker, whose declarativeNetRequest rule blocks a page's request", async () => {
    const blocker = await client.extensions.upload({ file: blockingExtension(), name: `blocker-${warmBrowsers}` });
    const browser = await client.browsers.create({ extensions: [{ id: blocker.id }] });
    const driver = await drive(browser.cdp_ws_url);
    driven.push(driver);
    const page = await driver.open(pages.url("/page"));
    const fetched = (path: string) =>
      page.evaluate(
        (url) =>
          fetch(url).then(
            (response) => response.text(),
            (error: Error) => `failed: ${error.message}`,
          ),
        pages.url(path),
      );
    // The worker starts as the extension loads and adds its rule a moment later.
    await expect.poll(() => fetched("/blocked"), { timeout: 10_000 }).toMatch(/^failed: /);
    expect(await fetched("/allowed")).toBe("allowed");
    await client.browsers.delete(browser.id);
  });

  it("lists a WebMCP tool its content script registers as the page's own, and invokes it", async () => {
    const tool = await client.extensions.upload({ file: toolExtension() });
    const browser = await client.browsers.create({ extensions: [{ id: tool.id }], start_url: pages.url("/page") });
    const [listed] = await waitForTools(client, browser.id, (tools) => tools.some((each) => each.name === "from_extension"));
    expect(listed).toMatchObject({ name: "from_extension", source: { page_url: pages.url("/page"), frame: null } });
    const result = await client.webmcp.invoke(browser.id, { tool_ref: listed!.tool_ref, input: {} });
    expect(JSON.stringify(result)).toContain("extension");
    await client.browsers.delete(browser.id);
  });

  it("refuses an archive the browser will not load with 422, naming the extension and the browser's reason, and keeps no browser or slot", async () => {
    const broken = await client.extensions.upload({ file: extensionZip("{ not json"), name: `broken-${warmBrowsers}` });
    const missing = await client.extensions.upload({
      file: extensionZip({ manifest_version: 3, name: "Missing", version: "1.0", content_scripts: [{ matches: ["<all_urls>"], js: ["gone.js"] }] }),
    });
    const staticRules = await client.extensions.upload({ file: staticRulesExtension() });
    for (const [ref, named, reason] of [
      [{ name: `broken-${warmBrowsers}` }, `"broken-${warmBrowsers}" (${broken.id})`, "Manifest is not valid JSON"],
      [{ id: missing.id }, missing.id, "Could not load javascript 'gone.js'"],
      [{ id: staticRules.id }, staticRules.id, "static declarativeNetRequest rulesets"],
    ] as const) {
      const error = await client.browsers.create({ extensions: [ref] }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UnprocessableEntityError);
      expect(error).toMatchObject({ status: 422, code: "extension_load_failed" });
      expect((error as Error).message).toContain(`extension ${named}: `);
      expect((error as Error).message).toContain(reason);
    }
    expect(await client.browsers.list()).toEqual([]);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
  });

  it("answers 404 extension_not_found for a reference to nothing, and 400 for the same extension twice, starting nothing", async () => {
    const once = await client.extensions.upload({ file: markingExtension("once"), name: `once-${warmBrowsers}` });
    await expect(client.browsers.create({ extensions: [{ id: once.id }, { name: "nothing-here" }] })).rejects.toSatisfy(
      (error: unknown) =>
        error instanceof NotFoundError &&
        error.code === "extension_not_found" &&
        error.message.includes("extensions[1]") &&
        error.message.includes('"nothing-here"'),
    );
    await expect(client.browsers.create({ extensions: [{ id: once.id }, { name: `once-${warmBrowsers}` }] })).rejects.toMatchObject({
      status: 400,
      code: "bad_request",
      details: [{ code: "duplicate_extension" }],
    });
    expect(await client.browsers.list()).toEqual([]);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
  });
});

describe("the bound on a browser's unpacked extensions", () => {
  // The copies are on the host's disk; a browser's together may take its profile's cap.
  const t = useTestServer(() => ({ launcher: new ChromiumLauncher({ allowPrivateNetwork: true, profileBytes: 32 * MIB }) }));

  /** 20 MiB unpacked from an archive just over 1/100 of that (the upload's ratio cap). */
  const bulky = (marker: string) =>
    buildZip([
      { name: "manifest.json", data: JSON.stringify({ manifest_version: 3, name: `Bulky ${marker}`, version: "1.0" }), deflate: true },
      { name: "noise.bin", data: randomBytes(256 * 1024) },
      { name: "zeros.bin", data: Buffer.alloc(20 * MIB), deflate: true },
    ]);

  it("loads what fits, and refuses with 422 a create whose extensions together unpack past it, keeping nothing", async () => {
    const client = t.client();
    const first = await client.extensions.upload({ file: bulky("first") });
    const second = await client.extensions.upload({ file: bulky("second") });
    const fits = await client.browsers.create({ extensions: [{ id: first.id }] });
    expect(fits.extensions).toEqual([{ id: first.id, name: null }]);
    await client.browsers.delete(fits.id);
    const error = await client.browsers.create({ extensions: [{ id: first.id }, { id: second.id }] }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 422, code: "extension_load_failed" });
    expect((error as Error).message).toContain(`extension ${second.id}: its extensions together may unpack to at most ${32 * MIB} bytes`);
    expect(await client.browsers.list()).toEqual([]);
    expect((await client.limits.get()).concurrent_sessions_used).toBe(0);
  });
});

describe("last_used_at", () => {
  it("is the created_at of the last browser started with the extension, and stays null for one never used", async () => {
    const t = await startTestServer();
    const dataDir = t.dataDir;
    try {
      const used = await t.client().extensions.upload({ file: markingExtension("used") });
      const unused = await t.client().extensions.upload({ file: markingExtension("unused"), name: "unused" });
      await t.client().browsers.create({ extensions: [{ id: used.id }] });
      const last = await t.client().browsers.create({ extensions: [{ id: used.id }] });
      // A refused create uses nothing.
      await expect(t.client().browsers.create({ extensions: [{ id: unused.id }, { name: "nothing-here" }] })).rejects.toMatchObject({ status: 404 });
      expect((await t.client().extensions.get(used.id)).last_used_at).toBe(last.created_at);
      expect(await t.client().extensions.list({ name: "unused" })).toEqual([expect.objectContaining({ id: unused.id, last_used_at: null })]);
      expect(t.mismatches).toEqual([]);
      await t.close({ keepData: true });
      // Kept where it is stored, not only in memory.
      const lastUsed = async (id: string) =>
        (await storedRows<{ at: string | null }>(t, "SELECT last_used_at AS at FROM extensions WHERE id = ?", [id]))[0]?.at;
      expect(await lastUsed(used.id)).toBe(last.created_at);
    } finally {
      await t.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe("extensions of another project", () => {
  const t = useTestServer();

  it("are not found: a create names only its own project's extensions", async () => {
    const other = await t.client().projects.create({ name: "elsewhere" });
    const theirs = await t.client({ projectId: other.id }).extensions.upload({ file: markingExtension("theirs"), name: "theirs" });
    for (const ref of [{ id: theirs.id }, { name: "theirs" }]) {
      await expect(t.client().browsers.create({ extensions: [ref] })).rejects.toMatchObject({ status: 404, code: "extension_not_found" });
    }
  });
});
