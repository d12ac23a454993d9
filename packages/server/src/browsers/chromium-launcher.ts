import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { chmod, chown, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Readable, Writable } from "node:stream";
import { CdpPipe } from "../cdp/cdp-pipe.js";
import { CdpRouter } from "../cdp/cdp-router.js";
import { EgressConnections } from "../egress/egress-connections.js";
import { EgressPolicy } from "../egress/egress-policy.js";
import { LookupQueue } from "../egress/lookup-queue.js";
import { EgressProxy, type HostLookup, systemLookup } from "../egress/socks-proxy.js";
import {
  BrowserCgroups,
  type BudgetGroup,
  type CgroupCheck,
  type CgroupView,
  DEFAULT_RESOURCE_BUDGET,
  type ResourceBudget,
} from "../sandbox/browser-cgroups.js";
import { checkSandbox, type SandboxCheck } from "../sandbox/sandbox-check.js";
import {
  DEFAULT_DOWNLOAD_BYTES,
  DEFAULT_PROFILE_BYTES,
  DEFAULT_SHM_BYTES,
  PROFILE_SAVE_FAILED,
  PROFILE_SEED_FAILED,
  RELAY_PORT,
  readSystemLayout,
  type SystemLayout,
  sandboxCommand,
} from "../sandbox/sandbox-command.js";
import { SandboxUids } from "../sandbox/sandbox-uids.js";
import {
  type BrowserExit,
  BrowserLaunchError,
  type BrowserLauncher,
  type LaunchedBrowser,
  type LaunchOptions,
  ProfileLoadError,
  ProfilesUnsupportedError,
  ProfileTooLargeError,
} from "./browser-launcher.js";
import { type ChromiumCheck, checkChromium } from "./chromium-check.js";

/** Settings of {@link ChromiumLauncher}; every one has a default. */
export interface ChromiumLauncherOptions {
  /** The Chromium executable. Default: `CHROMIUM_PATH`, else `/usr/bin/chromium` (Debian's). */
  executablePath?: string;
  /** Milliseconds to wait for the browser to answer on its DevTools pipe. Default 30,000. */
  launchTimeoutMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL when closing. Default 5,000. */
  closeGraceMs?: number;
  /** The largest DevTools message relayed from the browser; larger ones are dropped as they stream. Default 64 MiB. */
  maxMessageBytes?: number;
  /**
   * Run browsers without their sandbox (`--unsafe-no-sandbox`): as the server's own account,
   * seeing the host's files and network (the egress proxy still carries what Chromium sends
   * through it, but WebRTC and a client's own proxy settings go around it). For a
   * developer's own machine only. Default false.
   */
  unsafeNoSandbox?: boolean;
  /**
   * Let browsers reach loopback, private and link-local addresses and this host
   * (`--allow-private-network`), for local development and tests. Default false.
   */
  allowPrivateNetwork?: boolean;
  /** The most one browser may hold in its download folder, in bytes. Default {@link DEFAULT_DOWNLOAD_BYTES}. */
  downloadBytes?: number;
  /** The most one browser may hold in its profile (site storage, caches, temporary files), in bytes. Default {@link DEFAULT_PROFILE_BYTES}. */
  profileBytes?: number;
  /** The most one browser may hold in shared memory (`/dev/shm`), in bytes. Default {@link DEFAULT_SHM_BYTES}. */
  shmBytes?: number;
  /** Host account ids for browsers when the server runs as root. Default: a {@link SandboxUids} from its default base. */
  uids?: SandboxUids;
  /** Name resolution of the egress proxy. Default: the system's. */
  lookup?: HostLookup;
  /** Called with every destination the egress proxy refuses. */
  onEgressRefused?: (destination: string, reason: string) => void;
  /** What each browser may use of the host (memory, processes, CPU). Default {@link DEFAULT_RESOURCE_BUDGET}. */
  budget?: ResourceBudget;
  /**
   * Run browsers without their resource budget (`--unsafe-no-resource-limits`): one page can
   * then take the host's memory, CPU and process table. Default false: a launch where the
   * budget cannot be set fails with the reason.
   */
  unsafeNoResourceLimits?: boolean;
  /** Where the cgroups are, as this process sees them (tests give a view of their own). */
  cgroupView?: CgroupView;
}

