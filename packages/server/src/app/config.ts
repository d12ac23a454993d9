import { hostname } from "node:os";
import { parseArgs } from "node:util";
import { TrustProxyError, trustedProxies } from "../http/client-key.js";
import { MIN_NODE_SECRET_LENGTH } from "../nodes/peer-auth.js";
import { DEFAULT_PROFILE_STATE_BYTES } from "../profiles/profile-states.js";
import { DEFAULT_RESOURCE_BUDGET } from "../sandbox/browser-cgroups.js";
import { DEFAULT_DOWNLOAD_BYTES, DEFAULT_PROFILE_BYTES, DEFAULT_SHM_BYTES } from "../sandbox/sandbox-command.js";
import { DEFAULT_SANDBOX_UID_BASE } from "../sandbox/sandbox-uids.js";
import { parseSecretsKey, SecretsKeyError } from "../secrets/secrets-key.js";

/** How the server runs; every field has a default (see {@link HELP_TEXT}). */
export interface ServerConfig {
  /** TCP port to listen on; `0` picks a free one. */
  port: number;
  /** Interface to listen on. */
  host: string;
  /** Directory holding the database and uploaded archives. */
  dataDir: string;
  /** A PostgreSQL database (`postgres://` URL) holding the control plane instead of the data directory's SQLite file. */
  database: string | undefined;
  /** This server's name among the servers sharing a PostgreSQL database. */
  nodeId: string;
  /** The URL other nodes reach this one at; with `nodeSecret`, it serves and forwards for the others. */
  advertiseUrl: string | undefined;
  /** The secret every node sharing the database holds, at least 32 characters. */
  nodeSecret: string | undefined;
  /** Another secret whose proofs this node accepts, never makes: the old or the new one while the secret is rotated. */
  nodeSecretAccept: string | undefined;
  /** Seconds a node's lease lasts unless renewed. */
  nodeLeaseSec: number;
  /** The key that encrypts stored credentials (64 hex characters); `undefined`: the data directory's `secrets.key`. */
  secretsKey: string | undefined;
  /** The key stored secrets were sealed with before, while the key is changed. */
  secretsKeyPrevious: string | undefined;
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
  /** Messages per second each DevTools connection may send, sustained; `0` turns the limit off. */
  cdpMessageRate: number;
  /** Bytes per second each DevTools connection may send, sustained; `0` turns the limit off. */
  cdpByteRate: number;
  /** Messages per second all the DevTools connections of a project may send together; `0` turns the limit off. */
  cdpProjectMessageRate: number;
  /** Bytes per second all the DevTools connections of a project may send together; `0` turns the limit off. */
  cdpProjectByteRate: number;
  /** Commands of one DevTools connection awaiting the browser's answer, at most. */
  cdpMaxPending: number;
  /** Live view viewers at once per browser. */
  liveViewMaxViewers: number;
  /** Run browsers without their sandbox (a developer's own machine only). */
  unsafeNoSandbox: boolean;
  /** Let browsers reach loopback, private and link-local addresses and this host. */
  allowPrivateNetwork: boolean;
  /** The first host account id of browsers' sandboxes when the server runs as root. */
  sandboxUidBase: number;
  /** The most one browser may hold in its download folder, in bytes. */
  downloadBytes: number;
  /** The most one browser may hold in its profile (site storage, caches), in bytes. */
  profileBytes: number;
  /** The most one browser may hold in shared memory (`/dev/shm`), in bytes. */
  shmBytes: number;
  /** The most a profile's saved state may hold, in bytes. */
  profileStateBytes: number;
  /** Seconds a login flow may run before it expires. */
  authFlowSeconds: number;
  /** Checks every auth connection this often instead of its interval; `undefined`: each its own. */
  authCheckSeconds: number | undefined;
  /** Memory of all of one browser's processes together, in bytes (its tmpfs files count); past it the browser is ended. */
  browserMemoryBytes: number;
  /** Processes and threads one browser may run at once. */
  browserMaxProcesses: number;
  /** CPU time one browser may take, in cores. */
  browserCpus: number;
  /** Run browsers without their resource budget (a developer's own machine only). */
  unsafeNoResourceLimits: boolean;
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
  /** Connections each client may hold open at once; `0` turns the limit off. */
  maxClientConnections: number;
  /** The reverse proxies whose `X-Forwarded-For` names the client (addresses, CIDR ranges, `loopback`...); empty: none. */
  trustProxy: string[];
  /** Browsers kept launched and ready for `POST /browsers`; `0` turns the warm pool off. */
  warmBrowsers: number;
  /** MiB of memory the host keeps available: below it, creates are `503 host_memory_low`; `0` turns the floor off. */
  minFreeMemoryMib: number;
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
  database: undefined,
  nodeId: hostname(),
  advertiseUrl: undefined,
  nodeSecret: undefined,
  nodeSecretAccept: undefined,
  nodeLeaseSec: 10,
  secretsKey: undefined,
  secretsKeyPrevious: undefined,
  planLimit: 10,
  fixtures: undefined,
  projectsDisabled: false,
  publicUrl: undefined,
  cdpMaxClients: 8,
  cdpMaxMessageBytes: 16 * 1024 * 1024,
  cdpMaxBufferedBytes: 64 * 1024 * 1024,
  // Far above what Playwright or Puppeteer send (a ~200 KB script per new context, a few
  // hundred small commands a second at most); what a flood can make the server parse
  // stays a fraction of a core, and a client over it is slowed, never refused.
  // What one tenant may make the server's one thread do for its DevTools traffic, sized so
  // that a project flooding at its budget leaves other tenants' requests within 2x of
  // their quiet p99 on 2 cores (bench/soak.mjs); Playwright and Puppeteer stay far below.
  cdpMessageRate: 2_000,
  cdpByteRate: 16 * 1024 * 1024,
  cdpProjectMessageRate: 4_000,
  cdpProjectByteRate: 32 * 1024 * 1024,
  // A driver awaits tens of answers at once; 10,000 bounds what a client that never waits holds (a few MB).
  cdpMaxPending: 10_000,
  liveViewMaxViewers: 8,
  unsafeNoSandbox: false,
  allowPrivateNetwork: false,
  sandboxUidBase: DEFAULT_SANDBOX_UID_BASE,
  downloadBytes: DEFAULT_DOWNLOAD_BYTES,
  profileBytes: DEFAULT_PROFILE_BYTES,
  profileStateBytes: DEFAULT_PROFILE_STATE_BYTES,
  authFlowSeconds: 600,
  authCheckSeconds: undefined,
  shmBytes: DEFAULT_SHM_BYTES,
  browserMemoryBytes: DEFAULT_RESOURCE_BUDGET.memoryBytes,
  browserMaxProcesses: DEFAULT_RESOURCE_BUDGET.maxProcesses,
  browserCpus: DEFAULT_RESOURCE_BUDGET.cpus,
  unsafeNoResourceLimits: false,
  bodyIdleTimeoutSec: 10,
  // Far above what an agent driving browsers sends, so only a runaway loop meets it.
  rateLimit: 50,
  rateLimitBurst: 100,
  // Keys carry ~190 random bits, so guessing is hopeless anyway: this bounds the cost of a
  // flood of wrong keys (and the log noise), and is still plenty for a mistyped key.
  authFailureLimit: 10,
  authFailureBurst: 20,
  // Far above the pool of any HTTP client (browsers keep 6 per host, Node's fetch a few
  // dozen), and far below the file descriptors of a process (often 1,024 to 20,000 here).
  maxClientConnections: 256,
  // Believing X-Forwarded-For from a peer that is no proxy would let any client pick its own address.
  trustProxy: [],
  // Two idle headless Chromiums take about 0.3 GB on a laptop and cover an agent that starts
  // a browser or two at a time; a larger burst falls back to cold launches.
  warmBrowsers: 2,
  // A browser's first page takes 150-400 MB: below half a GiB available, the next create
  // would leave the choice of what to kill to the kernel's OOM killer.
  minFreeMemoryMib: 512,
};

