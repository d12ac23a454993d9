import { parseArgs } from "node:util";
import { limits } from "@browser-service/types";
import { ConfigError } from "./errors.js";

// The API's range of `timeout_sec` (the spec's); the bridge's own default stays under the
// MCP SDK client's 60 s request timeout.
const TIMEOUT = limits.schemas.WebMcpInvokeRequest.timeout_sec;

/** Everything the bridge is told by flags and `BROWSER_SERVICE_*` variables. */
export interface BridgeConfig {
  /** An existing browser to serve (id or name); else one is created. */
  browser: string | undefined;
  /** `start_url` of the browser created at start. */
  startUrl: string | undefined;
  /** `name` of the browser created at start. */
  name: string | undefined;
  /** Keep the created browser when the bridge exits (otherwise it is deleted). */
  keep: boolean;
  /** Project id (`X-Service-Project-Id`); `undefined` for the client's default. */
  projectId: string | undefined;
  /** Base URL of the service; `undefined` for the client's default. */
  baseUrl: string | undefined;
  /** API key; `undefined` lets the client read `BROWSER_SERVICE_API_KEY`. */
  apiKey: string | undefined;
  /** Serve Streamable HTTP on this port (0: any free port); `undefined` for stdio. */
  httpPort: number | undefined;
  /** Address the HTTP server listens on. */
  host: string;
  /** More `Host` values HTTP clients may send (`name` or `name:port`). */
  allowedHosts: string[];
  /** Bearer token HTTP clients must send; `undefined` until generated. */
  token: string | undefined;
  /** Milliseconds between two reads of the snapshot. */
  pollIntervalMs: number;
  /** `timeout_sec` of every invocation. */
  timeoutSec: number;
  /** `--help` or `--version` was asked for. */
  show: "help" | "version" | undefined;
}

/** The shortest bearer token accepted; a generated one is 32 random bytes. */
export const minTokenLength = 16;

/** `--help`. */
export const helpText = `browser-service-mcp: the WebMCP tools of one browser service browser, as an MCP server.

Every WebMCP tool of every tab and frame of the browser becomes one MCP tool; the list
follows the browser (notifications/tools/list_changed). Calls are never retried. When
the browser captures its console telemetry category, its console lines are sent as MCP
log messages (logger browser-console; logging/setLevel, default info).

Usage:
  browser-service-mcp [options]                 MCP over stdio (for clients that start a command)
  browser-service-mcp --http <port> [options]   MCP over Streamable HTTP at http://<host>:<port>/mcp

Which browser (one of):
  --browser <id or name>   an existing browser            BROWSER_SERVICE_BROWSER
  --start-url <url>        create one that opens this URL  BROWSER_SERVICE_START_URL
  --name <name>            create one with this name       BROWSER_SERVICE_BROWSER_NAME
  --keep                   keep the created browser on exit (default: delete it)
                                                           BROWSER_SERVICE_KEEP=1
  With neither --browser nor --start-url/--name, a blank browser is created.

The service:
  (API key)                required                        BROWSER_SERVICE_API_KEY
  --base-url <url>         default http://127.0.0.1:8787   BROWSER_SERVICE_BASE_URL
  --project <id>           project id                      BROWSER_SERVICE_PROJECT_ID

Streamable HTTP:
  --http <port>            serve HTTP instead of stdio (0: a free port)
                                                           BROWSER_SERVICE_MCP_HTTP_PORT
  --host <address>         default 127.0.0.1; any other than loopback is warned about
                                                           BROWSER_SERVICE_MCP_HOST
  --allowed-host <host>    another Host clients may name (a DNS name, a proxy's host),
                           repeatable; name or name:port. Requests must name the
                           address listened on (or localhost) or one of these.
                                                           BROWSER_SERVICE_MCP_ALLOWED_HOSTS (comma-separated)
  (bearer token)           clients send "Authorization: Bearer <token>"; at least
                           ${minTokenLength} characters. Unset: one is generated and printed.
                                                           BROWSER_SERVICE_MCP_TOKEN

Tools:
  --poll-interval <ms>     how often to look for tool changes, 100..60000, default 1000
                                                           BROWSER_SERVICE_MCP_POLL_MS
  --timeout-sec <s>        how long a call waits for the page, ${TIMEOUT.minimum}..${TIMEOUT.maximum}, default 30
                                                           BROWSER_SERVICE_MCP_TIMEOUT_SEC

  --help                   this text
  --version                the version

Flags win over variables. Logs go to standard error.
`;

/** An integer within bounds, or a `ConfigError` that names the option. */
function integer(option: string, value: string | undefined, min: number, max: number, fallback: number): number;
function integer(option: string, value: string | undefined, min: number, max: number, fallback: undefined): number | undefined;
function integer(option: string, value: string | undefined, min: number, max: number, fallback: number | undefined): number | undefined {
  if (value === undefined || value === "") return fallback;
  const number = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(number) || number < min || number > max) {
    throw new ConfigError("invalid_option", `${option} must be an integer from ${min} to ${max}; got ${JSON.stringify(value)}.`);
  }
  return number;
}

