import type { IssuedKey } from "../auth/api-key-store.js";
import { checkChromium, chromiumCheckLine } from "../browsers/chromium-check.js";
import { ChromiumLauncher } from "../browsers/chromium-launcher.js";
import { resourceLimitsLine } from "../sandbox/browser-cgroups.js";
import { sandboxCheckLine } from "../sandbox/sandbox-check.js";
import { SandboxUids } from "../sandbox/sandbox-uids.js";
import { claimDataDir, dataDirLayout, liveOwner } from "../storage/data-dir.js";
import { readOtlpDestinations } from "../telemetry/otlp-destinations.js";
import { ConfigError, HELP_TEXT, parseCommand, type ServerConfig } from "./config.js";
import { firstStartBanner } from "./first-start.js";
import { issueApiKey } from "./issue-key.js";
import { KEY_REQUEST_SIGNAL, requestKeyFromServer } from "./key-requests.js";
import { createServer } from "./server.js";
import { openStores } from "./stores.js";

/** Where the command line writes. */
export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

async function serve(config: ServerConfig, io: CliIo): Promise<void> {
  const launcher = new ChromiumLauncher({
    unsafeNoSandbox: config.unsafeNoSandbox,
    allowPrivateNetwork: config.allowPrivateNetwork,
    downloadBytes: config.downloadBytes,
    profileBytes: config.profileBytes,
    shmBytes: config.shmBytes,
    uids: new SandboxUids(config.sandboxUidBase),
    budget: { memoryBytes: config.browserMemoryBytes, maxProcesses: config.browserMaxProcesses, cpus: config.browserCpus },
    unsafeNoResourceLimits: config.unsafeNoResourceLimits,
  });
  const server = await createServer({
    dataDir: config.dataDir,
    ...(config.database === undefined ? {} : { database: config.database }),
    nodeId: config.nodeId,
    ...(config.database === undefined
      ? {}
      : {
          cluster: {
            leaseTtlMs: config.nodeLeaseSec * 1000,
            ...(config.advertiseUrl === undefined ? {} : { advertiseUrl: config.advertiseUrl }),
            ...(config.nodeSecret === undefined ? {} : { secret: config.nodeSecret }),
            ...(config.nodeSecretAccept === undefined ? {} : { acceptedSecrets: [config.nodeSecretAccept] }),
          },
        }),
    host: config.host,
    port: config.port,
    planLimit: config.planLimit,
    projectsDisabled: config.projectsDisabled,
    ...(config.fixtures === undefined ? {} : { fixtures: config.fixtures }),
    telemetry: {
      retentionHours: config.telemetryRetentionHours,
      maxEventsPerBrowser: config.telemetryMaxEventsPerBrowser,
      maxEventsPerProject: config.telemetryMaxEventsPerProject,
      maxBytesPerBrowser: config.telemetryMaxBytesPerBrowser,
      maxBytesPerProject: config.telemetryMaxBytesPerProject,
      ...(config.otlpDestinations === undefined ? {} : { destinations: readOtlpDestinations(config.otlpDestinations) }),
    },
    ...(config.publicUrl === undefined ? {} : { publicUrl: config.publicUrl }),
    bodyIdleTimeoutSec: config.bodyIdleTimeoutSec,
    ...(config.metricsPort === 0 ? {} : { metrics: { port: config.metricsPort, host: config.metricsHost } }),
    maxClientConnections: config.maxClientConnections,
    liveView: { maxViewers: config.liveViewMaxViewers },
    cdpLimits: {
      maxClients: config.cdpMaxClients,
      maxMessageBytes: config.cdpMaxMessageBytes,
      maxBufferedBytes: config.cdpMaxBufferedBytes,
      messageRate: config.cdpMessageRate,
      byteRate: config.cdpByteRate,
      projectMessageRate: config.cdpProjectMessageRate,
      projectByteRate: config.cdpProjectByteRate,
      maxPending: config.cdpMaxPending,
    },
    profileStateBytes: config.profileStateBytes,
    authFlowSeconds: config.authFlowSeconds,
    ...(config.authCheckSeconds === undefined ? {} : { authCheckSeconds: config.authCheckSeconds }),
    ...(config.secretsKey === undefined ? {} : { secretsKey: config.secretsKey }),
    ...(config.secretsKeyPrevious === undefined ? {} : { previousSecretsKey: config.secretsKeyPrevious }),
    launcher,
    warmBrowsers: config.warmBrowsers,
    minFreeMemoryMib: config.minFreeMemoryMib,
    rateLimits: {
      perKey: { rate: config.rateLimit, burst: config.rateLimitBurst },
      authFailuresPerAddress: { rate: config.authFailureLimit, burst: config.authFailureBurst },
    },
    ...(config.trustProxy.length === 0 ? {} : { trustProxy: config.trustProxy }),
    logger: { level: process.env.LOG_LEVEL ?? "info" },
  });
  if (server.firstStart) io.stdout(firstStartBanner(server.firstStart, dataDirLayout(config.dataDir).root));

  // SIGTERM drains first (--drain-seconds); a second signal cuts the drain short, a third exits at once.
  let stage: "serving" | "draining" | "closing" = "serving";
  const drainCut = new AbortController();
  const closeNow = () => {
    stage = "closing";
    io.stdout("Finishing in-flight requests and closing browsers...\n");
    return server.close();
  };
  let lastSignal = 0;
  const stop = (signal: NodeJS.Signals) => {
    // One key held or an orchestrator's retry sends signals in a burst: each step waits a second for the next.
    if (Date.now() - lastSignal < 1_000) return;
    lastSignal = Date.now();
    if (stage === "closing") {
      io.stderr(`Received ${signal} again; exiting without waiting.\n`);
      process.exit(1);
    }
    if (stage === "draining") {
      io.stdout(`Received ${signal} again; ending the drain now.\n`);
      drainCut.abort();
      return;
    }
    const drainSeconds = signal === "SIGTERM" ? config.drainSeconds : 0;
    io.stdout(`Received ${signal}.\n`);
    let stopped: Promise<void>;
    if (drainSeconds === 0) stopped = closeNow();
    else {
      stage = "draining";
      io.stdout(`Draining: no new browsers; the running ones have up to ${drainSeconds} s to end.\n`);
      stopped = server.drain(drainSeconds, drainCut.signal).then((left) => {
        io.stdout(left === 0 ? "Drained: no browser is left running.\n" : `Drain over with ${left} browser${left === 1 ? "" : "s"} still running.\n`);
        return closeNow();
      });
    }
    stopped.then(
      () => process.exit(0),
      (error: unknown) => {
        io.stderr(`Shutdown failed: ${(error as Error).stack ?? String(error)}\n`);
        process.exit(1);
      },
    );
  };
  // Before listening, so that a signal right after the "listening" line is handled.
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  process.on(KEY_REQUEST_SIGNAL, () => {
    server.answerKeyRequests().catch((error: unknown) => io.stderr(`Could not answer a key request: ${(error as Error).stack ?? String(error)}\n`));
  });
  // Said at start, so a missing Chromium is not first met as a failing POST /browsers.
  const chromium = await checkChromium(launcher.executablePath);
  (chromium.usable ? io.stdout : io.stderr)(`${chromiumCheckLine(chromium)}\n`);
  const sandbox = await launcher.checkSandbox();
  (sandbox.usable && launcher.sandboxed ? io.stdout : io.stderr)(`${sandboxCheckLine(sandbox, launcher)}\n`);
  const limits = await launcher.checkResourceLimits();
  (limits.usable ? io.stdout : io.stderr)(`${resourceLimitsLine(limits, launcher.budget)}\n`);
  const url = await server.listen();
  io.stdout(`browser-service-server listening on ${url} (data in ${dataDirLayout(config.dataDir).root})\n`);
  if (server.metricsUrl !== undefined) io.stdout(`Metrics at ${server.metricsUrl}\n`);
}

