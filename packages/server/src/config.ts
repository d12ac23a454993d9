import { parseArgs } from "node:util";

/** How the server runs; every field has a default (see {@link HELP_TEXT}). */
export interface ServerConfig {
  /** TCP port to listen on; `0` picks a free one. */
  port: number;
  /** Interface to listen on. */
  host: string;
  /** Directory holding the database and uploaded archives. */
  dataDir: string;
  /** The organization's concurrency limit, as its plan would set it. */
  planLimit: number;
  /** A fixtures file of auth connections and pool reservations to load at start. */
  fixtures: string | undefined;
  /** Whether the organization has projects disabled (project administration answers 404). */
  projectsDisabled: boolean;
  /** The URL clients reach the server at, when behind a proxy or TLS; `cdp_ws_url` follows it. */
  publicUrl: string | undefined;
  /** DevTools WebSocket clients at once per browser. */
  cdpMaxClients: number;
  /** The largest DevTools message a client may send, in bytes. */
  cdpMaxMessageBytes: number;
  /** Bytes queued for a DevTools client that does not read before it is disconnected. */
  cdpMaxBufferedBytes: number;
  /** The account Chromium runs as (name or uid), with its sandbox; `undefined`: the server's own. */
  chromiumUser: string | undefined;
  /** Seconds a request body may stall before the connection is closed; 0 turns it off. */
  bodyIdleTimeoutSec: number;
  /** Requests per second each API key may make, sustained; `0` turns the limit off. */
  rateLimit: number;
  /** Requests an API key may make at once after a quiet spell. */
  rateLimitBurst: number;
  /** Failed authentications per second from each client address, sustained; `0` turns the limit off. */
  authFailureLimit: number;
  /** Failed authentications an address may make at once after a quiet spell. */
  authFailureBurst: number;
  /** Browsers kept launched and ready for `POST /browsers`; `0` turns the warm pool off. */
  warmBrowsers: number;
}