/** What `--help` prints. */
export const HELP_TEXT = `Usage:
  browser-service-server [options]                               run the server
  browser-service-server keys create [--project <id>] [options]  issue an API key and print it

Options (a flag beats its environment variable):
  --port <n>            BROWSER_SERVICE_PORT               port to listen on (default 8787; 0 picks a free port)
  --host <addr>         BROWSER_SERVICE_HOST               interface to listen on (default 127.0.0.1)
  --data-dir <dir>      BROWSER_SERVICE_DATA_DIR           database and uploads (default .data in the current directory)
  --database <url>      BROWSER_SERVICE_DATABASE_URL       a PostgreSQL database (postgres://user:pass@host/db) for the
                                                           control plane, shared by several servers (default: SQLite
                                                           in the data directory)
  --node-id <name>      BROWSER_SERVICE_NODE_ID            this server's name among those sharing --database: letters,
                                                           digits, . _ -, at most 64 (default: the host name)
  --advertise-url <url>  BROWSER_SERVICE_ADVERTISE_URL     where the other nodes reach this one (http://10.0.0.5:8787): it
                                                           then takes creates placed on it and forwards what belongs to
                                                           another node's browser (needs --database and --node-secret)
  --node-secret <s>     BROWSER_SERVICE_NODE_SECRET        the secret every node shares, at least 32 characters (the
                                                           environment keeps it out of the process list); it never
                                                           leaves the node: each request to another carries a proof
  --node-secret-accept <s>  BROWSER_SERVICE_NODE_SECRET_ACCEPT  another secret whose proofs this node accepts but
                                                           never makes, while the secret is rotated (README)
  --node-lease-sec <n>  BROWSER_SERVICE_NODE_LEASE_SEC     a node's lease (default 10, 2 to 300): a node gone for longer has
                                                           its browsers marked crashed by the others
  --secrets-key <hex>   BROWSER_SERVICE_SECRETS_KEY        the key that encrypts stored credentials, 64 hex characters
                                                           (openssl rand -hex 32), the same on every node (default: the
                                                           data directory's secrets.key, made at the first start)
  --secrets-key-previous <hex>  BROWSER_SERVICE_SECRETS_KEY_PREVIOUS  the key they were sealed with before: at start they
                                                           are sealed again with --secrets-key (README)
  --plan-limit <n>      BROWSER_SERVICE_PLAN_LIMIT         organization concurrency limit (default 10)
  --fixtures <file>     BROWSER_SERVICE_FIXTURES           JSON file of auth connections and pool reservations to load
  --projects-disabled   BROWSER_SERVICE_PROJECTS_DISABLED  answer project administration with 404 projects_disabled
  --public-url <url>    BROWSER_SERVICE_PUBLIC_URL         URL clients reach the server at (proxy, TLS); cdp_ws_url follows it
                                                           (default: ws:// and the request's Host)
  --cdp-max-clients <n> BROWSER_SERVICE_CDP_MAX_CLIENTS    DevTools WebSocket clients per browser (default 8)
  --cdp-max-message-mib <n>  BROWSER_SERVICE_CDP_MAX_MESSAGE_MIB  largest DevTools message a client may send (default 16)
  --cdp-max-buffer-mib <n>   BROWSER_SERVICE_CDP_MAX_BUFFER_MIB   output queued for a slow DevTools client before
                                                           it is disconnected (default 64)
  --cdp-message-rate <n>     BROWSER_SERVICE_CDP_MESSAGE_RATE     DevTools messages per second per connection; a client
                                                           over it is slowed (default 2000; 0 turns it off)
  --cdp-byte-rate-mib <n>    BROWSER_SERVICE_CDP_BYTE_RATE_MIB    DevTools MiB per second per connection (default 16; 0: off)
  --cdp-project-message-rate <n>  BROWSER_SERVICE_CDP_PROJECT_MESSAGE_RATE  DevTools messages per second of all
                                                           connections of a project (default 4000; 0: off)
  --cdp-project-byte-rate-mib <n>  BROWSER_SERVICE_CDP_PROJECT_BYTE_RATE_MIB  DevTools MiB per second of all
                                                           connections of a project (default 32; 0: off)
  --cdp-max-pending <n>      BROWSER_SERVICE_CDP_MAX_PENDING      DevTools commands per connection awaiting an answer
                                                           (default 10000); past it a command gets an error
  --live-view-max-viewers <n>  BROWSER_SERVICE_LIVE_VIEW_MAX_VIEWERS  people watching one browser's live view at
                                                           once (default 8)
  --allow-private-network  BROWSER_SERVICE_ALLOW_PRIVATE_NETWORK  let browsers reach loopback, private and link-local
                                                           addresses and this host (local development; off by default)
  --download-mib <n>    BROWSER_SERVICE_DOWNLOAD_MIB       most a browser may hold in its download folder (default 256)
  --profile-mib <n>     BROWSER_SERVICE_PROFILE_MIB        most a browser may hold in its profile: site storage, caches
                                                           (default 512; like downloads, held in memory)
  --profile-state-mib <n>  BROWSER_SERVICE_PROFILE_STATE_MIB  most a profile's saved state may hold (default 64, 1 to 1024);
                                                           a browser's state past it is not saved, the profile kept
  --auth-flow-seconds <n>  BROWSER_SERVICE_AUTH_FLOW_SECONDS  how long a managed auth login flow may run before it
                                                           ends EXPIRED (default 600, 10 to 3600)
  --auth-check-seconds <n>  BROWSER_SERVICE_AUTH_CHECK_SECONDS  check every auth connection's session this often
                                                           instead of its health_check_interval (tests, demos; 1 to 86400)
  --shm-mib <n>         BROWSER_SERVICE_SHM_MIB            most a browser may hold in shared memory, /dev/shm (default 256)
  --browser-memory-mib <n>  BROWSER_SERVICE_BROWSER_MEMORY_MIB  memory of one browser's processes together, its profile,
                                                           downloads and /dev/shm included (default 2048); past it the
                                                           browser is ended, crashed with reason out_of_memory
  --browser-max-processes <n>  BROWSER_SERVICE_BROWSER_MAX_PROCESSES  processes and threads of one browser at once
                                                           (default 1024)
  --browser-cpus <n>    BROWSER_SERVICE_BROWSER_CPUS       CPU time of one browser, in cores: 0.5, 1, 2.5 (default: the
                                                           host's cores; each browser weighs as one under contention)
  --unsafe-no-resource-limits  BROWSER_SERVICE_UNSAFE_NO_RESOURCE_LIMITS  run browsers without their budget where
                                                           the server may not make cgroups: one page can take the host
  --sandbox-uid-base <n>  BROWSER_SERVICE_SANDBOX_UID_BASE  first host account id of browsers when run as root
                                                           (default 2000000000; 65536 ids from it)
  --unsafe-no-sandbox   BROWSER_SERVICE_UNSAFE_NO_SANDBOX  run browsers without their sandbox, as the server's account,
                                                           seeing its files and network: a developer's own machine only
  --body-idle-timeout-sec <n>  BROWSER_SERVICE_BODY_IDLE_TIMEOUT_SEC  close a request whose body stalls this long
                                                           (default 10; 0 turns it off)
  --rate-limit <n>      BROWSER_SERVICE_RATE_LIMIT         requests per second per API key, sustained (default 50; 0 turns it off)
  --rate-limit-burst <n>  BROWSER_SERVICE_RATE_LIMIT_BURST  requests per API key at once (default 100)
  --auth-failure-limit <n>  BROWSER_SERVICE_AUTH_FAILURE_LIMIT  failed authentications per second per client address
                                                           (default 10; 0 turns it off); over it, 429 for every request
                                                           with a credential (requests without one are not counted)
  --auth-failure-burst <n>  BROWSER_SERVICE_AUTH_FAILURE_BURST  failed authentications per address at once (default 20)
  --max-client-connections <n>  BROWSER_SERVICE_MAX_CLIENT_CONNECTIONS  connections each client address may hold
                                                           open at once (default 256; 0 turns it off)
  --trust-proxy <list>  BROWSER_SERVICE_TRUST_PROXY        reverse proxies whose X-Forwarded-For names the client:
                                                           addresses, CIDR ranges, loopback, linklocal, uniquelocal,
                                                           comma-separated (default none: the TCP peer is the client)
  --warm-browsers <n>   BROWSER_SERVICE_WARM_BROWSERS      browsers kept launched and ready for POST /browsers (default 2;
                                                           0 turns it off); they are not sessions and count against no limit
  --min-free-memory-mib <n>  BROWSER_SERVICE_MIN_FREE_MEMORY_MIB  MiB of memory the host keeps available: below it
                                                           POST /browsers is 503 host_memory_low (default 512; 0 turns it off)
  --project <id>        (keys create) scope the new key to this project; org-wide without it
  -h, --help                                               print this help

Chromium for POST /browsers: CHROMIUM_PATH, else /usr/bin/chromium. Log level: LOG_LEVEL (default info).
On the first start with an empty data directory the server creates an organization, a
project named Default and an org-wide API key, and prints the key once.`;

