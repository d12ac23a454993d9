import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { type BrowserServiceServer, createServer } from "@browser-service/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const packageDir = fileURLToPath(new URL("../../", import.meta.url));
const readme = readFileSync(join(packageDir, "README.md"), "utf8");
const example = join(packageDir, "examples/select-and-invoke.mjs");

/** The fenced block of `language` that follows `marker` in the README. */
function block(language: string, marker: string): string {
  const start = readme.indexOf(`\`\`\`${language}\n`, readme.indexOf(marker)) + language.length + 4;
  return readme.slice(start, readme.indexOf("```", start));
}

/** What differs from run to run: ports, window ids, invocation ids. */
const normalize = (text: string) =>
  text
    .replace(/:\d{2,5}\b/g, ":PORT")
    .replace(/window \d+/g, "window N")
    .replace(/invocation [0-9A-F]{32}/g, "invocation ID")
    .trim();

let server: BrowserServiceServer;
let dataDir: string;
let apiKey: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "webmcp-helpers-example-"));
  server = await createServer({ dataDir, host: "127.0.0.1", port: 0, allowPrivateNetwork: true });
  await server.listen();
  apiKey = server.firstStart?.key.secret ?? (await server.issueApiKey()).secret;
});

afterAll(async () => {
  await server.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the README's example", () => {
  it("is the script in examples/, word for word", () => {
    expect(block("js", "## Usage")).toBe(readFileSync(example, "utf8"));
  });

  it("prints the output the README shows, against the reference server and Chromium", async () => {
    const env = { PATH: process.env.PATH, BROWSER_SERVICE_API_KEY: apiKey, BROWSER_SERVICE_BASE_URL: server.url };
    const { stdout } = await promisify(execFile)(process.execPath, [example], { cwd: packageDir, env });
    expect(normalize(stdout)).toBe(normalize(block("text", "Its output")));
  });
});
