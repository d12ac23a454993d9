import { spawn } from "node:child_process";
import { chown, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import type { Readable, Writable } from "node:stream";
import { CdpPipe } from "../cdp/cdp-pipe.js";
import { CdpRouter } from "../cdp/cdp-router.js";
import { BrowserLaunchError, type BrowserExit, type BrowserLauncher, type LaunchedBrowser, type LaunchOptions } from "./browser-launcher.js";

/** An operating-system account Chromium runs as, instead of the server's own. */
export interface ChromiumUser {
  uid: number;
  gid: number;
}

/** Settings of {@link ChromiumLauncher}; every one has a default. */
export interface ChromiumLauncherOptions {
  /** The Chromium executable. Default: `CHROMIUM_PATH`, else `/usr/bin/chromium` (Debian's). */
  executablePath?: string;
  /** Milliseconds to wait for the browser to answer on its DevTools pipe. Default 30,000. */
  launchTimeoutMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL when closing. Default 5,000. */
  closeGraceMs?: number;
  /**
   * Run Chromium as this account (the server must be root to switch). Chromium then
   * runs with its sandbox, and reads and writes only what that account may.
   */
  user?: ChromiumUser;
  /** The largest DevTools message relayed from the browser; larger ones are dropped as they stream. Default 64 MiB. */
  maxMessageBytes?: number;
}

/**
 * The flags every browser starts with: headless without GPU, nothing phoning home, a
 * fresh profile, DevTools over a pipe (fds 3 and 4: no TCP port any local user could
 * reach), and WebMCP enabled for the WebMCP routes. The back/forward cache is off: a
 * page restored from it re-announces its tools before the navigation event that ends
 * the previous document's, which leaves no event order to tell the two documents apart
 * by; without it every history navigation loads a new document (Playwright does the same).
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
  "--remote-debugging-pipe",
] as const;

/**
 * Whether Chromium can keep its sandbox: it refuses to start sandboxed as root, so a
 * server running as root without a {@link ChromiumUser} must pass `--no-sandbox`.
 */
export function chromiumSandboxed(user: ChromiumUser | undefined, serverUid: number | undefined = process.getuid?.()): boolean {
  return user !== undefined || serverUid !== 0;
}

/** How the name of every profile directory a {@link ChromiumLauncher} makes (in the system's temporary directory) starts. */
export const PROFILE_PREFIX = "browser-service-chromium-";

const STDERR_TAIL_LINES = 15;
const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Starts Chromium directly (no driver library) and speaks DevTools over its pipe. */
export class ChromiumLauncher implements BrowserLauncher {
  readonly #executablePath: string;
  readonly #launchTimeoutMs: number;
  readonly #closeGraceMs: number;
  readonly #user: ChromiumUser | undefined;
  readonly #maxMessageBytes: number;

  constructor(options: ChromiumLauncherOptions = {}) {
    this.#executablePath = options.executablePath ?? process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
    this.#launchTimeoutMs = options.launchTimeoutMs ?? 30_000;
    this.#closeGraceMs = options.closeGraceMs ?? 5_000;
    this.#user = options.user;
    this.#maxMessageBytes = options.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES;
  }

  /** The Chromium executable this launcher starts (for the start-up check). */
  get executablePath(): string {
    return this.#executablePath;
  }

  /** Whether the browsers this launcher starts run with Chromium's sandbox. */
  get sandboxed(): boolean {
    return chromiumSandboxed(this.#user);
  }

  /** Starts Chromium with {@link CHROMIUM_FLAGS} and a fresh profile; resolves once it answers on its pipe. */
  async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
    const userDataDir = await mkdtemp(join(tmpdir(), PROFILE_PREFIX));
    const downloadPath = join(userDataDir, "downloads");
    await mkdir(downloadPath);
    const user = this.#user;
    if (user !== undefined) {
      await chown(userDataDir, user.uid, user.gid);
      await chown(downloadPath, user.uid, user.gid);
    }
    const flags = [...CHROMIUM_FLAGS, ...(this.sandboxed ? [] : ["--no-sandbox"]), `--user-data-dir=${userDataDir}`, options.startUrl ?? "about:blank"];
    // Its own process group, so closing it also ends the renderer and utility processes.
    const child = spawn(this.#executablePath, flags, {
      detached: true,
      stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"],
      ...(user === undefined ? {} : { uid: user.uid, gid: user.gid, env: { ...process.env, HOME: userDataDir } }),
    });
    const exited = new Promise<BrowserExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
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
    const removeProfile = () => rm(userDataDir, { recursive: true, force: true, maxRetries: 3 });
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    };

    const pipe = new CdpPipe(child.stdio[3] as Writable, child.stdio[4] as Readable, { maxMessageBytes: this.#maxMessageBytes });
    const router = new CdpRouter(pipe, { downloadPath });
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      router.call("Browser.getVersion").then(
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
      await removeProfile();
      const why =
        outcome.kind === "error" ? `could not be run: ${outcome.error.message}`
        : outcome.kind === "exited" ? `exited (code ${outcome.exit.code}, signal ${outcome.exit.signal}) before answering on its DevTools pipe`
        : `did not answer on its DevTools pipe within ${this.#launchTimeoutMs} ms`;
      const cause = outcome.kind === "error" ? outcome.error : undefined;
      throw new BrowserLaunchError(`Chromium at ${this.#executablePath} ${why}. Set CHROMIUM_PATH to a working Chromium. Last stderr lines:\n${stderrTail.join("\n")}`, cause);
    }

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
        await removeProfile();
      })();
      return closing;
    };
    const launched: LaunchedBrowser = {
      cdp: router,
      userDataDir,
      close,
      onExit: (listener) => void exited.then(listener),
    };
    if (child.pid !== undefined) launched.pid = child.pid;
    return launched;
  }
}