/** What the command line asks for. */
export type Command = { kind: "help" } | { kind: "serve"; config: ServerConfig } | { kind: "keys-create"; config: ServerConfig; project: string | undefined };

function integer(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}; received "${raw}".`);
  }
  return Number(raw);
}

const MIB = 1024 * 1024;

/** An integer flag (beating its environment variable) in `unit`s, or `undefined` when neither is set. */
function numberSetting(
  flagValue: string | undefined,
  flagName: string,
  env: NodeJS.ProcessEnv,
  envName: string,
  min: number,
  max: number,
  unit: number,
): number | undefined {
  const raw = flagValue ?? env[envName];
  if (raw === undefined || raw === "") return undefined;
  return integer(flagValue === undefined ? envName : flagName, raw, min, max) * unit;
}

/** `--trust-proxy`'s comma-separated list (beating its environment variable), checked; empty when neither is set. */
function trustProxySetting(flagValue: string | undefined, env: NodeJS.ProcessEnv): string[] {
  const raw = flagValue ?? env.BROWSER_SERVICE_TRUST_PROXY ?? "";
  const entries = raw
    .split(",")
    .map((entry) => entry.trim())
    .filter((entry) => entry !== "");
  if (entries.length === 0) return [];
  try {
    trustedProxies(entries);
  } catch (error) {
    if (error instanceof TrustProxyError)
      throw new ConfigError(`${flagValue === undefined ? "BROWSER_SERVICE_TRUST_PROXY" : "--trust-proxy"}: ${error.message}`);
    throw error;
  }
  return entries;
}

/** `--database` (beating its environment variable), checked to be a PostgreSQL URL; `undefined` when neither is set. */
function databaseSetting(flagValue: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const raw = flagValue ?? (env.BROWSER_SERVICE_DATABASE_URL || undefined);
  if (raw === undefined) return undefined;
  const name = flagValue === undefined ? "BROWSER_SERVICE_DATABASE_URL" : "--database";
  if (!isPostgresUrl(raw)) throw new ConfigError(`${name} must be a postgres:// or postgresql:// URL; received a value that is not one.`);
  return raw;
}

