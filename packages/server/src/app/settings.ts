import { hostname } from "node:os";
import { TrustProxyError, trustedProxies } from "../http/client-key.js";
import { MIN_NODE_SECRET_LENGTH } from "../nodes/peer-auth.js";
import { DEFAULT_PROFILE_STATE_BYTES } from "../profiles/profile-states.js";
import { DEFAULT_RESOURCE_BUDGET } from "../sandbox/browser-cgroups.js";
import { DEFAULT_DOWNLOAD_BYTES, DEFAULT_PROFILE_BYTES, DEFAULT_SHM_BYTES } from "../sandbox/sandbox-command.js";
import { DEFAULT_SANDBOX_UID_BASE } from "../sandbox/sandbox-uids.js";
import { parseSecretsKey, SecretsKeyError } from "../secrets/secrets-key.js";
import { DEFAULT_CHARS_PER_BROWSER, DEFAULT_CHARS_PER_PROJECT } from "../telemetry/telemetry-settings.js";

// Every setting of the server, each declared once below (flag, environment variable,
// parser and range, default, help line, README line): the command line's options, its
// parsing, `--help`, the defaults and the README's table are all made from this table.

/** How the server runs; every field is one of the settings `--help` lists, with its default. */
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
  /** A JSON file of the OTLP destinations browsers may export their telemetry to. */
  otlpDestinations: string | undefined;
  /** Hours a browser's telemetry events are kept after it ends. */
  telemetryRetentionHours: number;
  /** The most telemetry events kept per browser. */
  telemetryMaxEventsPerBrowser: number;
  /** The most telemetry events kept per project. */
  telemetryMaxEventsPerProject: number;
  /** The most bytes of telemetry events kept per browser. */
  telemetryMaxBytesPerBrowser: number;
  /** The most bytes of telemetry events kept per project. */
  telemetryMaxBytesPerProject: number;
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
  /** The port of the metrics' own listener (`GET /metrics`); `0` serves none. */
  metricsPort: number;
  /** The interface of the metrics' listener. */
  metricsHost: string;
  /** Seconds a SIGTERM lets running browsers go on before they are ended; `0`: ended at once. */
  drainSeconds: number;
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

/** How a setting's text becomes its value; `range` and `unit` say what `--help` and the README show. */
interface Parser<T> {
  read(raw: string, name: string): T;
  /**
   * The same rule for a value an embedder passes to `createServer` (`name` is the option's
   * path): throws a `RangeError` that says what is expected. Absent: any value of the type.
   */
  check?(value: unknown, name: string): void;
  /** The accepted values, as `--help` shows them (`1 to 1000`). */
  range?: string;
  /** What one of the values counts (a MiB), so a default in bytes shows in the flag's unit. */
  unit?: number;
}

const MIB = 1024 * 1024;

function integer(name: string, raw: string, min: number, max: number): number {
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw new ConfigError(`${name} must be an integer from ${min} to ${max}; received "${raw}".`);
  }
  return Number(raw);
}

/** A whole number from `min` to `max` (`unit`s on the command line; an option counts single units, up to the same most). */
const count = (min: number, max: number, unit = 1, least = min * unit): Parser<number> => ({
  read: (raw, name) => integer(name, raw, min, max) * unit,
  check(value, name) {
    if (typeof value !== "number" || !Number.isSafeInteger(value) || value < least || value > max * unit) {
      throw new RangeError(`${name} must be an integer from ${least} to ${max * unit}; received ${String(value)}.`);
    }
  },
  range: `${min} to ${max}`,
  unit,
});

/** A rate per second: whole on the command line; an option may be any number in the range (0.5: one every two seconds). */
const perSecond = (min: number, max: number): Parser<number> => ({
  ...count(min, max),
  check(value, name) {
    if (typeof value !== "number" || !Number.isFinite(value) || value < min || value > max) {
      throw new RangeError(`${name} must be a number from ${min} to ${max}; received ${String(value)}.`);
    }
  },
});

/** A size in bytes: whole MiB on the command line, from `minMib`; an option may be any number of bytes from 1. */
const mebibytes = (minMib: number, maxMib: number): Parser<number> => count(minMib, maxMib, MIB, 1);

/** Any text, as given. */
const TEXT: Parser<string> = { read: (raw) => raw };

/** A switch: the flag alone turns it on; its environment variable is `true`/`false` (`1`, `yes`, `0`, `no`). */
const SWITCH: Parser<boolean> = {
  read(raw, name) {
    if (["1", "true", "yes"].includes(raw.toLowerCase())) return true;
    if (["0", "false", "no"].includes(raw.toLowerCase())) return false;
    throw new ConfigError(`${name} must be true or false; received "${raw}".`);
  },
};

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

