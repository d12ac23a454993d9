import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type BrowserServiceServer, createServer } from "@browser-service/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { binPath } from "../support/harness.js";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));
const readme = readFileSync(join(packageDir, "README.md"), "utf8");
const example = join(packageDir, "examples/bridge-session.mjs");

/** Every fenced block of `language` in the README, in order. */
function blocks(language: string): string[] {
  return [...readme.matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, "g"))].map((match) => match[1] as string);
}

/** What differs from run to run: ports, tab and window numbers, invocation ids. */
const normalize = (text: string) =>
  text
    .replace(/:\d{2,5}\b/g, ":PORT")
    .replace(/(window|tab) \d+/g, "$1 N")
    .replace(/\b[0-9A-Fa-f]{16,}\b/g, "ID")
    .trim();

let server: BrowserServiceServer;
let dataDir: string;
let binDir: string;
let apiKey: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "mcp-example-"));
  server = await createServer({ dataDir, host: "127.0.0.1", port: 0, allowPrivateNetwork: true });
  await server.listen();
  apiKey = server.firstStart?.key.secret ?? (await server.issueApiKey()).secret;
  // The command on PATH, as `npm install -g` or npx puts it there.
  binDir = mkdtempSync(join(tmpdir(), "mcp-bin-"));
  symlinkSync(binPath, join(binDir, "browser-service-mcp"));
});

afterAll(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(binDir, { recursive: true, force: true });
});

describe("the README", () => {
  it("shows the script in examples/, word for word", () => {
    expect(blocks("js")).toEqual([readFileSync(example, "utf8")]);
  });

  it("has client configurations that are valid JSON with the shapes clients read", () => {
    const [stdio, http] = blocks("json").map((block) => JSON.parse(block) as { mcpServers: Record<string, Record<string, unknown>> });
    expect(stdio?.mcpServers.browser).toMatchObject({
      command: "npx",
      args: ["-y", "@browser-service/mcp", "--start-url", expect.any(String)],
      env: { BROWSER_SERVICE_API_KEY: expect.any(String) },
    });
    expect(http?.mcpServers.browser).toMatchObject({
      type: "http",
      url: "http://127.0.0.1:8931/mcp",
      headers: { Authorization: expect.stringMatching(/^Bearer \S{16,}$/) },
    });
  });

  it("shows the output the example prints against the reference server and Chromium", async () => {
    const env = { PATH: `${binDir}${delimiter}${process.env.PATH}`, BROWSER_SERVICE_API_KEY: apiKey, BROWSER_SERVICE_BASE_URL: server.url };
    const { stdout } = await promisify(execFile)(process.execPath, [example], { cwd: packageDir, env });
    const shown = blocks("text")[0] as string;
    expect(normalize(stdout)).toBe(normalize(shown));
  });
});