/**
 * The flags every browser starts with: headless without GPU, nothing phoning home, a
 * fresh profile, DevTools over a pipe (fds 3 and 4: no TCP port any local user could
 * reach), and WebMCP enabled for the WebMCP routes. The back/forward cache is off: a
 * page restored from it re-announces its tools before the navigation event that ends
 * the previous document's, which leaves no event order to tell the two documents apart
 * by; without it every history navigation loads a new document (Playwright does the same).
 * No crash reporter: Debian's Chromium would otherwise keep dumps (with the page's origin
 * and the profile's path) in a database shared by every browser. WebRTC may not send UDP
 * outside the proxy.
 */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--enable-features=WebMCPTesting",
  "--disable-back-forward-cache",
  "--disable-breakpad",
  "--disable-crash-reporter",
  "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
  "--remote-debugging-pipe",
] as const;

/** How the name of every browser directory a {@link ChromiumLauncher} makes (in the system's temporary directory) starts. */
export const PROFILE_PREFIX = "browser-service-chromium-";

const STDERR_TAIL_LINES = 15;
/** How often a browser's group is asked whether the kernel stopped it at its budget. */
const OUT_OF_MEMORY_POLL_MS = 500;
const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/**
 * Starts Chromium directly (no driver library) and speaks DevTools over its pipe. Each
 * browser runs in its own sandbox (bwrap, `sandbox/sandbox-command.ts`): its own account when the server
 * is root, its own namespaces, the system read-only, its profile the one writable place,
 * and no network but a relay to its own egress proxy (`egress/socks-proxy.ts`), which applies
 * the {@link EgressPolicy}.
 */
export class ChromiumLauncher implements BrowserLauncher {
  readonly #executablePath: string;
  readonly #launchTimeoutMs: number;
  readonly #closeGraceMs: number;
  readonly #maxMessageBytes: number;
  readonly #unsafeNoSandbox: boolean;
  readonly #downloadBytes: number;
  readonly #profileBytes: number;
  readonly #shmBytes: number;
  readonly #policy: EgressPolicy;
  readonly #connections = new EgressConnections();
  readonly #lookups: LookupQueue;
  readonly #options: ChromiumLauncherOptions;
  readonly #asRoot = process.getuid?.() === 0;
  #egressRefusals = 0;
  #uids: SandboxUids | undefined;
  #layout: SystemLayout | undefined;
  #launches = 0;
  #sandboxCheck: Promise<SandboxCheck> | undefined;
  #chromiumCheck: Promise<ChromiumCheck> | undefined;
  #cgroups: Promise<{ check: CgroupCheck; cgroups?: BrowserCgroups }> | undefined;

  constructor(options: ChromiumLauncherOptions = {}) {
    this.#executablePath = options.executablePath ?? process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
    this.#launchTimeoutMs = options.launchTimeoutMs ?? 30_000;
    this.#closeGraceMs = options.closeGraceMs ?? 5_000;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
    this.#unsafeNoSandbox = options.unsafeNoSandbox ?? false;
    this.#downloadBytes = options.downloadBytes ?? DEFAULT_DOWNLOAD_BYTES;
    this.#profileBytes = options.profileBytes ?? DEFAULT_PROFILE_BYTES;
    this.#shmBytes = options.shmBytes ?? DEFAULT_SHM_BYTES;
    this.#policy = new EgressPolicy({ allowPrivateNetwork: options.allowPrivateNetwork ?? false });
    this.#uids = options.uids;
    this.#lookups = new LookupQueue(options.lookup ?? systemLookup);
    this.#options = options;
  }

  /** The Chromium executable this launcher starts (for the start-up check). */
  get executablePath(): string {
    return this.#executablePath;
  }

  /** Whether the browsers this launcher starts run in their sandbox. */
  get sandboxed(): boolean {
    return !this.#unsafeNoSandbox;
  }

  /** Whether browsers may reach loopback, private and link-local addresses. */
  get allowPrivateNetwork(): boolean {
    return this.#policy.allowPrivateNetwork;
  }

  /** Destinations the browsers' egress proxies refused, in all (loopback, private, this host's: see the egress policy). */
  egressRefusals(): number {
    return this.#egressRefusals;
  }

  /** Why browsers cannot start here (the Chromium and sandbox checks, each made once), or `undefined`. */
  async unavailable(): Promise<string | undefined> {
    this.#chromiumCheck ??= checkChromium(this.#executablePath);
    const chromium = await this.#chromiumCheck;
    if (!chromium.usable) return `Chromium at ${chromium.executablePath} ${chromium.problem}`;
    const sandbox = await this.checkSandbox();
    if (!sandbox.usable) return `the browsers' sandbox cannot be set up: ${sandbox.problem}`;
    const limits = await this.checkResourceLimits();
    return limits.usable || "unsafe" in limits ? undefined : `browsers cannot be given their resource budget: ${limits.problem}`;
  }