const postgresUrl: Parser<string> = {
  read(raw, name) {
    if (!isPostgresUrl(raw)) throw new ConfigError(`${name} must be a postgres:// or postgresql:// URL; received a value that is not one.`);
    return raw;
  },
  check(value, name) {
    if (typeof value !== "string" || !isPostgresUrl(value)) throw new RangeError(`${name} must be a postgres:// or postgresql:// URL.`);
  },
};

const nodeIdText: Parser<string> = {
  read(raw, name) {
    if (!NODE_ID_PATTERN.test(raw)) throw new ConfigError(`${name} must be 1 to 64 letters, digits, ".", "_" or "-"; received "${raw}".`);
    return raw;
  },
  check(value, name) {
    if (typeof value !== "string" || !NODE_ID_PATTERN.test(value)) {
      throw new RangeError(`${name} must be 1 to 64 letters, digits, ".", "_" or "-"; received "${String(value)}".`);
    }
  },
};

/** The host name, when it can be a node id. */
function defaultNodeId(): string {
  return NODE_ID_PATTERN.test(hostname()) ? hostname() : "local";
}

const advertiseUrlText: Parser<string> = {
  read(raw, name) {
    if (!isAdvertiseUrl(raw)) {
      throw new ConfigError(`${name} must be an http or https URL of an origin (http://10.0.0.5:8787), without path, query or credentials.`);
    }
    return raw;
  },
};

const nodeSecretText: Parser<string> = {
  read(raw, name) {
    if (raw.length < MIN_NODE_SECRET_LENGTH) throw new ConfigError(`${name} must be at least ${MIN_NODE_SECRET_LENGTH} characters.`);
    return raw;
  },
};

/** 64 hex characters, checked here so a bad key stops nothing already started. */
const secretsKeyText: Parser<string> = {
  read(raw, name) {
    try {
      parseSecretsKey(raw, name);
    } catch (error) {
      if (error instanceof SecretsKeyError) throw new ConfigError(error.message);
      throw error;
    }
    return raw;
  },
};

/** Cores, up to two decimals. */
const cores: Parser<number> = {
  read(raw, name) {
    const cpus = Number(raw);
    if (!/^\d+(\.\d{1,2})?$/.test(raw) || cpus < 0.01 || cpus > 1024) {
      throw new ConfigError(`${name} must be a number of cores from 0.01 to 1024 (0.5, 1, 2.5); received "${raw}".`);
    }
    return cpus;
  },
  range: "0.01 to 1024",
};

/** A comma-separated list of proxies, each checked. */
const proxies: Parser<string[]> = {
  read(raw, name) {
    const entries = raw
      .split(",")
      .map((entry) => entry.trim())
      .filter((entry) => entry !== "");
    if (entries.length === 0) return [];
    try {
      trustedProxies(entries);
    } catch (error) {
      if (error instanceof TrustProxyError) throw new ConfigError(`${name}: ${error.message}`);
      throw error;
    }
    return entries;
  },
};

/** One setting of {@link ServerConfig}: where it is read from, how, its default, and what it says of itself. */
export interface Setting<K extends keyof ServerConfig> {
  key: K;
  /** The command line flag, without its `--`. */
  flag: string;
  /** The flag's value as `--help` names it (`<n>`); absent for a switch. */
  arg?: string;
  /** The environment variable, which the flag beats. */
  env: string;
  default: ServerConfig[K];
  /** How the default reads (Markdown) when its value alone does not say it. */
  shown?: string;
  parse: Parser<Exclude<ServerConfig[K], undefined>>;
  /** The line of `--help`: what it is, without its default or range, which are added. */
  help: string;
  /** The README's line (Markdown). */
  doc: string;
  /**
   * Where `createServer` takes the same setting (`cdpLimits.maxClients`), when it takes it
   * in the same unit: {@link checkServerOptions} checks it there by this setting's rule.
   */
  option?: string;
}

/** Any one setting. */
export type AnySetting = { [K in keyof ServerConfig]: Setting<K> }[keyof ServerConfig];

const setting = <K extends keyof ServerConfig>(declared: Setting<K>): Setting<K> => declared;