/** Whether `url` names a PostgreSQL database (`postgres:` or `postgresql:`). */
export function isPostgresUrl(url: string): boolean {
  try {
    const { protocol } = new URL(url);
    return protocol === "postgres:" || protocol === "postgresql:";
  } catch {
    return false;
  }
}

/** Whether `url` can be an advertise URL: an http(s) origin, nothing after it but `/`. */
export function isAdvertiseUrl(url: string): boolean {
  try {
    const parsed = new URL(url);
    return (
      (parsed.protocol === "http:" || parsed.protocol === "https:") &&
      parsed.pathname === "/" &&
      parsed.search === "" &&
      parsed.hash === "" &&
      parsed.username === "" &&
      parsed.password === ""
    );
  } catch {
    return false;
  }
}

/** The rule of a node id: what a log line, a row and a URL carry unescaped. */
export const NODE_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

function nodeIdSetting(flagValue: string | undefined, env: NodeJS.ProcessEnv): string {
  const raw = flagValue ?? (env.BROWSER_SERVICE_NODE_ID || undefined);
  if (raw === undefined) return NODE_ID_PATTERN.test(DEFAULT_CONFIG.nodeId) ? DEFAULT_CONFIG.nodeId : "local";
  if (!NODE_ID_PATTERN.test(raw)) {
    throw new ConfigError(
      `${flagValue === undefined ? "BROWSER_SERVICE_NODE_ID" : "--node-id"} must be 1 to 64 letters, digits, ".", "_" or "-"; received "${raw}".`,
    );
  }
  return raw;
}

