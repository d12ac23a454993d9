import { spawn } from "node:child_process";
import { once } from "node:events";
import { NotFoundError } from "@browser-service/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { binPath, eventually, useHarness } from "../support/harness.js";

const h = useHarness();

/** Starts the bin over stdio with `args`, lists until the shop's tools show, and closes; returns the browser it served. */
async function serveOnce(args: string[]): Promise<{ id: string; names: string[] }> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [binPath, ...args], env: h.env(), stderr: "pipe" });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: "lifecycle-test", version: "1" });
  await client.connect(transport);
  const names = await eventually("the shop's tools", async () => {
    const { tools } = await client.listTools();
    return tools.length === 4 ? tools.map((tool) => tool.name).sort() : undefined;
  });
  const id = /serving the WebMCP tools of browser ([^\s,]+)/.exec(stderr)?.[1] as string;
  expect(id).toMatch(/^brw_[a-z0-9]+$/);
  // Closing stdin ends the session; the bridge then deletes what it created, and exits.
  await client.close();
  return { id, names };
}

describe("a browser the bridge creates", () => {
  it("opens --start-url with --name, and is deleted when the client goes", async () => {
    const { id, names } = await serveOnce(["--start-url", h.pages.url("/shop"), "--name", "bridge-made"]);
    expect(names).toEqual(["checkout", "search", "show_browser", "wait_for_stock"]);
    await expect(h.client.browsers.get("bridge-made")).rejects.toBeInstanceOf(NotFoundError);
    await expect(h.client.browsers.get(id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("stays with --keep", async () => {
    const { id } = await serveOnce(["--start-url", h.pages.url("/shop"), "--keep"]);
    await expect(h.client.browsers.get(id)).resolves.toMatchObject({ id });
    await h.client.browsers.delete(id);
  });

  it("an existing browser (--browser) is never deleted", async () => {
    await h.open(h.pages.url("/shop"));
    await serveOnce(["--browser", "mcp-test"]);
    await expect(h.client.browsers.get(h.browser)).resolves.toMatchObject({ id: h.browser });
  });
});

describe("exit codes", () => {
  // Spawned, not spawnSync: the reference server the bin talks to runs in this process.
  const run = async (args: string[]) => {
    const child = spawn(process.execPath, [binPath, ...args], { env: h.env(), stdio: ["pipe", "ignore", "ignore"] });
    child.stdin.end();
    const [code] = (await once(child, "exit")) as [number | null];
    return code;
  };

  it("2 for a flag it cannot use, 1 for a browser it cannot open, 0 after a clean stop (stdin ends)", async () => {
    expect(await run(["--no-such-flag"])).toBe(2);
    expect(await run(["--browser", "no-such-browser"])).toBe(1);
    expect(await run(["--browser", h.browser])).toBe(0);
  });
});