/** The server's settings, in the order `--help` and the README list them. */
export const SETTINGS = [
  setting({
    key: "port",
    option: "port",
    flag: "port",
    arg: "<n>",
    env: "BROWSER_SERVICE_PORT",
    default: 8787,
    parse: count(0, 65535),
    help: "port to listen on; 0 picks a free one",
    doc: "Port to listen on; `0` picks a free one.",
  }),
  setting({
    key: "host",
    flag: "host",
    arg: "<addr>",
    env: "BROWSER_SERVICE_HOST",
    default: "127.0.0.1",
    parse: TEXT,
    help: "interface to listen on",
    doc: "Interface to listen on.",
  }),
  setting({
    key: "dataDir",
    flag: "data-dir",
    arg: "<dir>",
    env: "BROWSER_SERVICE_DATA_DIR",
    default: ".data",
    shown: "`.data` in the current directory",
    parse: TEXT,
    help: "database and uploads",
    doc: "Database (`browser-service.sqlite`) and uploaded archives: a new or empty directory, or one this server already uses (see [Data directory](#data-directory)).",
  }),
  setting({
    key: "database",
    option: "database",
    flag: "database",
    arg: "<url>",
    env: "BROWSER_SERVICE_DATABASE_URL",
    default: undefined,
    shown: "SQLite in the data directory",
    parse: postgresUrl,
    help: "a PostgreSQL database (postgres://user:pass@host/db) for the control plane, shared by several servers",
    doc: "A PostgreSQL database for the control plane, shared by several servers. See [Running several nodes](#running-several-nodes).",
  }),
  setting({
    key: "nodeId",
    option: "nodeId",
    flag: "node-id",
    arg: "<name>",
    env: "BROWSER_SERVICE_NODE_ID",
    default: defaultNodeId(),
    shown: "the host name",
    parse: nodeIdText,
    help: "this server's name among those sharing --database: letters, digits, . _ -, at most 64",
    doc: "This server's name among the nodes sharing `--database`. See [Running several nodes](#running-several-nodes).",
  }),
  setting({
    key: "advertiseUrl",
    flag: "advertise-url",
    arg: "<url>",
    env: "BROWSER_SERVICE_ADVERTISE_URL",
    default: undefined,
    parse: advertiseUrlText,
    help: "where the other nodes reach this one (http://10.0.0.5:8787): it then takes creates placed on it and forwards what belongs to another node's browser (needs --database and --node-secret)",
    doc: "Where the other nodes reach this one; needs `--database` and `--node-secret`. See [Running several nodes](#running-several-nodes).",
  }),
  setting({
    key: "nodeSecret",
    flag: "node-secret",
    arg: "<s>",
    env: "BROWSER_SERVICE_NODE_SECRET",
    default: undefined,
    parse: nodeSecretText,
    help: "the secret every node shares, at least 32 characters (the environment keeps it out of the process list); it never leaves the node: each request to another carries a proof",
    doc: "The secret every node shares, at least 32 characters; prefer the environment. See [Trust between nodes](#trust-between-nodes).",
  }),
  setting({
    key: "nodeSecretAccept",
    flag: "node-secret-accept",
    arg: "<s>",
    env: "BROWSER_SERVICE_NODE_SECRET_ACCEPT",
    default: undefined,
    parse: nodeSecretText,
    help: "another secret whose proofs this node accepts but never makes, while the secret is rotated (README)",
    doc: "Another secret whose proofs this node accepts but never makes, while the secret is rotated.",
  }),
  setting({
    key: "nodeLeaseSec",
    flag: "node-lease-sec",
    arg: "<n>",
    env: "BROWSER_SERVICE_NODE_LEASE_SEC",
    default: 10,
    parse: count(2, 300),
    help: "a node's lease: a node gone for longer has its browsers marked crashed by the others",
    doc: "How long a node's lease lasts unless renewed; a node gone for longer has its browsers marked crashed by the others.",
  }),
  setting({
    key: "secretsKey",
    flag: "secrets-key",
    arg: "<hex>",
    env: "BROWSER_SERVICE_SECRETS_KEY",
    default: undefined,
    shown: "the data directory's `secrets.key`, made at the first start",
    parse: secretsKeyText,
    help: "the key that encrypts stored credentials, 64 hex characters (openssl rand -hex 32), the same on every node",
    doc: "The key that encrypts stored credentials and profiles, 64 hex characters, the same on every node. See [Credentials](#credentials).",
  }),
  setting({
    key: "secretsKeyPrevious",
    flag: "secrets-key-previous",
    arg: "<hex>",
    env: "BROWSER_SERVICE_SECRETS_KEY_PREVIOUS",
    default: undefined,
    parse: secretsKeyText,
    help: "the key they were sealed with before: at start they are sealed again with --secrets-key (README)",
    doc: "The key they were sealed with before: at start everything is sealed again with `--secrets-key`.",
  }),
  setting({
    key: "planLimit",
    option: "planLimit",
    flag: "plan-limit",
    arg: "<n>",
    env: "BROWSER_SERVICE_PLAN_LIMIT",
    default: 10,
    parse: count(0, 1_000_000),
    help: "organization concurrency limit",
    doc: "The organization's concurrency limit, as its plan would set it.",
  }),
  setting({
    key: "fixtures",
    flag: "fixtures",
    arg: "<file>",
    env: "BROWSER_SERVICE_FIXTURES",
    default: undefined,
    parse: TEXT,
    help: "JSON file of auth connections and pool reservations to load",
    doc: "Auth connections and pool reservations to load at start.",
  }),
  setting({
    key: "otlpDestinations",
    flag: "otlp-destinations",
    arg: "<file>",
    env: "BROWSER_SERVICE_OTLP_DESTINATIONS",
    default: undefined,
    parse: TEXT,
    help: "JSON file of the OTLP destinations browsers may export telemetry to",
    doc: "The OTLP/HTTP destinations a browser's `telemetry.export` may name: a JSON array of `{id, name, endpoint, headers}` (see [Telemetry](#telemetry)).",
  }),
  setting({
    key: "telemetryRetentionHours",
    option: "telemetry.retentionHours",
    flag: "telemetry-retention-hours",
    arg: "<n>",
    env: "BROWSER_SERVICE_TELEMETRY_RETENTION_HOURS",
    default: 24,
    parse: count(1, 8760),
    help: "hours a browser's telemetry events are kept after it ends",
    doc: "Hours a browser's telemetry events stay readable after it ends (1 to 8760).",
  }),
  setting({
    key: "telemetryMaxEventsPerBrowser",
    option: "telemetry.maxEventsPerBrowser",
    flag: "telemetry-max-events-per-browser",
    arg: "<n>",
    env: "BROWSER_SERVICE_TELEMETRY_MAX_EVENTS_PER_BROWSER",
    default: 100_000,
    parse: count(100, 100_000_000),
    help: "most telemetry events kept per browser; past it the oldest are dropped",
    doc: "The most telemetry events kept per browser (100 to 100,000,000); past it its oldest are dropped and counted.",
  }),
  setting({
    key: "telemetryMaxEventsPerProject",
    option: "telemetry.maxEventsPerProject",
    flag: "telemetry-max-events-per-project",
    arg: "<n>",
    env: "BROWSER_SERVICE_TELEMETRY_MAX_EVENTS_PER_PROJECT",
    default: 1_000_000,
    parse: count(100, 1_000_000_000),
    help: "most telemetry events kept per project; past it the oldest are dropped",
    doc: "The most telemetry events kept per project (100 to 1,000,000,000); past it the project's oldest are dropped and counted, within seconds.",
  }),
  setting({
    key: "telemetryMaxBytesPerBrowser",
    option: "telemetry.maxBytesPerBrowser",
    flag: "telemetry-max-mib-per-browser",
    arg: "<n>",
    env: "BROWSER_SERVICE_TELEMETRY_MAX_MIB_PER_BROWSER",
    default: DEFAULT_CHARS_PER_BROWSER,
    parse: mebibytes(1, 1_048_576),
    help: "most MiB of telemetry events kept per browser; past it the oldest are dropped",
    doc: "The most telemetry events kept per browser in MiB of their JSON (1 to 1,048,576); past it its oldest are dropped and counted.",
  }),
  setting({
    key: "telemetryMaxBytesPerProject",
    option: "telemetry.maxBytesPerProject",
    flag: "telemetry-max-mib-per-project",
    arg: "<n>",
    env: "BROWSER_SERVICE_TELEMETRY_MAX_MIB_PER_PROJECT",
    default: DEFAULT_CHARS_PER_PROJECT,
    parse: mebibytes(1, 1_048_576),
    help: "most MiB of telemetry events kept per project; past it the oldest are dropped",
    doc: "The most telemetry events kept per project in MiB of their JSON (1 to 1,048,576); past it the project's oldest are dropped and counted, within seconds.",
  }),
  setting({
    key: "projectsDisabled",
    flag: "projects-disabled",
    env: "BROWSER_SERVICE_PROJECTS_DISABLED",
    default: false,
    parse: SWITCH,
    help: "answer project administration with 404 projects_disabled",
    doc: "Project administration answers `404 projects_disabled`.",
  }),
  setting({
    key: "publicUrl",
    flag: "public-url",
    arg: "<url>",
    env: "BROWSER_SERVICE_PUBLIC_URL",
    default: undefined,
    shown: "`ws://` and the request's `Host`",
    parse: TEXT,
    help: "URL clients reach the server at (proxy, TLS); cdp_ws_url follows it",
    doc: "The URL clients reach the server at behind a proxy or TLS; `cdp_ws_url` starts with its WebSocket form (`https` \u2192 `wss`), `live_view_url` with it. Without it, `ws://` (`http://`) and the request's `Host`.",
  }),
  setting({
    key: "cdpMaxClients",
    option: "cdpLimits.maxClients",
    flag: "cdp-max-clients",
    arg: "<n>",
    env: "BROWSER_SERVICE_CDP_MAX_CLIENTS",
    default: 8,
    parse: count(1, 1000),
    help: "DevTools WebSocket clients per browser",
    doc: "DevTools WebSocket clients at once per browser.",
  }),
  setting({
    key: "cdpMaxMessageBytes",
    option: "cdpLimits.maxMessageBytes",
    flag: "cdp-max-message-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_CDP_MAX_MESSAGE_MIB",
    default: 16 * MIB,
    parse: mebibytes(1, 1024),
    help: "largest DevTools message a client may send",
    doc: "The largest DevTools message a client may send.",
  }),
  setting({
    key: "cdpMaxBufferedBytes",
    option: "cdpLimits.maxBufferedBytes",
    flag: "cdp-max-buffer-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_CDP_MAX_BUFFER_MIB",
    default: 64 * MIB,
    parse: mebibytes(1, 4096),
    help: "output queued for a slow DevTools client before it is disconnected",
    doc: "Output queued for a DevTools client that does not read, before it is disconnected.",
  }),
  setting({
    key: "cdpMessageRate",
    option: "cdpLimits.messageRate",
    flag: "cdp-message-rate",
    arg: "<n>",
    env: "BROWSER_SERVICE_CDP_MESSAGE_RATE",
    default: 2_000,
    parse: perSecond(0, 1_000_000),
    help: "DevTools messages per second per connection; a client over it is slowed; 0 turns it off",
    doc: "DevTools messages per second each client connection may send; over it the client is slowed. `0` turns it off. See [DevTools](#devtools-cdp_ws_url).",
  }),
  setting({
    key: "cdpByteRate",
    option: "cdpLimits.byteRate",
    flag: "cdp-byte-rate-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_CDP_BYTE_RATE_MIB",
    default: 16 * MIB,
    parse: count(0, 4096, MIB),
    help: "DevTools MiB per second per connection; 0 turns it off",
    doc: "DevTools MiB per second each client connection may send, each character of JSON structure counted as 256 bytes; `0` turns it off.",
  }),
  setting({
    key: "cdpProjectMessageRate",
    option: "cdpLimits.projectMessageRate",
    flag: "cdp-project-message-rate",
    arg: "<n>",
    env: "BROWSER_SERVICE_CDP_PROJECT_MESSAGE_RATE",
    default: 4_000,
    parse: perSecond(0, 1_000_000),
    help: "DevTools messages per second of all connections of a project; 0 turns it off",
    doc: "DevTools messages per second all the connections of one project's browsers may send together; `0` turns it off.",
  }),
  setting({
    key: "cdpProjectByteRate",
    option: "cdpLimits.projectByteRate",
    flag: "cdp-project-byte-rate-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_CDP_PROJECT_BYTE_RATE_MIB",
    default: 32 * MIB,
    parse: count(0, 4096, MIB),
    help: "DevTools MiB per second of all connections of a project; 0 turns it off",
    doc: "DevTools MiB per second all the connections of one project's browsers may send together; `0` turns it off.",
  }),
  setting({
    key: "cdpMaxPending",
    option: "cdpLimits.maxPending",
    flag: "cdp-max-pending",
    arg: "<n>",
    env: "BROWSER_SERVICE_CDP_MAX_PENDING",
    default: 10_000,
    parse: count(1, 1_000_000),
    help: "DevTools commands per connection awaiting an answer; past it a command gets an error",
    doc: "A DevTools connection's commands awaiting the browser's answer; past it a command is answered with an error.",
  }),
  setting({
    key: "liveViewMaxViewers",
    option: "liveView.maxViewers",
    flag: "live-view-max-viewers",
    arg: "<n>",
    env: "BROWSER_SERVICE_LIVE_VIEW_MAX_VIEWERS",
    default: 8,
    parse: count(1, 1000),
    help: "people watching one browser's live view at once",
    doc: "People watching one browser's live view at once; the next is closed with `4429`. See [Live view](#live-view-live_view_url).",
  }),
  setting({
    key: "allowPrivateNetwork",
    flag: "allow-private-network",
    env: "BROWSER_SERVICE_ALLOW_PRIVATE_NETWORK",
    default: false,
    parse: SWITCH,
    help: "let browsers reach loopback, private and link-local addresses and this host (local development)",
    doc: "Let browsers reach loopback, private, shared, link-local and unique-local addresses and this host (local development; `npm start` in this repository passes it). See [Security](#security).",
  }),
  setting({
    key: "downloadBytes",
    flag: "download-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_DOWNLOAD_MIB",
    default: DEFAULT_DOWNLOAD_BYTES,
    parse: count(1, 65536, MIB),
    help: "most a browser may hold in its download folder",
    doc: "The most one browser holds in its download folder (a tmpfs inside its sandbox, so memory).",
  }),
  setting({
    key: "profileBytes",
    flag: "profile-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_PROFILE_MIB",
    default: DEFAULT_PROFILE_BYTES,
    parse: count(32, 65536, MIB),
    help: "most a browser may hold in its profile: site storage, caches (like downloads, held in memory)",
    doc: "The most one browser holds in its profile: its pages' storage, caches, crash reports, temporary files (a tmpfs inside its sandbox, so memory; 32 at least).",
  }),
  setting({
    key: "profileStateBytes",
    option: "profileStateBytes",
    flag: "profile-state-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_PROFILE_STATE_MIB",
    default: DEFAULT_PROFILE_STATE_BYTES,
    parse: mebibytes(1, 1024),
    help: "most a profile's saved state may hold; a browser's state past it is not saved, the profile kept",
    doc: "The most a profile's saved state holds (1 to 1024); a browser whose state is larger saves nothing. See [Profiles](#profiles).",
  }),
  setting({
    key: "authFlowSeconds",
    option: "authFlowSeconds",
    flag: "auth-flow-seconds",
    arg: "<n>",
    env: "BROWSER_SERVICE_AUTH_FLOW_SECONDS",
    default: 600,
    parse: count(10, 3600),
    help: "how long a managed auth login flow may run before it ends EXPIRED",
    doc: "How long an auth connection's login flow may run before it ends `EXPIRED` (10 to 3600). See [Auth connections](#auth-connections).",
  }),
  setting({
    key: "authCheckSeconds",
    option: "authCheckSeconds",
    flag: "auth-check-seconds",
    arg: "<n>",
    env: "BROWSER_SERVICE_AUTH_CHECK_SECONDS",
    default: undefined,
    shown: "each connection's `health_check_interval`",
    parse: count(1, 86400),
    help: "check every auth connection's session this often instead of its health_check_interval (tests, demos)",
    doc: "Check every auth connection's session this often instead (1 to 86400): for tests and demos.",
  }),
  setting({
    key: "shmBytes",
    flag: "shm-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_SHM_MIB",
    default: DEFAULT_SHM_BYTES,
    parse: count(64, 65536, MIB),
    help: "most a browser may hold in shared memory, /dev/shm",
    doc: "The most one browser holds in `/dev/shm` (a tmpfs inside its sandbox; 64 at least).",
  }),
  setting({
    key: "browserMemoryBytes",
    flag: "browser-memory-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_BROWSER_MEMORY_MIB",
    default: DEFAULT_RESOURCE_BUDGET.memoryBytes,
    parse: count(256, 1_048_576, MIB),
    help: "memory of one browser's processes together, its profile, downloads and /dev/shm included; past it the browser is ended, crashed with reason out_of_memory",
    doc: "Memory of one browser's processes together; past it the browser is ended (`out_of_memory`). See [Resource budgets](#resource-budgets).",
  }),
  setting({
    key: "browserMaxProcesses",
    flag: "browser-max-processes",
    arg: "<n>",
    env: "BROWSER_SERVICE_BROWSER_MAX_PROCESSES",
    default: DEFAULT_RESOURCE_BUDGET.maxProcesses,
    parse: count(256, 4_194_304),
    help: "processes and threads of one browser at once",
    doc: "Processes and threads of one browser at once. See [Resource budgets](#resource-budgets).",
  }),
  setting({
    key: "browserCpus",
    flag: "browser-cpus",
    arg: "<n>",
    env: "BROWSER_SERVICE_BROWSER_CPUS",
    default: DEFAULT_RESOURCE_BUDGET.cpus,
    shown: "the host's cores",
    parse: cores,
    help: "CPU time of one browser, in cores: 0.5, 1, 2.5 (each browser weighs as one under contention)",
    doc: "CPU time of one browser, in cores (0.5, 1, 2.5). See [Resource budgets](#resource-budgets).",
  }),
  setting({
    key: "unsafeNoResourceLimits",
    flag: "unsafe-no-resource-limits",
    env: "BROWSER_SERVICE_UNSAFE_NO_RESOURCE_LIMITS",
    default: false,
    parse: SWITCH,
    help: "run browsers without their budget where the server may not make cgroups: one page can take the host",
    doc: "Run browsers without their budget where the server may not make cgroups: one page can take the host.",
  }),
  setting({
    key: "sandboxUidBase",
    flag: "sandbox-uid-base",
    arg: "<n>",
    env: "BROWSER_SERVICE_SANDBOX_UID_BASE",
    default: DEFAULT_SANDBOX_UID_BASE,
    parse: count(1000, 4_294_000_000),
    help: "first host account id of browsers when run as root (65536 ids from it)",
    doc: "As root: the first of the 65,536 host account ids browsers take in turn (1000 or more).",
  }),
  setting({
    key: "unsafeNoSandbox",
    flag: "unsafe-no-sandbox",
    env: "BROWSER_SERVICE_UNSAFE_NO_SANDBOX",
    default: false,
    parse: SWITCH,
    help: "run browsers without their sandbox, as the server's account, seeing its files and network: a developer's own machine only",
    doc: "Run browsers without their sandbox, as the server's account: a developer's own machine only. Warned at every start; every record says `sandboxed: false`.",
  }),
  setting({
    key: "bodyIdleTimeoutSec",
    option: "bodyIdleTimeoutSec",
    flag: "body-idle-timeout-sec",
    arg: "<n>",
    env: "BROWSER_SERVICE_BODY_IDLE_TIMEOUT_SEC",
    default: 10,
    parse: count(0, 3600),
    help: "close a request whose body stalls this long; 0 turns it off",
    doc: "Close a request whose body stalls this long; `0` turns it off.",
  }),
  setting({
    key: "rateLimit",
    option: "rateLimits.perKey.rate",
    flag: "rate-limit",
    arg: "<n>",
    env: "BROWSER_SERVICE_RATE_LIMIT",
    default: 50,
    parse: perSecond(0, 1_000_000),
    help: "requests per second per API key, sustained; 0 turns it off",
    doc: "Requests per second per API key, sustained; `0` turns the limit off. See [Rate limits](#rate-limits).",
  }),
  setting({
    key: "rateLimitBurst",
    option: "rateLimits.perKey.burst",
    flag: "rate-limit-burst",
    arg: "<n>",
    env: "BROWSER_SERVICE_RATE_LIMIT_BURST",
    default: 100,
    parse: count(1, 1_000_000),
    help: "requests per API key at once",
    doc: "Requests per API key at once after a quiet spell.",
  }),
  setting({
    key: "authFailureLimit",
    option: "rateLimits.authFailuresPerAddress.rate",
    flag: "auth-failure-limit",
    arg: "<n>",
    env: "BROWSER_SERVICE_AUTH_FAILURE_LIMIT",
    default: 10,
    parse: perSecond(0, 1_000_000),
    help: "failed authentications per second per client address; 0 turns it off; over it, 429 for every request with a credential (requests without one are not counted)",
    doc: "Failed authentications per second per client address, sustained; `0` turns the limit off. Requests without a credential are not counted (live view connections are: see [Live view](#live-view-live_view_url)).",
  }),
  setting({
    key: "authFailureBurst",
    option: "rateLimits.authFailuresPerAddress.burst",
    flag: "auth-failure-burst",
    arg: "<n>",
    env: "BROWSER_SERVICE_AUTH_FAILURE_BURST",
    default: 20,
    parse: count(1, 1_000_000),
    help: "failed authentications per address at once",
    doc: "Failed authentications per address at once.",
  }),
  setting({
    key: "maxClientConnections",
    option: "maxClientConnections",
    flag: "max-client-connections",
    arg: "<n>",
    env: "BROWSER_SERVICE_MAX_CLIENT_CONNECTIONS",
    default: 256,
    parse: count(0, 1_000_000),
    help: "connections each client address may hold open at once; 0 turns it off",
    doc: "Connections each client address (IPv6: /64) may hold open at once; past it a new one is answered `429 rate_limited` and closed. A trusted proxy's connections are not counted; a browser's, once its first request names it, count against that browser. `0` turns it off. See [HTTP edges](#http-edges).",
  }),
  setting({
    key: "trustProxy",
    flag: "trust-proxy",
    arg: "<list>",
    env: "BROWSER_SERVICE_TRUST_PROXY",
    default: [],
    shown: "none: the TCP peer is the client",
    parse: proxies,
    help: "reverse proxies whose X-Forwarded-For names the client: addresses, CIDR ranges, loopback, linklocal, uniquelocal, comma-separated",
    doc: "The reverse proxies in front of the server, comma-separated: IP addresses, CIDR ranges (`10.0.0.0/8`, `fd00::/8`), `loopback`, `linklocal`, `uniquelocal`. A request from one of them counts as the client its `X-Forwarded-For` names; from any other peer the header is ignored. See [Rate limits](#rate-limits).",
  }),
  setting({
    key: "warmBrowsers",
    option: "warmBrowsers",
    flag: "warm-browsers",
    arg: "<n>",
    env: "BROWSER_SERVICE_WARM_BROWSERS",
    default: 2,
    parse: count(0, 64),
    help: "browsers kept launched and ready for POST /browsers; 0 turns it off; they are not sessions and count against no limit",
    doc: "Browsers kept launched and ready for `POST /browsers` (0 to 64); `0` turns the pool off. See [Warm browsers](#warm-browsers).",
  }),
  setting({
    key: "minFreeMemoryMib",
    option: "minFreeMemoryMib",
    flag: "min-free-memory-mib",
    arg: "<n>",
    env: "BROWSER_SERVICE_MIN_FREE_MEMORY_MIB",
    default: 512,
    parse: count(0, 1_048_576),
    help: "MiB of memory the host keeps available: below it POST /browsers is 503 host_memory_low; 0 turns it off",
    doc: "MiB of memory the host keeps available: below it `POST /browsers` is `503 host_memory_low`; `0` turns it off.",
  }),
  setting({
    key: "metricsPort",
    option: "metrics.port",
    flag: "metrics-port",
    arg: "<n>",
    env: "BROWSER_SERVICE_METRICS_PORT",
    default: 0,
    shown: "none",
    parse: count(0, 65535),
    help: "serve GET /metrics (Prometheus text) on this port, apart from the API",
    doc: "Serve `GET /metrics` (Prometheus text) on a listener of its own, on this port; `0` serves none. See [Metrics](#metrics).",
  }),
  setting({
    key: "metricsHost",
    flag: "metrics-host",
    arg: "<addr>",
    env: "BROWSER_SERVICE_METRICS_HOST",
    default: "127.0.0.1",
    parse: TEXT,
    help: "interface of the metrics' listener",
    doc: "Interface of the metrics' listener: keep it private, or behind a proxy that checks who scrapes.",
  }),
  setting({
    key: "drainSeconds",
    flag: "drain-seconds",
    arg: "<n>",
    env: "BROWSER_SERVICE_DRAIN_SECONDS",
    default: 0,
    parse: count(0, 86_400),
    help: "on SIGTERM, take no new browsers and let the running ones go on this long before ending them",
    doc: "On SIGTERM, drain for up to this many seconds before ending the browsers left: not ready, no new browsers (other nodes take them), the running ones served until they end. `0`: end them at once (SIGINT always does). Keep it below the stop timeout of what runs the server. See [Drain](#drain).",
  }),
] as const satisfies readonly AnySetting[];

