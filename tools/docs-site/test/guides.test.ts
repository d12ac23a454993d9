// Runs the guides' code: each guide's `js` blocks, in order, as one program (written to
// test-results/guides/, inside this package, so that it imports the workspace's
// packages), against the reference server started here and real Chromium; what it
// prints must be the guide's `text` block. Its `json` blocks must parse.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type BrowserServiceServer, createServer } from "@browser-service/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { codeBlocks, guidesDir, loadGuides } from "../src/guides.mjs";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const runDir = join(packageDir, "test-results", "guides");
const guides = loadGuides();

/** What differs from run to run: ports, tab and window numbers, ids. */
const normalize = (text: string) =>
  text
    .replace(/:\d{2,5}\b/g, ":PORT")
    .replace(/(window|tab) \d+/g, "$1 N")
    .replace(/\b(brw|proj|req|wmt)_[A-Za-z0-9]+/g, "$1_ID")
    .replace(/\b[0-9A-Fa-f]{16,}\b/g, "ID")
    .trim();

let server: BrowserServiceServer;
let dataDir: string;
let apiKey: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "docs-guides-"));
  server = await createServer({ dataDir, host: "127.0.0.1", port: 0, allowPrivateNetwork: true });
  await server.listen();
  apiKey = server.firstStart?.key.secret ?? (await server.issueApiKey()).secret;
  mkdirSync(runDir, { recursive: true });
});

afterAll(async () => {
  await server?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the guides", () => {
  it("are the nine the site promises, in order", () => {
    expect(guides.map((guide) => guide.title)).toEqual([
      "Getting started with the client",
      "WebMCP with the helpers",
      "The MCP bridge",
      "Extensions",
      "Watch a browser",
      "Log in once, use it everywhere",
      "Keep an agent logged in",
      "Deploy",
      "What did my agent do?",
    ]);
  });

  it("show only images of guides/images/ that exist, each under 200 KB", () => {
    const images = guides.flatMap((guide) =>
      [...guide.source.matchAll(/!\[[^\]]*\]\(([^)\s]+)\)/g)].map((found) => ({ guide: guide.slug, src: found[1] ?? "" })),
    );
    expect(images.filter((image) => !/^images\/[\w.-]+\.png$/.test(image.src))).toEqual([]);
    expect(images.filter((image) => !existsSync(join(guidesDir, image.src)))).toEqual([]);
    expect(images.filter((image) => statSync(join(guidesDir, image.src)).size > 200 * 1024)).toEqual([]);
  });

  it.each(guides.map((guide) => [guide.title, guide] as const))(
    "%s: its program prints what the guide shows",
    async (_, guide) => {
      const blocks = codeBlocks(guide.source);
      for (const block of blocks.filter((each) => each.language === "json")) expect(() => JSON.parse(block.code)).not.toThrow();
      const program = blocks
        .filter((each) => each.language === "js")
        .map((each) => each.code)
        .join("\n");
      const shown = blocks.filter((each) => each.language === "text");
      expect(program).not.toBe("");
      expect(shown).toHaveLength(1);
      const file = join(runDir, `${guide.slug}.mjs`);
      writeFileSync(file, program);
      // The commands a reader installs (browser-service-mcp) are on PATH, as npm puts them.
      const env = {
        PATH: `${join(packageDir, "node_modules", ".bin")}${delimiter}${process.env.PATH}`,
        BROWSER_SERVICE_API_KEY: apiKey,
        BROWSER_SERVICE_BASE_URL: server.url,
      };
      const { stdout } = await promisify(execFile)(process.execPath, [file], { cwd: runDir, env, timeout: 60_000 });
      expect(normalize(stdout)).toBe(normalize(shown[0]?.code ?? ""));
    },
    90_000,
  );
});
