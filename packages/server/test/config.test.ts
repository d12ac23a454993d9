import { readdirSync, readFileSync, rmSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { createClient } from "@browser-service/client";
import { describe, expect, it } from "vitest";
import { SETTINGS, settingsTable } from "../src/app/settings.js";
import { ConfigError, createServer, DEFAULT_CONFIG, FixturesError, HELP_TEXT, parseCommand, parseFixtures, runCli } from "../src/index.js";
import { spawnServer } from "./support/child-server.js";
import { managedAuth, writeFixtures } from "./support/fixtures.js";
import { startTestServer, tempDataDir } from "./support/test-server.js";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: (text: string) => void out.push(text), stderr: (text: string) => void err.push(text) }, out, err };
}

describe("configuration", () => {
  it("defaults to 127.0.0.1:8787, .data, plan limit 10, projects enabled", () => {
    expect(parseCommand([], {})).toEqual({ kind: "serve", config: DEFAULT_CONFIG });
    // Other settings' defaults are checked with their features (rate-limit.test.ts, ...).
    expect(DEFAULT_CONFIG).toMatchObject({ port: 8787, host: "127.0.0.1", dataDir: ".data", planLimit: 10, fixtures: undefined, projectsDisabled: false });
  });

  it("reads the environment, and flags beat it", () => {
    const env = {
      BROWSER_SERVICE_PORT: "9000",
      BROWSER_SERVICE_HOST: "0.0.0.0",
      BROWSER_SERVICE_DATA_DIR: "/srv/data",
      BROWSER_SERVICE_PLAN_LIMIT: "25",
      BROWSER_SERVICE_FIXTURES: "/srv/fixtures.json",
      BROWSER_SERVICE_PROJECTS_DISABLED: "true",
    };
    expect(parseCommand([], env)).toMatchObject({
      kind: "serve",
      config: { port: 9000, host: "0.0.0.0", dataDir: "/srv/data", planLimit: 25, fixtures: "/srv/fixtures.json", projectsDisabled: true },
    });
    expect(parseCommand(["--port", "1234", "--plan-limit", "3", "--data-dir", "d", "--host", "::1"], env)).toMatchObject({
      config: { port: 1234, planLimit: 3, dataDir: "d", host: "::1" },
    });
    expect(parseCommand(["--projects-disabled"], {})).toMatchObject({ config: { projectsDisabled: true } });
  });

  it("reads the DevTools endpoint and body-timeout settings: defaults, environment, flags", () => {
    const settings = (config: {
      publicUrl?: unknown;
      cdpMaxClients?: unknown;
      cdpMaxMessageBytes?: unknown;
      cdpMaxBufferedBytes?: unknown;
      bodyIdleTimeoutSec?: unknown;
    }) => ({
      publicUrl: config.publicUrl,
      cdpMaxClients: config.cdpMaxClients,
      cdpMaxMessageBytes: config.cdpMaxMessageBytes,
      cdpMaxBufferedBytes: config.cdpMaxBufferedBytes,
      bodyIdleTimeoutSec: config.bodyIdleTimeoutSec,
    });
    const MIB = 1024 * 1024;
    expect(settings(DEFAULT_CONFIG)).toEqual({
      publicUrl: undefined,
      cdpMaxClients: 8,
      cdpMaxMessageBytes: 16 * MIB,
      cdpMaxBufferedBytes: 64 * MIB,
      bodyIdleTimeoutSec: 10,
    });
    const env = {
      BROWSER_SERVICE_PUBLIC_URL: "https://browsers.example.org",
      BROWSER_SERVICE_CDP_MAX_CLIENTS: "3",
      BROWSER_SERVICE_CDP_MAX_MESSAGE_MIB: "2",
      BROWSER_SERVICE_CDP_MAX_BUFFER_MIB: "5",
      BROWSER_SERVICE_BODY_IDLE_TIMEOUT_SEC: "0",
    };
    const fromEnv = parseCommand([], env);
    expect(fromEnv.kind === "serve" && settings(fromEnv.config)).toEqual({
      publicUrl: "https://browsers.example.org",
      cdpMaxClients: 3,
      cdpMaxMessageBytes: 2 * MIB,
      cdpMaxBufferedBytes: 5 * MIB,
      bodyIdleTimeoutSec: 0,
    });
    const fromFlags = parseCommand(
      ["--public-url", "http://h:1", "--cdp-max-clients", "1", "--cdp-max-message-mib", "1", "--cdp-max-buffer-mib", "1", "--body-idle-timeout-sec", "30"],
      env,
    );
    expect(fromFlags.kind === "serve" && settings(fromFlags.config)).toEqual({
      publicUrl: "http://h:1",
      cdpMaxClients: 1,
      cdpMaxMessageBytes: MIB,
      cdpMaxBufferedBytes: MIB,
      bodyIdleTimeoutSec: 30,
    });
    expect(() => parseCommand(["--cdp-max-clients", "0"], {})).toThrow(/--cdp-max-clients must be an integer from 1 to 1000/);
    expect(() => parseCommand([], { BROWSER_SERVICE_CDP_MAX_MESSAGE_MIB: "1.5" })).toThrow(/BROWSER_SERVICE_CDP_MAX_MESSAGE_MIB/);
    expect(() => parseCommand(["--body-idle-timeout-sec", "-1"], {})).toThrow(/--body-idle-timeout-sec/);
  });

  it("reads the sandbox settings: sandboxed and public-only by default; --allow-private-network, --download-mib, --profile-mib, --sandbox-uid-base, --unsafe-no-sandbox", () => {
    const sandbox = (command: ReturnType<typeof parseCommand>) =>
      command.kind === "serve"
        ? {
            unsafeNoSandbox: command.config.unsafeNoSandbox,
            allowPrivateNetwork: command.config.allowPrivateNetwork,
            downloadBytes: command.config.downloadBytes,
            profileBytes: command.config.profileBytes,
            shmBytes: command.config.shmBytes,
            sandboxUidBase: command.config.sandboxUidBase,
          }
        : undefined;
    const MIB = 1024 * 1024;
    expect(sandbox(parseCommand([], {}))).toEqual({
      unsafeNoSandbox: false,
      allowPrivateNetwork: false,
      downloadBytes: 256 * MIB,
      profileBytes: 512 * MIB,
      shmBytes: 256 * MIB,
      sandboxUidBase: 2_000_000_000,
    });
    const env = {
      BROWSER_SERVICE_UNSAFE_NO_SANDBOX: "1",
      BROWSER_SERVICE_ALLOW_PRIVATE_NETWORK: "true",
      BROWSER_SERVICE_DOWNLOAD_MIB: "8",
      BROWSER_SERVICE_PROFILE_MIB: "64",
      BROWSER_SERVICE_SHM_MIB: "128",
      BROWSER_SERVICE_SANDBOX_UID_BASE: "300000",
    };
    expect(sandbox(parseCommand([], env))).toEqual({
      unsafeNoSandbox: true,
      allowPrivateNetwork: true,
      downloadBytes: 8 * MIB,
      profileBytes: 64 * MIB,
      shmBytes: 128 * MIB,
      sandboxUidBase: 300_000,
    });
    expect(sandbox(parseCommand(["--allow-private-network", "--download-mib", "2", "--profile-mib", "40", "--sandbox-uid-base", "5000"], {}))).toEqual({
      unsafeNoSandbox: false,
      allowPrivateNetwork: true,
      downloadBytes: 2 * MIB,
      profileBytes: 40 * MIB,
      shmBytes: 256 * MIB,
      sandboxUidBase: 5000,
    });
    expect(() => parseCommand(["--profile-mib", "16"], {})).toThrow(/--profile-mib must be an integer from 32/);
    expect(() => parseCommand([], { BROWSER_SERVICE_ALLOW_PRIVATE_NETWORK: "maybe" })).toThrow(/BROWSER_SERVICE_ALLOW_PRIVATE_NETWORK must be true or false/);
    // Below 1000 lie the system's own accounts; a base there could hand a browser one of them.
    expect(() => parseCommand(["--sandbox-uid-base", "0"], {})).toThrow(/--sandbox-uid-base must be an integer from 1000/);
    expect(() => parseCommand(["--download-mib", "0"], {})).toThrow(/--download-mib/);
  });

  it("reads --max-client-connections: 256 by default, 0 turns it off", () => {
    const limit = (command: ReturnType<typeof parseCommand>) => (command.kind === "serve" ? command.config.maxClientConnections : undefined);
    expect(limit(parseCommand([], {}))).toBe(256);
    expect(limit(parseCommand([], { BROWSER_SERVICE_MAX_CLIENT_CONNECTIONS: "0" }))).toBe(0);
    expect(limit(parseCommand(["--max-client-connections", "32"], { BROWSER_SERVICE_MAX_CLIENT_CONNECTIONS: "0" }))).toBe(32);
    expect(() => parseCommand(["--max-client-connections", "-1"], {})).toThrow(/--max-client-connections/);
  });

  it("reads --trust-proxy: none by default, else addresses, CIDR ranges and proxy-addr's names; never 'everyone' nor a hop count", () => {
    const trustProxy = (command: ReturnType<typeof parseCommand>) => (command.kind === "serve" ? command.config.trustProxy : undefined);
    expect(DEFAULT_CONFIG.trustProxy).toEqual([]);
    const env = { BROWSER_SERVICE_TRUST_PROXY: " 10.0.0.1, 192.168.0.0/16 ," };
    expect(trustProxy(parseCommand([], env))).toEqual(["10.0.0.1", "192.168.0.0/16"]);
    expect(trustProxy(parseCommand(["--trust-proxy", "loopback,fd00::/8"], env))).toEqual(["loopback", "fd00::/8"]);
    expect(trustProxy(parseCommand(["--trust-proxy", ""], env))).toEqual([]);
    // Each would let a client that reaches the server directly write its own X-Forwarded-For.
    for (const value of ["true", "*", "1", "0.0.0.0/33", "proxy.example.org"]) {
      expect(() => parseCommand(["--trust-proxy", value], {})).toThrow(ConfigError);
    }
    expect(() => parseCommand(["--trust-proxy", "10.0.0.0/8,true"], {})).toThrow(/--trust-proxy: .*"true"/);
    expect(() => parseCommand([], { BROWSER_SERVICE_TRUST_PROXY: "2" })).toThrow(/BROWSER_SERVICE_TRUST_PROXY/);
    for (const word of ["--trust-proxy", "BROWSER_SERVICE_TRUST_PROXY"]) expect(HELP_TEXT).toContain(word);
  });

  it("reads the DevTools budgets: generous defaults, 0 turns a rate off, the flag beats the environment", () => {
    const MIB = 1024 * 1024;
    const budgets = (command: ReturnType<typeof parseCommand>) =>
      command.kind === "serve"
        ? {
            messageRate: command.config.cdpMessageRate,
            byteRate: command.config.cdpByteRate,
            projectMessageRate: command.config.cdpProjectMessageRate,
            projectByteRate: command.config.cdpProjectByteRate,
            maxPending: command.config.cdpMaxPending,
          }
        : undefined;
    expect(budgets(parseCommand([], {}))).toEqual({
      messageRate: 2000,
      byteRate: 16 * MIB,
      projectMessageRate: 4000,
      projectByteRate: 32 * MIB,
      maxPending: 10_000,
    });
    const env = {
      BROWSER_SERVICE_CDP_MESSAGE_RATE: "0",
      BROWSER_SERVICE_CDP_BYTE_RATE_MIB: "0",
      BROWSER_SERVICE_CDP_PROJECT_MESSAGE_RATE: "7",
      BROWSER_SERVICE_CDP_PROJECT_BYTE_RATE_MIB: "3",
      BROWSER_SERVICE_CDP_MAX_PENDING: "9",
    };
    expect(budgets(parseCommand([], env))).toEqual({ messageRate: 0, byteRate: 0, projectMessageRate: 7, projectByteRate: 3 * MIB, maxPending: 9 });
    const flags = [
      "--cdp-message-rate",
      "10",
      "--cdp-byte-rate-mib",
      "2",
      "--cdp-project-message-rate",
      "20",
      "--cdp-project-byte-rate-mib",
      "4",
      "--cdp-max-pending",
      "1",
    ];
    expect(budgets(parseCommand(flags, env))).toEqual({ messageRate: 10, byteRate: 2 * MIB, projectMessageRate: 20, projectByteRate: 4 * MIB, maxPending: 1 });
    expect(() => parseCommand(["--cdp-max-pending", "0"], {})).toThrow(/--cdp-max-pending must be an integer from 1 to 1000000/);
    expect(() => parseCommand([], { BROWSER_SERVICE_CDP_BYTE_RATE_MIB: "0.5" })).toThrow(/BROWSER_SERVICE_CDP_BYTE_RATE_MIB/);
    for (const word of [
      "--cdp-message-rate",
      "--cdp-byte-rate-mib",
      "--cdp-project-message-rate",
      "--cdp-project-byte-rate-mib",
      "--cdp-max-pending",
      "BROWSER_SERVICE_CDP_MAX_PENDING",
    ])
      expect(HELP_TEXT).toContain(word);
  });

  it("reads the warm pool's size: 2 by default, 0 turns it off, the flag beats the environment", () => {
    expect(DEFAULT_CONFIG.warmBrowsers).toBe(2);
    const fromEnv = parseCommand([], { BROWSER_SERVICE_WARM_BROWSERS: "0" });
    expect(fromEnv.kind === "serve" && fromEnv.config.warmBrowsers).toBe(0);
    const fromFlag = parseCommand(["--warm-browsers", "4"], { BROWSER_SERVICE_WARM_BROWSERS: "0" });
    expect(fromFlag.kind === "serve" && fromFlag.config.warmBrowsers).toBe(4);
    expect(() => parseCommand(["--warm-browsers", "65"], {})).toThrow(/--warm-browsers must be an integer from 0 to 64/);
    expect(() => parseCommand([], { BROWSER_SERVICE_WARM_BROWSERS: "two" })).toThrow(/BROWSER_SERVICE_WARM_BROWSERS/);
  });

  it("reads --database and --node-id: SQLite and the host name by default, the flag beats the environment", () => {
    const defaults = parseCommand([], {});
    expect(defaults.kind === "serve" && defaults.config.database).toBeUndefined();
    expect(defaults.kind === "serve" && defaults.config.nodeId).toMatch(/^[A-Za-z0-9._-]{1,64}$/);
    const url = "postgres://app:secret@db.internal:5432/browsers";
    const fromEnv = parseCommand([], { BROWSER_SERVICE_DATABASE_URL: url, BROWSER_SERVICE_NODE_ID: "node-a" });
    expect(fromEnv.kind === "serve" && [fromEnv.config.database, fromEnv.config.nodeId]).toEqual([url, "node-a"]);
    const fromFlag = parseCommand(["--database", "postgresql:///browsers?host=/run/pg", "--node-id", "node.b_2"], { BROWSER_SERVICE_DATABASE_URL: url });
    expect(fromFlag.kind === "serve" && [fromFlag.config.database, fromFlag.config.nodeId]).toEqual(["postgresql:///browsers?host=/run/pg", "node.b_2"]);
    expect(parseCommand(["keys", "create", "--database", url], {})).toMatchObject({ kind: "keys-create", config: { database: url } });
    // The refusal never echoes the value: a URL may carry a password.
    expect(() => parseCommand(["--database", "mysql://root:hunter2@db/x"], {})).toThrow(/--database must be a postgres:\/\/ or postgresql:\/\/ URL/);
    expect(() => parseCommand(["--database", "mysql://root:hunter2@db/x"], {})).not.toThrow(/hunter2/);
    expect(() => parseCommand([], { BROWSER_SERVICE_DATABASE_URL: "/var/lib/db.sqlite" })).toThrow(/BROWSER_SERVICE_DATABASE_URL/);
    expect(() => parseCommand(["--node-id", "a b"], {})).toThrow(/--node-id must be 1 to 64/);
    expect(() => parseCommand([], { BROWSER_SERVICE_NODE_ID: "x".repeat(65) })).toThrow(/BROWSER_SERVICE_NODE_ID/);
  });

  it("reads the nodes' secret and, while it is rotated, another accepted beside it: each at least 32 characters", () => {
    const url = "postgres://db/browsers";
    const secret = "s".repeat(32);
    const next = "n".repeat(40);
    const rotating = parseCommand(["--database", url, "--node-secret", secret], { BROWSER_SERVICE_NODE_SECRET_ACCEPT: next });
    expect(rotating.kind === "serve" && [rotating.config.nodeSecret, rotating.config.nodeSecretAccept]).toEqual([secret, next]);
    const plain = parseCommand(["--database", url], { BROWSER_SERVICE_NODE_SECRET: secret });
    expect(plain.kind === "serve" && [plain.config.nodeSecret, plain.config.nodeSecretAccept]).toEqual([secret, undefined]);
    expect(() => parseCommand(["--database", url, "--node-secret", secret, "--node-secret-accept", "short"], {})).toThrow(
      /--node-secret-accept must be at least 32/,
    );
    expect(() => parseCommand(["--database", url, "--node-secret-accept", next], {})).toThrow(/--node-secret-accept needs --node-secret/);
    expect(HELP_TEXT).toContain("--node-secret-accept");
  });

  it("reads the secrets key and its previous one: 64 hex characters each, never echoed when wrong", () => {
    const key = "a".repeat(64);
    const previous = "B".repeat(64);
    const given = parseCommand(["--secrets-key", key], { BROWSER_SERVICE_SECRETS_KEY_PREVIOUS: previous });
    expect(given.kind === "serve" && [given.config.secretsKey, given.config.secretsKeyPrevious]).toEqual([key, previous]);
    const fromEnv = parseCommand([], { BROWSER_SERVICE_SECRETS_KEY: key });
    expect(fromEnv.kind === "serve" && [fromEnv.config.secretsKey, fromEnv.config.secretsKeyPrevious]).toEqual([key, undefined]);
    const none = parseCommand([], {});
    expect(none.kind === "serve" && none.config.secretsKey).toBeUndefined();
    const almost = `${"c".repeat(63)}z`;
    expect(() => parseCommand(["--secrets-key", almost], {})).toThrow(ConfigError);
    expect(() => parseCommand(["--secrets-key", almost], {})).toThrow(/--secrets-key is not a secrets key: it must be 64 hex characters/);
    expect(() => parseCommand(["--secrets-key", almost], {})).not.toThrow(new RegExp(almost));
    expect(() => parseCommand([], { BROWSER_SERVICE_SECRETS_KEY_PREVIOUS: "short" })).toThrow(/BROWSER_SERVICE_SECRETS_KEY_PREVIOUS is not a secrets key/);
    expect(HELP_TEXT).toContain("--secrets-key-previous");
  });

  it("refuses unusable values with a ConfigError that says what is expected", () => {
    expect(() => parseCommand(["--port", "http"], {})).toThrow(ConfigError);
    expect(() => parseCommand(["--port", "70000"], {})).toThrow(/--port must be an integer from 0 to 65535/);
    expect(() => parseCommand([], { BROWSER_SERVICE_PLAN_LIMIT: "-1" })).toThrow(/BROWSER_SERVICE_PLAN_LIMIT/);
    expect(() => parseCommand([], { BROWSER_SERVICE_PROJECTS_DISABLED: "maybe" })).toThrow(/true or false/);
    expect(() => parseCommand(["--colour"], {})).toThrow(/--help/);
    expect(() => parseCommand(["serve"], {})).toThrow(/Unknown command/);
    expect(() => parseCommand(["--project", "x"], {})).toThrow(/keys create/);
  });

  it("parses keys create with and without --project", () => {
    expect(parseCommand(["keys", "create", "--data-dir", "d"], {})).toMatchObject({ kind: "keys-create", project: undefined, config: { dataDir: "d" } });
    expect(parseCommand(["keys", "create", "--project", "proj_x"], {})).toMatchObject({ kind: "keys-create", project: "proj_x" });
  });

  it("reads each browser's resource budget: 2048 MiB, 1024 processes, the host's cores by default; the flag beats the environment", () => {
    const serve = (argv: string[], env: NodeJS.ProcessEnv) => {
      const command = parseCommand(argv, env);
      if (command.kind !== "serve") throw new Error("not serve");
      const { browserMemoryBytes, browserMaxProcesses, browserCpus, unsafeNoResourceLimits } = command.config;
      return { browserMemoryBytes, browserMaxProcesses, browserCpus, unsafeNoResourceLimits };
    };
    expect(serve([], {})).toEqual({
      browserMemoryBytes: 2048 * 1024 * 1024,
      browserMaxProcesses: 1024,
      browserCpus: availableParallelism(),
      unsafeNoResourceLimits: false,
    });
    expect(
      serve(["--browser-memory-mib", "4096", "--browser-cpus", "2.5"], {
        BROWSER_SERVICE_BROWSER_MEMORY_MIB: "512",
        BROWSER_SERVICE_BROWSER_MAX_PROCESSES: "300",
        BROWSER_SERVICE_UNSAFE_NO_RESOURCE_LIMITS: "true",
      }),
    ).toEqual({ browserMemoryBytes: 4096 * 1024 * 1024, browserMaxProcesses: 300, browserCpus: 2.5, unsafeNoResourceLimits: true });
    for (const bad of ["0", "-1", "1.234", "lots", "1025", "0.001"]) {
      expect(() => parseCommand([`--browser-cpus=${bad}`], {}), bad).toThrow(/--browser-cpus must be a number of cores from 0.01 to 1024/);
    }
    expect(() => parseCommand(["--browser-memory-mib", "128"], {})).toThrow(/--browser-memory-mib must be an integer from 256/);
    expect(() => parseCommand(["--browser-max-processes", "10"], {})).toThrow(/--browser-max-processes must be an integer from 256/);
  });

  it("--help prints every flag and its environment variable", async () => {
    const { io, out } = capture();
    expect(await runCli(["--help"], io)).toBe(0);
    expect(out.join("")).toBe(`${HELP_TEXT}\n`);
    for (const word of [
      "--port",
      "--host",
      "--data-dir",
      "--database",
      "BROWSER_SERVICE_DATABASE_URL",
      "--node-id",
      "--plan-limit",
      "--fixtures",
      "--projects-disabled",
      "BROWSER_SERVICE_PORT",
      "--browser-memory-mib",
      "BROWSER_SERVICE_BROWSER_MAX_PROCESSES",
      "--browser-cpus",
      "--unsafe-no-resource-limits",
      "keys create",
      "CHROMIUM_PATH",
    ])
      expect(HELP_TEXT).toContain(word);
  });

  it("declares each setting once: every field of the config is a flag and a variable, in --help and in the README as declared", () => {
    const flags = SETTINGS.map((each) => each.flag);
    expect(new Set(flags).size).toBe(flags.length);
    expect(new Set(SETTINGS.map((each) => each.env)).size).toBe(flags.length);
    expect(Object.keys(DEFAULT_CONFIG).sort()).toEqual(SETTINGS.map((each) => each.key).sort());
    for (const each of SETTINGS) {
      expect(HELP_TEXT).toContain(`--${each.flag}`);
      expect(HELP_TEXT).toContain(each.env);
      // Each variable is read, and beaten by its flag: a value its parser refuses names the one it came from.
      const refused = (() => {
        try {
          (each.parse.read as (raw: string, name: string) => unknown)("\u0000bad", each.env);
          return false;
        } catch {
          return true;
        }
      })();
      if (each.arg !== undefined && refused) {
        expect(() => parseCommand([], { [each.env]: "\u0000bad" }), each.env).toThrow(each.env);
        expect(() => parseCommand([`--${each.flag}=\u0000bad`], { [each.env]: "\u0000bad" }), each.flag).toThrow(`--${each.flag}`);
      }
    }
    // The README's table is the one the settings make (pnpm --filter @browser-service/server settings-table writes it).
    expect(readFileSync(new URL("../README.md", import.meta.url), "utf8")).toContain(settingsTable());
  });

  it("exits 2 on a bad flag, naming it", async () => {
    const { io, err } = capture();
    expect(await runCli(["--port", "x"], io)).toBe(2);
    expect(err.join("")).toContain("--port");
  });
});