/** A flag or environment variable has a value the server cannot use. */
export class ConfigError extends Error {
  /** Stable code of the failure. */
  readonly code = "invalid_config";

  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** The defaults of {@link ServerConfig}. */
export const DEFAULT_CONFIG: ServerConfig = {
  port: 8787,
  host: "127.0.0.1",
  dataDir: ".data",
  planLimit: 10,
  fixtures: undefined,
  projectsDisabled: false,
  publicUrl: undefined,
  cdpMaxClients: 8,
  cdpMaxMessageBytes: 16 * 1024 * 1024,
  cdpMaxBufferedBytes: 64 * 1024 * 1024,
  chromiumUser: undefined,
  bodyIdleTimeoutSec: 10,
  // Far above what an agent driving browsers sends, so only a runaway loop meets it.
  rateLimit: 50,
  rateLimitBurst: 100,
  // Keys carry ~190 random bits, so guessing is hopeless anyway: this bounds the cost of a
  // flood of wrong keys (and the log noise), and is still plenty for a mistyped key.
  authFailureLimit: 10,
  authFailureBurst: 20,
  // Two idle headless Chromiums take about 0.3 GB on a laptop and cover an agent that starts
  // a browser or two at a time; a larger burst falls back to cold launches.
  warmBrowsers: 2,
};

/** What `--help` prints. */
export const HELP_TEXT = `Usage:
  browser-service-server [options]                               run the server
  browser-service-server keys create [--project <id>] [options]  issue an API key and print it

Options (a flag beats its environment variable):
  --port <n>            BROWSER_SERVICE_PORT               port to listen on (default 8787; 0 picks a free port)
  --host <addr>         BROWSER_SERVICE_HOST               interface to listen on (default 127.0.0.1)
  --data-dir <dir>      BROWSER_SERVICE_DATA_DIR           database and uploads (default .data in the current directory)
  --plan-limit <n>      BROWSER_SERVICE_PLAN_LIMIT         organization concurrency limit (default 10)
  --fixtures <file>     BROWSER_SERVICE_FIXTURES           JSON file of auth connections and pool reservations to load
  --projects-disabled   BROWSER_SERVICE_PROJECTS_DISABLED  answer project administration with 404 projects_disabled
  --public-url <url>    BROWSER_SERVICE_PUBLIC_URL         URL clients reach the server at (proxy, TLS); cdp_ws_url follows it
                                                           (default: ws:// and the request's Host)
  --cdp-max-clients <n> BROWSER_SERVICE_CDP_MAX_CLIENTS    DevTools WebSocket clients per browser (default 8)
  --cdp-max-message-mib <n>  BROWSER_SERVICE_CDP_MAX_MESSAGE_MIB  largest DevTools message a client may send (default 16)
  --cdp-max-buffer-mib <n>   BROWSER_SERVICE_CDP_MAX_BUFFER_MIB   output queued for a slow DevTools client before
                                                           it is disconnected (default 64)
  --chromium-user <name>  BROWSER_SERVICE_CHROMIUM_USER    run Chromium as this account, sandboxed (server must be root)
  --body-idle-timeout-sec <n>  BROWSER_SERVICE_BODY_IDLE_TIMEOUT_SEC  close a request whose body stalls this long
                                                           (default 10; 0 turns it off)
  --rate-limit <n>      BROWSER_SERVICE_RATE_LIMIT         requests per second per API key, sustained (default 50; 0 turns it off)
  --rate-limit-burst <n>  BROWSER_SERVICE_RATE_LIMIT_BURST  requests per API key at once (default 100)
  --auth-failure-limit <n>  BROWSER_SERVICE_AUTH_FAILURE_LIMIT  failed authentications per second per client address
                                                           (default 10; 0 turns it off); over it, 429 for every request
  --auth-failure-burst <n>  BROWSER_SERVICE_AUTH_FAILURE_BURST  failed authentications per address at once (default 20)
  --warm-browsers <n>   BROWSER_SERVICE_WARM_BROWSERS      browsers kept launched and ready for POST /browsers (default 2;
                                                           0 turns it off); they are not sessions and count against no limit
  --project <id>        (keys create) scope the new key to this project; org-wide without it
  -h, --help                                               print this help

Chromium for POST /browsers: CHROMIUM_PATH, else /usr/bin/chromium. Log level: LOG_LEVEL (default info).
On the first start with an empty data directory the server creates an organization, a
project named Default and an org-wide API key, and prints the key once.`;

/** What the command line asks for. */
export type Command =
  | { kind: "help" }
  | { kind: "serve"; config: ServerConfig }
  | { kind: "keys-create"; config: ServerConfig; project: string | undefined };

function integer(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}; received "${raw}".`);
  }
  return Number(raw);
}

const MIB = 1024 * 1024;

/** An integer flag (beating its environment variable) in `unit`s, or `undefined` when neither is set. */
function numberSetting(flagValue: string | undefined, flagName: string, env: NodeJS.ProcessEnv, envName: string, min: number, max: number, unit: number): number | undefined {
  const raw = flagValue ?? env[envName];
  if (raw === undefined || raw === "") return undefined;
  return integer(flagValue === undefined ? envName : flagName, raw, min, max) * unit;
}

function flag(name: string, raw: string): boolean {
  if (["1", "true", "yes"].includes(raw.toLowerCase())) return true;
  if (["0", "false", "no", ""].includes(raw.toLowerCase())) return false;
  throw new ConfigError(`${name} must be true or false; received "${raw}".`);
}

/** Reads the command line and environment into a {@link Command}; bad input is a {@link ConfigError}. */
export function parseCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): Command {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        port: { type: "string" },
        host: { type: "string" },
        "data-dir": { type: "string" },
        "plan-limit": { type: "string" },
        fixtures: { type: "string" },
        "projects-disabled": { type: "boolean" },
        "public-url": { type: "string" },
        "cdp-max-clients": { type: "string" },
        "cdp-max-message-mib": { type: "string" },
        "cdp-max-buffer-mib": { type: "string" },
        "chromium-user": { type: "string" },
        "body-idle-timeout-sec": { type: "string" },
        "rate-limit": { type: "string" },
        "rate-limit-burst": { type: "string" },
        "auth-failure-limit": { type: "string" },
        "auth-failure-burst": { type: "string" },
        "warm-browsers": { type: "string" },
        project: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    throw new ConfigError(`${(error as Error).message}. Run with --help to see the options.`);
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help" };

  const port = values.port ?? env.BROWSER_SERVICE_PORT;
  const planLimit = values["plan-limit"] ?? env.BROWSER_SERVICE_PLAN_LIMIT;
  const projectsDisabled = values["projects-disabled"] ?? (env.BROWSER_SERVICE_PROJECTS_DISABLED === undefined ? undefined : flag("BROWSER_SERVICE_PROJECTS_DISABLED", env.BROWSER_SERVICE_PROJECTS_DISABLED));
  const config: ServerConfig = {
    port: port === undefined ? DEFAULT_CONFIG.port : integer(values.port === undefined ? "BROWSER_SERVICE_PORT" : "--port", port, 0, 65535),
    host: values.host ?? env.BROWSER_SERVICE_HOST ?? DEFAULT_CONFIG.host,
    dataDir: values["data-dir"] ?? env.BROWSER_SERVICE_DATA_DIR ?? DEFAULT_CONFIG.dataDir,
    planLimit: planLimit === undefined ? DEFAULT_CONFIG.planLimit : integer(values["plan-limit"] === undefined ? "BROWSER_SERVICE_PLAN_LIMIT" : "--plan-limit", planLimit, 0, 1_000_000),
    fixtures: values.fixtures ?? (env.BROWSER_SERVICE_FIXTURES || undefined),
    projectsDisabled: projectsDisabled ?? DEFAULT_CONFIG.projectsDisabled,
    publicUrl: values["public-url"] ?? (env.BROWSER_SERVICE_PUBLIC_URL || undefined),
    cdpMaxClients: numberSetting(values["cdp-max-clients"], "--cdp-max-clients", env, "BROWSER_SERVICE_CDP_MAX_CLIENTS", 1, 1000, 1) ?? DEFAULT_CONFIG.cdpMaxClients,
    cdpMaxMessageBytes: numberSetting(values["cdp-max-message-mib"], "--cdp-max-message-mib", env, "BROWSER_SERVICE_CDP_MAX_MESSAGE_MIB", 1, 1024, MIB) ?? DEFAULT_CONFIG.cdpMaxMessageBytes,
    cdpMaxBufferedBytes: numberSetting(values["cdp-max-buffer-mib"], "--cdp-max-buffer-mib", env, "BROWSER_SERVICE_CDP_MAX_BUFFER_MIB", 1, 4096, MIB) ?? DEFAULT_CONFIG.cdpMaxBufferedBytes,
    chromiumUser: values["chromium-user"] ?? (env.BROWSER_SERVICE_CHROMIUM_USER || undefined),
    bodyIdleTimeoutSec: numberSetting(values["body-idle-timeout-sec"], "--body-idle-timeout-sec", env, "BROWSER_SERVICE_BODY_IDLE_TIMEOUT_SEC", 0, 3600, 1) ?? DEFAULT_CONFIG.bodyIdleTimeoutSec,
    rateLimit: numberSetting(values["rate-limit"], "--rate-limit", env, "BROWSER_SERVICE_RATE_LIMIT", 0, 1_000_000, 1) ?? DEFAULT_CONFIG.rateLimit,
    rateLimitBurst: numberSetting(values["rate-limit-burst"], "--rate-limit-burst", env, "BROWSER_SERVICE_RATE_LIMIT_BURST", 1, 1_000_000, 1) ?? DEFAULT_CONFIG.rateLimitBurst,
    authFailureLimit: numberSetting(values["auth-failure-limit"], "--auth-failure-limit", env, "BROWSER_SERVICE_AUTH_FAILURE_LIMIT", 0, 1_000_000, 1) ?? DEFAULT_CONFIG.authFailureLimit,
    authFailureBurst: numberSetting(values["auth-failure-burst"], "--auth-failure-burst", env, "BROWSER_SERVICE_AUTH_FAILURE_BURST", 1, 1_000_000, 1) ?? DEFAULT_CONFIG.authFailureBurst,
    warmBrowsers: numberSetting(values["warm-browsers"], "--warm-browsers", env, "BROWSER_SERVICE_WARM_BROWSERS", 0, 64, 1) ?? DEFAULT_CONFIG.warmBrowsers,
  };

  if (positionals.length === 0) {
    if (values.project !== undefined) throw new ConfigError("--project only applies to `keys create`.");
    return { kind: "serve", config };
  }
  if (positionals.length === 2 && positionals[0] === "keys" && positionals[1] === "create") {
    return { kind: "keys-create", config, project: values.project };
  }
  throw new ConfigError(`Unknown command "${positionals.join(" ")}"; the commands are the server itself and \`keys create\`. Run with --help.`);
}