  /**
   * Whether browsers' sandbox can be set up here ({@link checkSandbox}, as a sandbox account
   * when the server is root), checked once; a launch without it fails with the reason.
   * Always usable with {@link ChromiumLauncherOptions.unsafeNoSandbox}.
   */
  checkSandbox(): Promise<SandboxCheck> {
    this.#sandboxCheck ??= this.#unsafeNoSandbox
      ? Promise.resolve({ usable: true, version: "none (--unsafe-no-sandbox)" })
      : (async () => {
          if (!this.#asRoot) return checkSandbox();
          const uids = this.#sandboxUids();
          const uid = uids.acquire();
          try {
            return await checkSandbox({ uid, gid: uid });
          } finally {
            uids.release(uid);
          }
        })();
    return this.#sandboxCheck;
  }

  /**
   * Whether browsers' resource budgets can be set here (cgroups below the server's own
   * group), checked once; a launch without it fails with the reason unless
   * {@link ChromiumLauncherOptions.unsafeNoResourceLimits}.
   */
  async checkResourceLimits(): Promise<CgroupCheck | { usable: false; unsafe: true }> {
    if (this.#options.unsafeNoResourceLimits === true) return { usable: false, unsafe: true };
    return (await this.#openCgroups()).check;
  }

  /** The budget each browser gets; `undefined` with {@link ChromiumLauncherOptions.unsafeNoResourceLimits}. */
  get budget(): ResourceBudget | undefined {
    return this.#options.unsafeNoResourceLimits === true ? undefined : (this.#options.budget ?? DEFAULT_RESOURCE_BUDGET);
  }

  /** Removes the parent of its browsers' cgroups when they have all ended (a later launch makes it again). */
  async close(): Promise<void> {
    const opened = await this.#cgroups;
    await opened?.cgroups?.close();
  }

  #openCgroups(): Promise<{ check: CgroupCheck; cgroups?: BrowserCgroups }> {
    this.#cgroups ??= BrowserCgroups.open(this.#options.budget ?? DEFAULT_RESOURCE_BUDGET, this.#options.cgroupView);
    return this.#cgroups;
  }

  /** The browser (its launch's number) whose egress connection is the peer `remoteAddress:remotePort` of a request to this server. */
  browserOfConnection(remoteAddress: string | undefined, remotePort: number | undefined): string | undefined {
    return this.#connections.browserOf(remoteAddress, remotePort);
  }

  /**
   * Makes a browser's walls and starts its process in them: its folders (owned by its
   * account), its egress proxy, its profile's saved state to unpack, its budget's group
   * (the process placed in it before it runs anything). What it made is undone by
   * `release`, and by this method itself when it fails.
   */
  async #startProcess(
    options: LaunchOptions,
    cgroups: BrowserCgroups | undefined,
  ): Promise<{
    child: ChildProcess;
    group: BudgetGroup | undefined;
    userDataDir: string;
    downloadPath: string;
    extensionsDir: string;
    release: () => Promise<void>;
  }> {
    const label = String(++this.#launches);
    const uid = this.#asRoot && !this.#unsafeNoSandbox ? this.#sandboxUids().acquire() : undefined;
    const owner = uid === undefined ? undefined : { uid, gid: uid };
    let userDataDir: string | undefined;
    let downloadPath = "";
    let extensionsDir = "";
    let proxy: EgressProxy | undefined;
    let group: BudgetGroup | undefined;
    const release = async () => {
      await proxy?.close();
      await group?.remove();
      if (userDataDir !== undefined) await rm(userDataDir, { recursive: true, force: true, maxRetries: 3 });
      if (uid !== undefined) this.#uids?.release(uid);
    };
    let child: ChildProcess;
    try {
      group = await cgroups?.create(label);
      userDataDir = await mkdtemp(join(tmpdir(), PROFILE_PREFIX));
      downloadPath = join(userDataDir, "downloads");
      await mkdir(downloadPath);
      // The server's, not the browser's: it unpacks extensions here, the browser only reads.
      extensionsDir = join(userDataDir, "extensions");
      await mkdir(extensionsDir);
      await chmod(extensionsDir, 0o755);
      if (owner) {
        await chown(userDataDir, owner.uid, owner.gid);
        await chown(downloadPath, owner.uid, owner.gid);
      }
      await chmod(userDataDir, 0o700);
      const proxyOptions = {
        policy: this.#policy,
        connections: this.#connections,
        label,
        lookup: (hostname: string) => this.#lookups.lookup(label, hostname),
        onRefused: (destination: string, reason: string) => {
          this.#egressRefusals++;
          this.#options.onEgressRefused?.(destination, reason);
        },
      };
      let profileSeed: string | undefined;
      if (options.profileState !== undefined) {
        // Read by the sandbox's shell (as the browser's user) through a read-only bind.
        profileSeed = join(userDataDir, "profile-seed.tar");
        await writeFile(profileSeed, options.profileState, { mode: 0o644, flag: "wx" });
        if (owner) await chown(profileSeed, owner.uid, owner.gid);
      }
      const proxySocket = join(userDataDir, "egress.sock");
      proxy = this.#unsafeNoSandbox
        ? await EgressProxy.listen({ port: 0 }, proxyOptions)
        : await EgressProxy.listen({ path: proxySocket, ...(owner ? { owner } : {}) }, proxyOptions);
      const flags = [
        ...CHROMIUM_FLAGS,
        `--proxy-server=socks5://127.0.0.1:${this.#unsafeNoSandbox ? proxy.port : RELAY_PORT}`,
        // Loopback goes through the proxy too (Chromium sends it direct by default), where
        // the policy decides; inside the sandbox the browser's own loopback holds nothing.
        "--proxy-bypass-list=<-loopback>",
        ...(this.#unsafeNoSandbox && process.getuid?.() === 0 ? ["--no-sandbox"] : []),
        `--user-data-dir=${userDataDir}`,
        options.startUrl ?? "about:blank",
      ];
      const env = { PATH: "/usr/bin:/bin", HOME: userDataDir, XDG_CONFIG_HOME: join(userDataDir, ".config"), XDG_CACHE_HOME: join(userDataDir, ".cache") };
      const command = this.#unsafeNoSandbox
        ? { file: this.#executablePath, args: flags }
        : sandboxCommand({
            layout: this.#systemLayout(),
            browserDir: userDataDir,
            profileBytes: this.#profileBytes,
            shmBytes: this.#shmBytes,
            downloadDir: downloadPath,
            downloadBytes: this.#downloadBytes,
            extensionsDir,
            proxySocket,
            executablePath: this.#executablePath,
            flags,
            profileSeed,
            saveProfile: options.saveProfile,
          });
      // In its budget's group before it runs: the wrapper waits for a line on its stdin,
      // written once the server has placed it, so nothing it starts is ever outside.
      const placed =
        group === undefined ? command : { file: "/bin/sh", args: ["-c", 'read -r _ || exit 1; exec "$@" </dev/null', "budget", command.file, ...command.args] };
      // Its own process group, so closing it also ends the renderer and utility processes.
      child = spawn(placed.file, placed.args, {
        detached: true,
        stdio: [group === undefined ? "ignore" : "pipe", "ignore", "pipe", "pipe", "pipe", ...(options.saveProfile === true ? (["pipe"] as const) : [])],
        env,
        ...(owner ?? {}),
      });
      if (group !== undefined) {
        const spawned = child;
        try {
          if (spawned.pid === undefined) throw new Error("the process did not start");
          // A wrapper that died before its line arrives makes the write fail (EPIPE): its exit
          // says why, and an unheard 'error' event would end the server for every tenant.
          spawned.stdin?.on("error", () => undefined);
          await group.place(spawned.pid);
          spawned.stdin?.end("\n");
        } catch (error) {
          spawned.kill("SIGKILL");
          await once(spawned, "exit").catch(() => undefined);
          throw error;
        }
      }
    } catch (error) {
      await release();
      throw new BrowserLaunchError(`Could not prepare the browser's sandbox: ${(error as Error).message}`, error);
    }
    return { child, group, userDataDir, downloadPath, extensionsDir, release };
  }

  /**
   * Waits for a started browser to answer on its DevTools pipe; one that exits, cannot be
   * run or does not answer in time is killed, its walls released, and the launch fails
   * with what its stderr said last.
   */
  async #awaitDevTools(
    child: ChildProcess,
    budgetGroup: BudgetGroup | undefined,
    downloadPath: string,
    userDataDir: string,
    release: () => Promise<void>,
    options: LaunchOptions,
  ): Promise<{ router: CdpRouter; exited: Promise<BrowserExit>; killGroup: (signal: NodeJS.Signals) => void }> {
    const exited = new Promise<BrowserExit>((resolve) =>
      child.once("exit", (code, signal) => {
        if (budgetGroup === undefined) return resolve({ code, signal });
        // The kernel may have killed the main process itself: the group's counters say why it ended.
        void budgetGroup.overBudget().then((over) => resolve(over === undefined ? { code, signal } : { code, signal, overBudget: over }));
      }),
    );
    const failedToRun = once(child, "error").then(([error]) => ({ kind: "error" as const, error: error as Error }));
    const stderrTail: string[] = [];
    let pending = "";
    child.stderr?.setEncoding("utf8");
    // Read stderr to the end, or Chromium blocks once the pipe is full.
    child.stderr?.on("data", (chunk: string) => {
      pending += chunk;
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      stderrTail.push(...lines);
      stderrTail.splice(0, Math.max(0, stderrTail.length - STDERR_TAIL_LINES));
    });
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    };

    const pipe = new CdpPipe(child.stdio[3] as Writable, child.stdio[4] as Readable, { maxMessageBytes: this.#maxMessageBytes });
    const router = new CdpRouter(pipe, { downloadPath, filesRoot: userDataDir });
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      // Downloads go to the browser's own folder (a tmpfs of --download-mib in the sandbox)
      // from the start, not to a Downloads folder of the account's home.
      router.call("Browser.setDownloadBehavior", { behavior: "allow", downloadPath }).then(
        () => ({ kind: "ready" as const }),
        // The pipe closed: the exit (or spawn error) explains it.
        () => new Promise<never>(() => undefined),
      ),
      exited.then((exit) => ({ kind: "exited" as const, exit })),
      failedToRun,
      new Promise<{ kind: "timeout" }>((resolve) => {
        timer = setTimeout(() => resolve({ kind: "timeout" }), this.#launchTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome.kind !== "ready") {
      router.close();
      killGroup("SIGKILL");
      if (outcome.kind !== "error") await exited;
      await release();
      const what = this.#unsafeNoSandbox ? `Chromium at ${this.#executablePath}` : `Chromium at ${this.#executablePath} in its sandbox (bwrap)`;
      const why =
        outcome.kind === "error"
          ? `could not be run: ${outcome.error.message}`
          : outcome.kind === "exited"
            ? `exited (code ${outcome.exit.code}, signal ${outcome.exit.signal}) before answering on its DevTools pipe`
            : `did not answer on its DevTools pipe within ${this.#launchTimeoutMs} ms`;
      const cause = outcome.kind === "error" ? outcome.error : undefined;
      if (outcome.kind === "exited" && outcome.exit.code === PROFILE_SEED_FAILED && options.profileState !== undefined) {
        throw new ProfileLoadError("The profile's saved state could not be unpacked into the new browser; it was not started.");
      }
      throw new BrowserLaunchError(`${what} ${why}. Set CHROMIUM_PATH to a working Chromium. Last stderr lines:\n${stderrTail.join("\n")}`, cause);
    }

    return { router, exited, killGroup };
  }

  /** Starts Chromium in its sandbox with {@link CHROMIUM_FLAGS} and a fresh profile; resolves once it answers on its pipe. */
  async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
    const sandbox = await this.checkSandbox();
    if (!sandbox.usable) throw new BrowserLaunchError(`Browsers cannot be sandboxed here: ${sandbox.problem}.`);
    let cgroups: BrowserCgroups | undefined;
    if (this.#options.unsafeNoResourceLimits !== true) {
      const opened = await this.#openCgroups();
      if (!opened.check.usable || opened.cgroups === undefined) {
        const problem = opened.check.usable ? "no cgroups" : opened.check.problem;
        throw new BrowserLaunchError(
          `Browsers cannot be given their resource budget here: ${problem}. Start the server where it may make cgroups below its own (README: "Resource budgets"), or with --unsafe-no-resource-limits.`,
        );
      }
      cgroups = opened.cgroups;
    }
    if (this.#unsafeNoSandbox && (options.profileState !== undefined || options.saveProfile === true)) {
      throw new ProfilesUnsupportedError(
        "This server runs browsers without their sandbox (--unsafe-no-sandbox), where a profile's state can be neither loaded nor saved: it is unpacked and read back only inside the sandbox. No browser was started.",
      );
    }
    const { child, group, userDataDir, downloadPath, extensionsDir, release } = await this.#startProcess(options, cgroups);
    const budgetGroup = group;
    const { router, exited, killGroup } = await this.#awaitDevTools(child, budgetGroup, downloadPath, userDataDir, release, options);

    // v1 kills one process at its memory limit (a renderer, mostly), and a refused fork
    // leaves Chromium unable to start a tab: either way the browser ends whole, as the
    // kernel ends it under v2's memory.oom.group.
    const watch =
      budgetGroup === undefined
        ? undefined
        : setInterval(() => {
            void budgetGroup
              .overBudget()
              .then(async (over) => {
                if (over === undefined) return;
                killGroup("SIGKILL");
                await budgetGroup.killAll();
                clearInterval(watch);
              })
              // A kill the kernel refused is tried again at the next tick; a rejection left
              // unhandled would end the server for every tenant.
              .catch(() => undefined);
          }, OUT_OF_MEMORY_POLL_MS);
    watch?.unref();
    void exited.then(() => clearInterval(watch));

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        router.close();
        if (child.exitCode === null && child.signalCode === null) {
          killGroup("SIGTERM");
          const grace = setTimeout(() => killGroup("SIGKILL"), this.#closeGraceMs);
          await exited;
          clearTimeout(grace);
        }
        // Helpers of the group may outlive the main process by a moment.
        killGroup("SIGKILL");
        await budgetGroup?.killAll();
        await release();
      })();
      return closing;
    };
    const saved = (child.stdio as unknown as (Readable | null | undefined)[])[5] ?? undefined;
    // A broken pipe before anyone reads it is told to the save that reads it (closeAndSave):
    // an 'error' event without a listener would end the server for every tenant.
    let savedError: unknown;
    saved?.on("error", (error: unknown) => {
      savedError ??= error;
    });
    const closeAndSave = async (maxBytes: number): Promise<Buffer> => {
      if (saved === undefined) throw new Error("This browser was not launched to save its profile.");
      if (savedError !== undefined) throw new Error("The pipe the browser's storage comes back on broke; it was not saved.", { cause: savedError });
      const chunks: Buffer[] = [];
      let size = 0;
      let tooLarge = false;
      const reading = new Promise<void>((resolve, reject) => {
        saved.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            tooLarge = true;
            saved.destroy();
            killGroup("SIGKILL");
            return resolve();
          }
          chunks.push(chunk);
        });
        saved.once("end", resolve);
        saved.once("close", resolve);
        saved.once("error", reject);
      });
      // Chromium writes its storage out whole when asked to close, not when killed.
      await router.call("Browser.close").catch(() => undefined);
      const grace = setTimeout(() => killGroup("SIGKILL"), this.#closeGraceMs);
      const exit = await exited;
      await reading;
      clearTimeout(grace);
      await close();
      if (tooLarge) throw new ProfileTooLargeError(maxBytes);
      if (exit.signal !== null || exit.overBudget !== undefined)
        throw new Error(`The browser did not close by itself (signal ${exit.signal}); its storage was not read back.`);
      if (exit.code === PROFILE_SAVE_FAILED) throw new Error("The browser's storage could not be read back whole; it was not saved.");
      const storage = Buffer.concat(chunks);
      // A whole tar is whole blocks ending in two zero ones: anything else was cut short.
      if (storage.length < 1024 || storage.length % 512 !== 0 || storage.subarray(-1024).some((byte) => byte !== 0)) {
        throw new Error("The browser's storage came back cut short; it was not saved.");
      }
      return storage;
    };
    const launched: LaunchedBrowser = {
      cdp: router,
      userDataDir,
      sandboxed: !this.#unsafeNoSandbox,
      ...(cgroups === undefined ? {} : { budget: cgroups.budget }),
      extensionsDir,
      // On the host's disk, not in the profile's tmpfs: bounded by the same number.
      extensionsBytes: this.#profileBytes,
      close,
      ...(saved === undefined ? {} : { closeAndSave }),
      onExit: (listener) => void exited.then(listener),
    };
    if (child.pid !== undefined) launched.pid = child.pid;
    return launched;
  }

  #sandboxUids(): SandboxUids {
    this.#uids ??= new SandboxUids();
    return this.#uids;
  }

  #systemLayout(): SystemLayout {
    this.#layout ??= readSystemLayout();
    return this.#layout;
  }
}
