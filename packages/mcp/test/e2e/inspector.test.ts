import { type ChildProcess, execFile, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { binPath, eventually, useHarness, waitForSnapshot } from "../support/harness.js";

// The MCP Inspector's command-line client (@modelcontextprotocol/inspector-cli, the
// inspector's `--cli` mode, which runs on Node 20): a client nobody here wrote.
const require = createRequire(import.meta.url);
const inspectorPackage = require.resolve("@modelcontextprotocol/inspector-cli/package.json");
const inspector = join(dirname(inspectorPackage), (require(inspectorPackage) as { bin: Record<string, string> }).bin["mcp-inspector-cli"] as string);

const h = useHarness();

/** Runs the inspector's CLI mode and parses the JSON it prints. */
function runInspector(args: string[], env: Record<string, string>): Promise<unknown> {
  return new Promise((resolve, reject) => {
    // Its CLI finds its own package.json by a path relative to the working directory
    // (`existsSync("../package.json")`), so it runs from its build folder, as it does when
    // started through npx from its package.
    execFile(process.execPath, [inspector, "--cli", ...args], { env, cwd: dirname(inspector), timeout: 60_000 }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${error.message}\n${stderr}`));
      else resolve(JSON.parse(stdout));
    });
  });
}

async function openShop() {
  const url = h.pages.url("/shop");
  await h.open(url);
  await waitForSnapshot(h.client, h.browser, (tools) => tools.filter((tool) => tool.source.page_url === url).length === 3);
}

describe("the bin driven by the MCP Inspector's CLI", () => {
  it("over stdio: tools/list and tools/call", async () => {
    await openShop();
    const env = h.env({ BROWSER_SERVICE_BROWSER: h.browser });
    const listed = (await runInspector([process.execPath, binPath, "--method", "tools/list"], env)) as { tools: { name: string; annotations: unknown }[] };
    expect(listed.tools.map((tool) => tool.name).sort()).toEqual(["checkout", "search", "show_browser", "wait_for_stock"]);
    const called = (await runInspector([process.execPath, binPath, "--method", "tools/call", "--tool-name", "search", "--tool-arg", "q=brass"], env)) as {
      structuredContent: unknown;
      isError?: boolean;
    };
    expect(called.structuredContent).toEqual({ untrusted_page_output: { where: "shop", origin: h.pages.origin(), results: ["brass lamp"] } });
    expect(called.isError).toBeFalsy();
    expect(h.pages.runs("shop.search")).toBe(1);
  });

  it("over Streamable HTTP, with the bearer token as a header", async () => {
    await openShop();
    const token = "inspector-token-0123456789";
    let stderr = "";
    const bridge: ChildProcess = spawn(process.execPath, [binPath, "--browser", h.browser, "--http", "0"], {
      env: h.env({ BROWSER_SERVICE_MCP_TOKEN: token }),
      stdio: ["ignore", "ignore", "pipe"],
    });
    bridge.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    try {
      const url = await eventually("the bridge's URL", () => /Streamable HTTP on (\S+)/.exec(stderr)?.[1]);
      const listed = (await runInspector([url, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--method", "tools/list"], h.env())) as {
        tools: { name: string }[];
      };
      expect(listed.tools.map((tool) => tool.name).sort()).toEqual(["checkout", "search", "show_browser", "wait_for_stock"]);
      const called = (await runInspector(
        [url, "--transport", "http", "--header", `Authorization: Bearer ${token}`, "--method", "tools/call", "--tool-name", "checkout"],
        h.env(),
      )) as { isError?: boolean; content: { text: string }[] };
      expect(called.isError).toBe(true);
      expect(called.content[0]?.text).toContain("card declined");
      await expect(
        runInspector([url, "--transport", "http", "--header", "Authorization: Bearer wrong-token-0123456789", "--method", "tools/list"], h.env()),
      ).rejects.toThrow();
      expect(h.pages.runs("checkout")).toBe(1);
    } finally {
      const exited = new Promise((resolve) => bridge.once("exit", resolve));
      bridge.kill("SIGTERM");
      await exited;
    }
  });
});