function advertiseUrlSetting(flagValue: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const raw = flagValue ?? (env.BROWSER_SERVICE_ADVERTISE_URL || undefined);
  if (raw === undefined) return undefined;
  if (!isAdvertiseUrl(raw)) {
    throw new ConfigError(
      `${flagValue === undefined ? "BROWSER_SERVICE_ADVERTISE_URL" : "--advertise-url"} must be an http or https URL of an origin (http://10.0.0.5:8787), without path, query or credentials.`,
    );
  }
  return raw;
}

function nodeSecretSetting(
  flagValue: string | undefined,
  env: NodeJS.ProcessEnv,
  flagName = "--node-secret",
  envName = "BROWSER_SERVICE_NODE_SECRET",
): string | undefined {
  const raw = flagValue ?? (env[envName] || undefined);
  if (raw === undefined) return undefined;
  if (raw.length < MIN_NODE_SECRET_LENGTH) {
    throw new ConfigError(`${flagValue === undefined ? envName : flagName} must be at least ${MIN_NODE_SECRET_LENGTH} characters.`);
  }
  return raw;
}

/** A secrets key flag (beating its environment variable): 64 hex characters, checked here so a bad one stops nothing already started. */
function secretsKeySetting(flagValue: string | undefined, env: NodeJS.ProcessEnv, flagName: string, envName: string): string | undefined {
  const raw = flagValue ?? (env[envName] || undefined);
  if (raw === undefined) return undefined;
  try {
    parseSecretsKey(raw, flagValue === undefined ? envName : flagName);
  } catch (error) {
    if (error instanceof SecretsKeyError) throw new ConfigError(error.message);
    throw error;
  }
  return raw;
}

/** `--browser-cpus` (beating its environment variable): cores, up to two decimals, 0.01 to 1024. */
function cpusSetting(flagValue: string | undefined, env: NodeJS.ProcessEnv): number | undefined {
  const raw = flagValue ?? (env.BROWSER_SERVICE_BROWSER_CPUS || undefined);
  if (raw === undefined) return undefined;
  const cpus = Number(raw);
  if (!/^\d+(\.\d{1,2})?$/.test(raw) || cpus < 0.01 || cpus > 1024) {
    throw new ConfigError(
      `${flagValue === undefined ? "BROWSER_SERVICE_BROWSER_CPUS" : "--browser-cpus"} must be a number of cores from 0.01 to 1024 (0.5, 1, 2.5); received "${raw}".`,
    );
  }
  return cpus;
}