// Every field of ServerConfig has its setting: the compiler names any that has none.
type Unset = Exclude<keyof ServerConfig, (typeof SETTINGS)[number]["key"]>;
const everyFieldSet: [Unset] extends [never] ? true : Unset = true;
void everyFieldSet;

/**
 * Checks the options an embedder passes to `createServer` by the same rules as the
 * command line's (each setting's {@link Setting.option}): a value out of its setting's
 * range throws a `RangeError` naming the option, before anything is opened.
 */
export function checkServerOptions(options: object): void {
  for (const each of SETTINGS as readonly AnySetting[]) {
    if (each.option === undefined || each.parse.check === undefined) continue;
    let value: unknown = options;
    for (const part of each.option.split(".")) value = value === undefined || value === null ? undefined : (value as Record<string, unknown>)[part];
    if (value !== undefined) each.parse.check(value, each.option);
  }
}

/** The defaults of {@link ServerConfig}. */
export const DEFAULT_CONFIG: ServerConfig = Object.fromEntries(SETTINGS.map((each) => [each.key, each.default])) as unknown as ServerConfig;

/** A setting's default as a person reads it, in its flag's unit; `undefined` when it has none to show. */
function shownDefault(each: AnySetting): string | undefined {
  if (each.shown !== undefined) return each.shown.replaceAll("`", "");
  const value: unknown = each.default;
  if (value === undefined || value === false || (Array.isArray(value) && value.length === 0)) return undefined;
  return typeof value === "number" ? String(value / ((each.parse as Parser<number>).unit ?? 1)) : String(value);
}

