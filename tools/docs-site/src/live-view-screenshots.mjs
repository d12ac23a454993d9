#!/usr/bin/env node
// Takes the screenshots of the live view guide (guides/05-live-view.md), into
// guides/images/: live-view.png (the live_view_url of a browser on a demo shop, a tool
// invoked from the panel) and live-view-read-only.png (its live_view_read_only_url).
//
//   pnpm --filter @browser-service/docs-site screenshots    (after pnpm build)
//
// Starts the reference server in-process on a temporary data directory, serves the demo
// pages on 127.0.0.1, and views them with Chromium (CHROMIUM_PATH, default
// /usr/bin/chromium). Run it again when the live view page changes, and commit the PNGs.
import { once } from "node:events";
import { mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { createServer as createPageServer } from "node:http";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@browser-service/client";
import { createServer } from "@browser-service/server";
import { chromium } from "playwright-core";

const imagesDir = fileURLToPath(new URL("../guides/images", import.meta.url));
const packageDir = fileURLToPath(new URL("..", import.meta.url));
/** The size of the window the person views the live view in. */
const viewport = { width: 1280, height: 720 };
/** Past this, a screenshot makes the repository heavier than it is worth. */
const maxBytes = 200 * 1024;

// A shop's cart, in flat colours (they compress well in a PNG), with one WebMCP tool.
const cartPage = `<!doctype html><html lang="en"><title>Trail Gear · Cart</title>
<style>
  body { margin: 0; font: 18px/1.4 system-ui, sans-serif; color: #15233b; background: #ffd166; }
  header { background: #118ab2; color: #fff; padding: 18px 32px; font-size: 26px; font-weight: 700; }
  main { display: flex; gap: 24px; padding: 32px; }
  .item { flex: 1; background: #fff; border-radius: 14px; padding: 20px; box-shadow: 0 4px 0 #e0b040; }
  .swatch { height: 120px; border-radius: 10px; margin-bottom: 12px; }
  .price { font-weight: 700; color: #ef476f; font-size: 22px; }
  footer { margin: 0 32px; background: #073b4c; color: #fff; border-radius: 14px; padding: 20px; display: flex; justify-content: space-between; align-items: center; }
  button { font: inherit; font-weight: 700; background: #06d6a0; color: #073b4c; border: 0; border-radius: 10px; padding: 12px 28px; }
</style>
<header>Trail Gear</header>
<main>
  <div class="item"><div class="swatch" style="background: #ef476f"></div>Rain jacket<div class="price">89.00 EUR</div></div>
  <div class="item"><div class="swatch" style="background: #118ab2"></div>Trail shoes<div class="price">120.00 EUR</div></div>
  <div class="item"><div class="swatch" style="background: #06d6a0"></div>Water bottle<div class="price">14.00 EUR</div></div>
</main>
<footer><span>Total: <strong>223.00 EUR</strong></span><button>Approve the payment</button></footer>
<script>
  const cart = ["Rain jacket", "Trail shoes", "Water bottle"];
  document.modelContext.registerTool({
    name: "add_to_cart",
    description: "Adds a product to the cart.",
    inputSchema: { type: "object", properties: { product: { type: "string" }, quantity: { type: "integer", minimum: 1 } }, required: ["product"] },
    execute: async ({ product, quantity = 1 }) => { cart.push(product); return { added: product, quantity, items: cart.length }; },
  });
</script>`;
const ordersPage = `<!doctype html><title>Trail Gear · Orders</title><body style="background: #118ab2">`;

const dataDir = mkdtempSync(join(tmpdir(), "docs-live-view-"));
const server = await createServer({ dataDir, host: "127.0.0.1", port: 0, allowPrivateNetwork: true });
const pages = createPageServer((request, response) => {
  response.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  response.end(request.url === "/orders" ? ordersPage : cartPage);
}).listen(0, "127.0.0.1");
/** @type {import("playwright-core").Browser | undefined} */
let person;
try {
  if (!pages.listening) await once(pages, "listening");
  await server.listen();
  const address = /** @type {import("node:net").AddressInfo} */ (pages.address());
  const client = createClient({ apiKey: server.firstStart?.key.secret ?? (await server.issueApiKey()).secret, baseUrl: server.url });
  const browser = await client.browsers.create({ start_url: `http://127.0.0.1:${address.port}/cart` });

  // A second tab, so that the tab strip shows two; the view watches the first.
  const agent = await chromium.connectOverCDP(browser.cdp_ws_url);
  await (await agent.contexts()[0]?.newPage())?.goto(`http://127.0.0.1:${address.port}/orders`);
  await agent.close();

  const viewer = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium", args: ["--no-sandbox"] });
  person = viewer;
  mkdirSync(imagesDir, { recursive: true });

  /**
   * Opens a live view URL and waits until it shows the cart's screen and its tool.
   * @param {string} url
   */
  const open = async (url) => {
    const view = await viewer.newPage({ viewport });
    await view.goto(url);
    await view.locator("#status").filter({ hasText: /^Live/ }).waitFor();
    await view.locator("#tabs button", { hasText: "Orders" }).waitFor();
    await view.locator("#tools .tool-name", { hasText: "add_to_cart" }).waitFor({ timeout: 15_000 });
    await view.waitForFunction(() => /** @type {HTMLImageElement} */ (document.getElementById("screen")).naturalWidth > 0);
    return view;
  };

  /**
   * @param {import("playwright-core").Page} view
   * @param {string} name
   */
  const save = async (view, name) => {
    const path = join(imagesDir, name);
    await view.screenshot({ path });
    const bytes = statSync(path).size;
    console.log(`  ${relative(packageDir, path)}  ${(bytes / 1024).toFixed(0)} KB`);
    if (bytes > maxBytes) throw new Error(`${name} is ${bytes} bytes, more than ${maxBytes}: make the page or the viewport smaller.`);
  };

  const control = await open(browser.live_view_url);
  const tool = control.locator("#tools li", { hasText: "add_to_cart" });
  await tool.locator("textarea").fill('{ "product": "Headlamp", "quantity": 1 }');
  await tool.locator("button.invoke").click();
  await control.locator("#results .result", { hasText: "Completed" }).waitFor();
  await save(control, "live-view.png");

  const watcher = await open(browser.live_view_read_only_url);
  await save(watcher, "live-view-read-only.png");

  await client.browsers.delete(browser.id);
} finally {
  await person?.close();
  pages.close();
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
}