/** What `--allowed-host` takes: a name or IPv4 address, or an IPv6 address in brackets, then maybe a port. */
const hostValue = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

const nonEmpty = (value: string | undefined) => (value === undefined || value === "" ? undefined : value);

/**
 * Reads the flags (`argv` without the node and script paths) and the environment.
 * Throws `ConfigError`: `unknown_option` (a flag it does not know), `invalid_option` (a
 * value out of range, a URL that does not parse, a token too short, an allowed host
 * that is not `host[:port]`),
 * `conflicting_options` (`--browser` with `--start-url` or `--name`, `--keep` with
 * `--browser`).
 */
export function readConfig(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): BridgeConfig {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      allowPositionals: false,
      options: {
        browser: { type: "string" },
        "start-url": { type: "string" },
        name: { type: "string" },
        keep: { type: "boolean" },
        project: { type: "string" },
        "base-url": { type: "string" },
        http: { type: "string" },
        host: { type: "string" },
        "allowed-host": { type: "string", multiple: true },
        "poll-interval": { type: "string" },
        "timeout-sec": { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean" },
      },
    }));
  } catch (error) {
    throw new ConfigError("unknown_option", `${(error as Error).message}. Run browser-service-mcp --help.`, { cause: error });
  }
  const browser = nonEmpty(values.browser ?? env.BROWSER_SERVICE_BROWSER);
  const startUrl = nonEmpty(values["start-url"] ?? env.BROWSER_SERVICE_START_URL);
  const name = nonEmpty(values.name ?? env.BROWSER_SERVICE_BROWSER_NAME);
  const keep = values.keep ?? ["1", "true", "yes"].includes(String(env.BROWSER_SERVICE_KEEP ?? "").toLowerCase());
  if (browser !== undefined && (startUrl !== undefined || name !== undefined)) {
    throw new ConfigError("conflicting_options", "--browser serves an existing browser; --start-url and --name create one. Give one or the other.");
  }
  if (browser !== undefined && values.keep)
    throw new ConfigError("conflicting_options", "--keep is for a browser the bridge creates; an existing browser (--browser) is never deleted.");
  if (startUrl !== undefined && !URL.canParse(startUrl)) throw new ConfigError("invalid_option", `--start-url is not a URL: ${JSON.stringify(startUrl)}.`);
  const baseUrl = nonEmpty(values["base-url"] ?? env.BROWSER_SERVICE_BASE_URL);
  if (baseUrl !== undefined && !URL.canParse(baseUrl)) throw new ConfigError("invalid_option", `--base-url is not a URL: ${JSON.stringify(baseUrl)}.`);
  const token = nonEmpty(env.BROWSER_SERVICE_MCP_TOKEN);
  if (token !== undefined && (token.length < minTokenLength || /\s/.test(token))) {
    throw new ConfigError("invalid_option", `BROWSER_SERVICE_MCP_TOKEN must be at least ${minTokenLength} characters without spaces.`);
  }
  const allowedHosts =
    values["allowed-host"] ??
    (env.BROWSER_SERVICE_MCP_ALLOWED_HOSTS ?? "")
      .split(",")
      .map((each) => each.trim())
      .filter((each) => each !== "");
  for (const allowed of allowedHosts) {
    if (!hostValue.test(allowed) || !URL.canParse(`http://${allowed}`)) {
      throw new ConfigError(
        "invalid_option",
        `--allowed-host takes a host name or address, optionally with :port (IPv6 in brackets); got ${JSON.stringify(allowed)}.`,
      );
    }
  }
  return {
    browser,
    startUrl,
    name,
    keep,
    projectId: nonEmpty(values.project ?? env.BROWSER_SERVICE_PROJECT_ID),
    baseUrl,
    apiKey: nonEmpty(env.BROWSER_SERVICE_API_KEY),
    httpPort: integer("--http", values.http ?? env.BROWSER_SERVICE_MCP_HTTP_PORT, 0, 65535, undefined),
    host: nonEmpty(values.host ?? env.BROWSER_SERVICE_MCP_HOST) ?? "127.0.0.1",
    allowedHosts,
    token,
    pollIntervalMs: integer("--poll-interval", values["poll-interval"] ?? env.BROWSER_SERVICE_MCP_POLL_MS, 100, 60_000, 1000),
    timeoutSec: integer("--timeout-sec", values["timeout-sec"] ?? env.BROWSER_SERVICE_MCP_TIMEOUT_SEC, TIMEOUT.minimum, TIMEOUT.maximum, 30),
    show: values.help ? "help" : values.version ? "version" : undefined,
  };
}