const HELP_WIDTH = 120;
const HELP_INDENT = 59;

/** The `--help` lines of every setting: flag and variable, then what it is, its default and range, wrapped. */
export function settingsHelp(): string {
  return SETTINGS.map((each: AnySetting) => {
    const head = `  --${each.flag}${each.arg === undefined ? "" : ` ${each.arg}`}`;
    const named = `${head.length < 24 ? head.padEnd(24) : `${head}  `}${each.env}`;
    const shown = shownDefault(each);
    // A value reads "default 10"; words read "default: the host name".
    const notes = [shown === undefined ? undefined : `default${each.shown === undefined ? "" : ":"} ${shown}`, each.parse.range].filter(
      (note) => note !== undefined,
    );
    const words = `${each.help}${notes.length === 0 ? "" : ` (${notes.join("; ")})`}`.split(" ");
    const lines: string[] = [];
    let line = named.length + 2 <= HELP_INDENT ? named.padEnd(HELP_INDENT) : named;
    if (line.length > HELP_INDENT) {
      lines.push(line);
      line = " ".repeat(HELP_INDENT);
    }
    for (const word of words) {
      if (line.length > HELP_INDENT && line.length + 1 + word.length > HELP_WIDTH) {
        lines.push(line);
        line = " ".repeat(HELP_INDENT);
      }
      line += line.length > HELP_INDENT ? ` ${word}` : word;
    }
    lines.push(line);
    return lines.join("\n");
  }).join("\n");
}

/** The README's table of settings (Markdown): flag, environment variable, default, meaning. */
export function settingsTable(): string {
  const rows = SETTINGS.map((each: AnySetting) => {
    const value: unknown = each.default;
    const unit = (each.parse as Parser<number>).unit ?? 1;
    const shown =
      each.shown ??
      (each.parse === SWITCH
        ? "off"
        : value === undefined || (Array.isArray(value) && value.length === 0)
          ? "none"
          : `\`${typeof value === "number" ? value / unit : String(value)}\``);
    return `| \`--${each.flag}${each.arg === undefined ? "" : ` ${each.arg}`}\` | \`${each.env}\` | ${shown} | ${each.doc} |`;
  });
  return ["| Flag | Environment variable | Default | Meaning |", "| - | - | - | - |", ...rows, "| `-h`, `--help` | | | Prints the flags. |"].join("\n");
}
