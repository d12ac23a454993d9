import { randomBytes } from "node:crypto";
import { APIError, BrowserServiceError, createClient } from "@browser-service/client";
import { type Bridge, bridgeIdentity, createBridge } from "./bridge.js";
import type { BrowserChoice } from "./browser-target.js";
import { type BridgeConfig, helpText, readConfig } from "./config.js";
import { McpBridgeError } from "./errors.js";
import { serveHttp } from "./http-server.js";
import { CatalogStdioServerTransport } from "./stdio-transport.js";

const log = (message: string) => process.stderr.write(`browser-service-mcp: ${message}\n`);

/** The browser the configuration asks for. */
function browserChoice(config: BridgeConfig): BrowserChoice {
  if (config.browser !== undefined) return { browser: config.browser };
  return { create: { ...(config.name !== undefined && { name: config.name }), ...(config.startUrl !== undefined && { start_url: config.startUrl }) } };
}

/** Resolves on the first of SIGINT, SIGTERM, SIGHUP or (for stdio) the end of standard input. */
function untilStopped(stdio: boolean): Promise<string> {
  return new Promise((resolve) => {
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.once(signal, () => resolve(signal));
    // A client that starts the bridge as a command ends the session by closing its input.
    if (stdio) {
      process.stdin.once("end", () => resolve("end of input"));
      process.stdin.once("close", () => resolve("input closed"));
    }
  });
}

/**
 * The `browser-service-mcp` command: reads the flags and the environment, opens or
 * creates the browser, serves MCP over stdio or Streamable HTTP until stopped, then
 * deletes a browser it created (unless `--keep`). Returns the exit code.
 */
export async function main(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): Promise<number> {
  let config: BridgeConfig;
  try {
    config = readConfig(argv, env);
  } catch (error) {
    if (!(error instanceof McpBridgeError)) throw error;
    log(error.message);
    return 2;
  }
  if (config.show === "help") {
    process.stdout.write(helpText);
    return 0;
  }
  if (config.show === "version") {
    process.stdout.write(`${bridgeIdentity.version}\n`);
    return 0;
  }
  let bridge: Bridge;
  try {
    const client = createClient({
      ...(config.apiKey !== undefined && { apiKey: config.apiKey }),
      ...(config.baseUrl !== undefined && { baseUrl: config.baseUrl }),
      ...(config.projectId !== undefined && { projectId: config.projectId }),
    });
    bridge = await createBridge({
      client,
      browser: browserChoice(config),
      ...(config.projectId !== undefined && { projectId: config.projectId }),
      keep: config.keep,
      pollIntervalMs: config.pollIntervalMs,
      timeoutSec: config.timeoutSec,
      log,
    });
  } catch (error) {
    if (!(error instanceof BrowserServiceError)) throw error;
    const what = error instanceof APIError ? `${error.status} ${error.code}` : error.code;
    log(`cannot open the browser (${what}): ${error.message}`);
    return 1;
  }
  const { browser } = bridge;
  log(
    `serving the WebMCP tools of browser ${browser.id}${browser.name === null ? "" : ` (${browser.name})`}${browser.created ? (config.keep ? ", created, kept on exit" : ", created, deleted on exit") : ""}`,
  );
  const stdio = config.httpPort === undefined;
  const stopped = untilStopped(stdio);
  let closeTransport: () => Promise<void>;
  if (stdio) {
    const server = bridge.createServer();
    await server.connect(new CatalogStdioServerTransport(bridge.catalog));
    closeTransport = () => server.close();
  } else {
    const token = config.token ?? randomBytes(32).toString("base64url");
    const endpoint = await serveHttp({
      host: config.host,
      port: config.httpPort as number,
      token,
      createServer: bridge.createServer,
      allowedHosts: config.allowedHosts,
      log,
    });
    log(`Streamable HTTP on ${endpoint.url}`);
    if (config.token === undefined) log(`bearer token (generated; set BROWSER_SERVICE_MCP_TOKEN to choose one): ${token}`);
    closeTransport = endpoint.close;
  }
  log(`stopping: ${await stopped}`);
  await closeTransport().catch((error: unknown) => log(`closing the transport failed: ${(error as Error).message}`));
  try {
    await bridge.close();
  } catch (error) {
    log(`could not delete browser ${browser.id}: ${(error as Error).message}`);
    return 1;
  }
  return 0;
}