describe("keys create", () => {
  it("issues org-wide and project-scoped keys into a stopped server's data directory", async () => {
    const first = await startTestServer();
    const staging = await first.client().projects.create({ name: "staging" });
    await first.close({ keepData: true });

    const orgWide = capture();
    expect(await runCli(["keys", "create", "--data-dir", first.dataDir], orgWide.io)).toBe(0);
    const orgKey = orgWide.out.join("").trim();
    expect(orgKey).toMatch(/^bsk_[0-9A-Za-z]{32}$/);
    expect(orgWide.err.join("")).toContain("org-wide");
    const scoped = capture();
    expect(await runCli(["keys", "create", "--project", "staging", "--data-dir", first.dataDir], scoped.io)).toBe(0);
    const scopedKey = scoped.out.join("").trim();
    const unknown = capture();
    expect(await runCli(["keys", "create", "--project", "nope", "--data-dir", first.dataDir], unknown.io)).toBe(1);
    expect(unknown.err.join("")).toContain("unknown_project");

    const t = await startTestServer({ dataDir: first.dataDir });
    try {
      expect((await t.client({ apiKey: orgKey }).projects.list()).length).toBe(2);
      expect((await t.client({ apiKey: scopedKey }).projects.list()).map((project) => project.id)).toEqual([staging.id]);
      expect(t.mismatches).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it("asks a running server for the key, which then works at once", async () => {
    const dataDir = tempDataDir();
    const server = await spawnServer(dataDir);
    try {
      const admin = createClient({ baseUrl: server.url, apiKey: server.printedKey as string, projectId: null });
      const staging = await admin.projects.create({ name: "staging" });
      const scoped = capture();
      expect(await runCli(["keys", "create", "--project", staging.id, "--data-dir", dataDir], scoped.io)).toBe(0);
      const key = scoped.out.join("").trim();
      expect((await createClient({ baseUrl: server.url, apiKey: key, projectId: null }).projects.list()).map((project) => project.name)).toEqual(["staging"]);
      const unknown = capture();
      expect(await runCli(["keys", "create", "--project", "nope", "--data-dir", dataDir], unknown.io)).toBe(1);
      expect(unknown.err.join("")).toContain("unknown_project");
      expect(readdirSync(join(dataDir, "key-requests"))).toEqual([]);
    } finally {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it("refuses a data directory the server never initialized", async () => {
    const dataDir = tempDataDir();
    const { io, err } = capture();
    expect(await runCli(["keys", "create", "--data-dir", dataDir], io)).toBe(1);
    expect(err.join("")).toContain("start the server there once first");
    rmSync(dataDir, { recursive: true, force: true });
  });
});

describe("first start", () => {
  it("creates the organization, Default and an org-wide key once; later starts create nothing", async () => {
    const first = await startTestServer();
    expect(first.server.firstStart).toMatchObject({ project: { name: "Default" }, key: { projectId: null } });
    await first.close({ keepData: true });
    const second = await createServer({ dataDir: first.dataDir, launcher: { launch: () => Promise.reject(new Error("unused")) } });
    try {
      expect(second.firstStart).toBeUndefined();
    } finally {
      await second.close();
      rmSync(first.dataDir, { recursive: true, force: true });
    }
  });
});

describe("fixtures", () => {
  it("loads auth connections per project (creating missing projects) and serves them scoped", async () => {
    const dataDir = tempDataDir();
    const record = managedAuth("mac_1", {
      flow_status: "IN_PROGRESS",
      flow_step: "AWAITING_INPUT",
      flow_type: "LOGIN",
      hosted_url: "https://login.example.org/hosted",
      live_view_url: "https://live.example.org/view",
      discovered_fields: [{ name: "email", type: "email", label: "Email", selector: "#email" }],
      allowed_domains: ["login.example.org"],
    });
    const fixtures = writeFixtures(dataDir, { auth_connections: [{ project: "shop", ...record }], pool_reservations: [] });
    const t = await startTestServer({ dataDir, fixtures });
    try {
      const client = t.client();
      const shop = await client.projects.get("shop");
      expect(await client.authConnections.get("mac_1", { projectId: shop.id })).toEqual(record);
      await expect(client.authConnections.get("mac_1")).rejects.toMatchObject({ status: 404, code: "not_found" });
      expect(t.mismatches).toEqual([]);
    } finally {
      await t.close();
    }
  });

  it("names every problem of a bad fixtures file by JSON pointer", () => {
    const text = JSON.stringify({
      auth_connections: [
        { project: "p", ...managedAuth("a", { status: "MAYBE" }) },
        { ...managedAuth("b") },
        { project: "p", ...managedAuth("a") },
        { project: "p", ...managedAuth("a") },
      ],
      pool_reservations: [{ project: "p", name: "x", size: -1, color: "red" }],
      browsers: [],
    });
    let error: unknown;
    try {
      parseFixtures(text, "f.json");
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(FixturesError);
    const message = (error as Error).message;
    for (const part of [
      "/browsers is not a fixtures section",
      "/auth_connections/0: /status",
      "/auth_connections/1/project",
      '/auth_connections/3/id "a" is used',
      "/pool_reservations/0/size",
      "/pool_reservations/0/color",
    ]) {
      expect(message).toContain(part);
    }
    expect(() => parseFixtures("{", "broken.json")).toThrow(/broken.json is not JSON/);
  });

  it("a bad fixtures file stops the start and leaves the data directory usable", async () => {
    const dataDir = tempDataDir();
    const fixtures = writeFixtures(dataDir, { auth_connections: [{ project: "p", id: "x" }] });
    await expect(startTestServer({ dataDir, fixtures })).rejects.toThrow(FixturesError);
    const t = await startTestServer({ dataDir });
    await t.close();
  });
});