/** Issues a key: through the running server that owns the data directory, else directly. */
async function issueKey(config: ServerConfig, project: string | undefined): Promise<IssuedKey> {
  const layout = dataDirLayout(config.dataDir);
  const owner = liveOwner(layout);
  if (owner !== undefined) return requestKeyFromServer(layout, owner, project);
  // Owned for the moment, as a server owns it: a server killed before this leaves SQLite's
  // lock folder (which this clears) and its last commits in the write-ahead log (which the
  // open replays), and a server started meanwhile is refused instead of sharing the file.
  const release = claimDataDir(layout);
  try {
    const stores = await openStores(layout, { databaseUrl: config.database, nodeId: config.nodeId });
    try {
      return await issueApiKey(stores, project);
    } finally {
      await stores.close();
    }
  } finally {
    release();
  }
}

async function createKey(config: ServerConfig, project: string | undefined, io: CliIo): Promise<void> {
  const key = await issueKey(config, project);
  io.stderr(`Issued ${key.projectId === null ? "an org-wide" : `a project-scoped (${key.projectId})`} API key; it is shown only once:\n`);
  io.stdout(`${key.secret}\n`);
}

/**
 * Runs the `browser-service-server` command line: the server itself, `keys create`, or
 * `--help`. Resolves with the exit code for commands that end; the server keeps running
 * until SIGTERM or SIGINT.
 */
export async function runCli(argv: string[], io: CliIo = processIo): Promise<number> {
  try {
    const command = parseCommand(argv);
    if (command.kind === "help") {
      io.stdout(`${HELP_TEXT}\n`);
      return 0;
    }
    if (command.kind === "keys-create") {
      await createKey(command.config, command.project, io);
      return 0;
    }
    await serve(command.config, io);
    return 0;
  } catch (error) {
    if (error instanceof ConfigError) {
      io.stderr(`${error.message}\n`);
      return 2;
    }
    const code = (error as { code?: unknown }).code;
    io.stderr(`browser-service-server: ${(error as Error).message}${typeof code === "string" ? ` (${code})` : ""}\n`);
    return 1;
  }
}