/** A boolean flag (beating its environment variable), or `undefined` when neither is set. */
function booleanSetting(flagValue: boolean | undefined, env: NodeJS.ProcessEnv, envName: string): boolean | undefined {
  const raw = env[envName];
  return flagValue ?? (raw === undefined ? undefined : flag(envName, raw));
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
        database: { type: "string" },
        "node-id": { type: "string" },
        "advertise-url": { type: "string" },
        "node-secret": { type: "string" },
        "node-secret-accept": { type: "string" },
        "secrets-key": { type: "string" },
        "secrets-key-previous": { type: "string" },
        "node-lease-sec": { type: "string" },
        "plan-limit": { type: "string" },
        fixtures: { type: "string" },
        "projects-disabled": { type: "boolean" },
        "public-url": { type: "string" },
        "cdp-max-clients": { type: "string" },
        "cdp-max-message-mib": { type: "string" },
        "cdp-max-buffer-mib": { type: "string" },
        "cdp-message-rate": { type: "string" },
        "cdp-byte-rate-mib": { type: "string" },
        "cdp-project-message-rate": { type: "string" },
        "cdp-project-byte-rate-mib": { type: "string" },
        "cdp-max-pending": { type: "string" },
        "live-view-max-viewers": { type: "string" },
        "allow-private-network": { type: "boolean" },
        "download-mib": { type: "string" },
        "profile-mib": { type: "string" },
        "profile-state-mib": { type: "string" },
        "auth-flow-seconds": { type: "string" },
        "auth-check-seconds": { type: "string" },
        "shm-mib": { type: "string" },
        "sandbox-uid-base": { type: "string" },
        "unsafe-no-sandbox": { type: "boolean" },
        "browser-memory-mib": { type: "string" },
        "browser-max-processes": { type: "string" },
        "browser-cpus": { type: "string" },
        "unsafe-no-resource-limits": { type: "boolean" },
        "body-idle-timeout-sec": { type: "string" },
        "rate-limit": { type: "string" },
        "rate-limit-burst": { type: "string" },
        "auth-failure-limit": { type: "string" },
        "auth-failure-burst": { type: "string" },
        "max-client-connections": { type: "string" },
        "trust-proxy": { type: "string" },
        "warm-browsers": { type: "string" },
        "min-free-memory-mib": { type: "string" },
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
  const projectsDisabled = booleanSetting(values["projects-disabled"], env, "BROWSER_SERVICE_PROJECTS_DISABLED");
  const config: ServerConfig = {
    port: port === undefined ? DEFAULT_CONFIG.port : integer(values.port === undefined ? "BROWSER_SERVICE_PORT" : "--port", port, 0, 65535),
    host: values.host ?? env.BROWSER_SERVICE_HOST ?? DEFAULT_CONFIG.host,
    dataDir: values["data-dir"] ?? env.BROWSER_SERVICE_DATA_DIR ?? DEFAULT_CONFIG.dataDir,
    database: databaseSetting(values.database, env),
    nodeId: nodeIdSetting(values["node-id"], env),
    advertiseUrl: advertiseUrlSetting(values["advertise-url"], env),
    nodeSecret: nodeSecretSetting(values["node-secret"], env),
    nodeSecretAccept: nodeSecretSetting(values["node-secret-accept"], env, "--node-secret-accept", "BROWSER_SERVICE_NODE_SECRET_ACCEPT"),
    secretsKey: secretsKeySetting(values["secrets-key"], env, "--secrets-key", "BROWSER_SERVICE_SECRETS_KEY"),
    secretsKeyPrevious: secretsKeySetting(values["secrets-key-previous"], env, "--secrets-key-previous", "BROWSER_SERVICE_SECRETS_KEY_PREVIOUS"),
    nodeLeaseSec: numberSetting(values["node-lease-sec"], "--node-lease-sec", env, "BROWSER_SERVICE_NODE_LEASE_SEC", 2, 300, 1) ?? DEFAULT_CONFIG.nodeLeaseSec,
    planLimit:
      planLimit === undefined
        ? DEFAULT_CONFIG.planLimit
        : integer(values["plan-limit"] === undefined ? "BROWSER_SERVICE_PLAN_LIMIT" : "--plan-limit", planLimit, 0, 1_000_000),
    fixtures: values.fixtures ?? (env.BROWSER_SERVICE_FIXTURES || undefined),
    projectsDisabled: projectsDisabled ?? DEFAULT_CONFIG.projectsDisabled,
    publicUrl: values["public-url"] ?? (env.BROWSER_SERVICE_PUBLIC_URL || undefined),
    cdpMaxClients:
      numberSetting(values["cdp-max-clients"], "--cdp-max-clients", env, "BROWSER_SERVICE_CDP_MAX_CLIENTS", 1, 1000, 1) ?? DEFAULT_CONFIG.cdpMaxClients,
    cdpMaxMessageBytes:
      numberSetting(values["cdp-max-message-mib"], "--cdp-max-message-mib", env, "BROWSER_SERVICE_CDP_MAX_MESSAGE_MIB", 1, 1024, MIB) ??
      DEFAULT_CONFIG.cdpMaxMessageBytes,
    cdpMaxBufferedBytes:
      numberSetting(values["cdp-max-buffer-mib"], "--cdp-max-buffer-mib", env, "BROWSER_SERVICE_CDP_MAX_BUFFER_MIB", 1, 4096, MIB) ??
      DEFAULT_CONFIG.cdpMaxBufferedBytes,
    cdpMessageRate:
      numberSetting(values["cdp-message-rate"], "--cdp-message-rate", env, "BROWSER_SERVICE_CDP_MESSAGE_RATE", 0, 1_000_000, 1) ??
      DEFAULT_CONFIG.cdpMessageRate,
    cdpByteRate:
      numberSetting(values["cdp-byte-rate-mib"], "--cdp-byte-rate-mib", env, "BROWSER_SERVICE_CDP_BYTE_RATE_MIB", 0, 4096, MIB) ?? DEFAULT_CONFIG.cdpByteRate,
    cdpProjectMessageRate:
      numberSetting(values["cdp-project-message-rate"], "--cdp-project-message-rate", env, "BROWSER_SERVICE_CDP_PROJECT_MESSAGE_RATE", 0, 1_000_000, 1) ??
      DEFAULT_CONFIG.cdpProjectMessageRate,
    cdpProjectByteRate:
      numberSetting(values["cdp-project-byte-rate-mib"], "--cdp-project-byte-rate-mib", env, "BROWSER_SERVICE_CDP_PROJECT_BYTE_RATE_MIB", 0, 4096, MIB) ??
      DEFAULT_CONFIG.cdpProjectByteRate,
    cdpMaxPending:
      numberSetting(values["cdp-max-pending"], "--cdp-max-pending", env, "BROWSER_SERVICE_CDP_MAX_PENDING", 1, 1_000_000, 1) ?? DEFAULT_CONFIG.cdpMaxPending,
    liveViewMaxViewers:
      numberSetting(values["live-view-max-viewers"], "--live-view-max-viewers", env, "BROWSER_SERVICE_LIVE_VIEW_MAX_VIEWERS", 1, 1000, 1) ??
      DEFAULT_CONFIG.liveViewMaxViewers,
    unsafeNoSandbox: booleanSetting(values["unsafe-no-sandbox"], env, "BROWSER_SERVICE_UNSAFE_NO_SANDBOX") ?? DEFAULT_CONFIG.unsafeNoSandbox,
    allowPrivateNetwork: booleanSetting(values["allow-private-network"], env, "BROWSER_SERVICE_ALLOW_PRIVATE_NETWORK") ?? DEFAULT_CONFIG.allowPrivateNetwork,
    sandboxUidBase:
      numberSetting(values["sandbox-uid-base"], "--sandbox-uid-base", env, "BROWSER_SERVICE_SANDBOX_UID_BASE", 1000, 4_294_000_000, 1) ??
      DEFAULT_CONFIG.sandboxUidBase,
    downloadBytes: numberSetting(values["download-mib"], "--download-mib", env, "BROWSER_SERVICE_DOWNLOAD_MIB", 1, 65536, MIB) ?? DEFAULT_CONFIG.downloadBytes,
    // A fresh profile takes about 3 MiB; Chromium does not start in much less than 32.
    profileBytes: numberSetting(values["profile-mib"], "--profile-mib", env, "BROWSER_SERVICE_PROFILE_MIB", 32, 65536, MIB) ?? DEFAULT_CONFIG.profileBytes,
    profileStateBytes:
      numberSetting(values["profile-state-mib"], "--profile-state-mib", env, "BROWSER_SERVICE_PROFILE_STATE_MIB", 1, 1024, MIB) ??
      DEFAULT_CONFIG.profileStateBytes,
    authFlowSeconds:
      numberSetting(values["auth-flow-seconds"], "--auth-flow-seconds", env, "BROWSER_SERVICE_AUTH_FLOW_SECONDS", 10, 3600, 1) ??
      DEFAULT_CONFIG.authFlowSeconds,
    authCheckSeconds: numberSetting(values["auth-check-seconds"], "--auth-check-seconds", env, "BROWSER_SERVICE_AUTH_CHECK_SECONDS", 1, 86400, 1),
    // Chromium's renderers share their pixels through /dev/shm; much less than 64 MiB fails large pages.
    shmBytes: numberSetting(values["shm-mib"], "--shm-mib", env, "BROWSER_SERVICE_SHM_MIB", 64, 65536, MIB) ?? DEFAULT_CONFIG.shmBytes,
    // A headless Chromium with one page needs about 150 MiB; much less cannot start one.
    browserMemoryBytes:
      numberSetting(values["browser-memory-mib"], "--browser-memory-mib", env, "BROWSER_SERVICE_BROWSER_MEMORY_MIB", 256, 1_048_576, MIB) ??
      DEFAULT_CONFIG.browserMemoryBytes,
    // Chromium starts about 200 threads before its first page.
    browserMaxProcesses:
      numberSetting(values["browser-max-processes"], "--browser-max-processes", env, "BROWSER_SERVICE_BROWSER_MAX_PROCESSES", 256, 4_194_304, 1) ??
      DEFAULT_CONFIG.browserMaxProcesses,
    browserCpus: cpusSetting(values["browser-cpus"], env) ?? DEFAULT_CONFIG.browserCpus,
    unsafeNoResourceLimits:
      booleanSetting(values["unsafe-no-resource-limits"], env, "BROWSER_SERVICE_UNSAFE_NO_RESOURCE_LIMITS") ?? DEFAULT_CONFIG.unsafeNoResourceLimits,
    bodyIdleTimeoutSec:
      numberSetting(values["body-idle-timeout-sec"], "--body-idle-timeout-sec", env, "BROWSER_SERVICE_BODY_IDLE_TIMEOUT_SEC", 0, 3600, 1) ??
      DEFAULT_CONFIG.bodyIdleTimeoutSec,
    rateLimit: numberSetting(values["rate-limit"], "--rate-limit", env, "BROWSER_SERVICE_RATE_LIMIT", 0, 1_000_000, 1) ?? DEFAULT_CONFIG.rateLimit,
    rateLimitBurst:
      numberSetting(values["rate-limit-burst"], "--rate-limit-burst", env, "BROWSER_SERVICE_RATE_LIMIT_BURST", 1, 1_000_000, 1) ??
      DEFAULT_CONFIG.rateLimitBurst,
    authFailureLimit:
      numberSetting(values["auth-failure-limit"], "--auth-failure-limit", env, "BROWSER_SERVICE_AUTH_FAILURE_LIMIT", 0, 1_000_000, 1) ??
      DEFAULT_CONFIG.authFailureLimit,
    authFailureBurst:
      numberSetting(values["auth-failure-burst"], "--auth-failure-burst", env, "BROWSER_SERVICE_AUTH_FAILURE_BURST", 1, 1_000_000, 1) ??
      DEFAULT_CONFIG.authFailureBurst,
    maxClientConnections:
      numberSetting(values["max-client-connections"], "--max-client-connections", env, "BROWSER_SERVICE_MAX_CLIENT_CONNECTIONS", 0, 1_000_000, 1) ??
      DEFAULT_CONFIG.maxClientConnections,
    trustProxy: trustProxySetting(values["trust-proxy"], env),
    warmBrowsers: numberSetting(values["warm-browsers"], "--warm-browsers", env, "BROWSER_SERVICE_WARM_BROWSERS", 0, 64, 1) ?? DEFAULT_CONFIG.warmBrowsers,
    minFreeMemoryMib:
      numberSetting(values["min-free-memory-mib"], "--min-free-memory-mib", env, "BROWSER_SERVICE_MIN_FREE_MEMORY_MIB", 0, 1_048_576, 1) ??
      DEFAULT_CONFIG.minFreeMemoryMib,
  };

  if (config.advertiseUrl !== undefined && config.nodeSecret === undefined) {
    throw new ConfigError("--advertise-url needs --node-secret (BROWSER_SERVICE_NODE_SECRET), the secret every node shares.");
  }
  if (config.nodeSecretAccept !== undefined && config.nodeSecret === undefined) {
    throw new ConfigError("--node-secret-accept needs --node-secret (BROWSER_SERVICE_NODE_SECRET): it is accepted beside the secret, during a rotation.");
  }
  if ((config.advertiseUrl !== undefined || config.nodeSecret !== undefined) && config.database === undefined) {
    throw new ConfigError("--advertise-url and --node-secret need --database: nodes share one PostgreSQL database.");
  }

  if (positionals.length === 0) {
    if (values.project !== undefined) throw new ConfigError("--project only applies to `keys create`.");
    return { kind: "serve", config };
  }
  if (positionals.length === 2 && positionals[0] === "keys" && positionals[1] === "create") {
    return { kind: "keys-create", config, project: values.project };
  }
  throw new ConfigError(`Unknown command "${positionals.join(" ")}"; the commands are the server itself and \`keys create\`. Run with --help.`);
}
