import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { BrowserLaunchError, type BrowserExit, type BrowserLauncher, type LaunchedBrowser, type LaunchOptions } from "./browser-launcher.js";

/** Settings of {@link ChromiumLauncher}; every one has a default. */
export interface ChromiumLauncherOptions {
  /** The Chromium executable. Default: `CHROMIUM_PATH`, else `/usr/bin/chromium` (Debian's). */
  executablePath?: string;
  /** Milliseconds to wait for the DevTools endpoint before giving up. Default 30,000. */
  launchTimeoutMs?: number;
  /** Milliseconds between SIGTERM and SIGKILL when closing. Default 5,000. */
  closeGraceMs?: number;
}

/**
 * The flags every browser starts with: headless with no sandbox or GPU (containers and
 * CI have neither), nothing phoning home, a fresh profile, a DevTools port chosen by the
 * OS, and WebMCP enabled for the WebMCP routes. The back/forward cache is off: a page
 * restored from it re-announces its tools before the navigation event that ends the
 * previous document's, which leaves no event order to tell the two documents apart by;
 * without it every history navigation loads a new document (Playwright does the same).
 */
export const CHROMIUM_FLAGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--enable-features=WebMCPTesting",
  "--disable-back-forward-cache",
  "--remote-debugging-port=0",
] as const;

const DEVTOOLS_LINE = /DevTools listening on (ws:\/\/\S+)/;
const STDERR_TAIL_LINES = 15;

/** Starts Chromium directly (no driver library) and reads its DevTools URL from stderr. */
export class ChromiumLauncher implements BrowserLauncher {
  readonly #executablePath: string;
  readonly #launchTimeoutMs: number;
  readonly #closeGraceMs: number;

  constructor(options: ChromiumLauncherOptions = {}) {
    this.#executablePath = options.executablePath ?? process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
    this.#launchTimeoutMs = options.launchTimeoutMs ?? 30_000;
    this.#closeGraceMs = options.closeGraceMs ?? 5_000;
  }

  /** The Chromium executable this launcher starts (for the start-up check). */
  get executablePath(): string {
    return this.#executablePath;
  }

  /** Starts Chromium with {@link CHROMIUM_FLAGS} and a fresh profile; resolves once DevTools listens. */
  async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
    const userDataDir = await mkdtemp(join(tmpdir(), "browser-service-chromium-"));
    // Its own process group, so closing it also ends the renderer and utility processes.
    const child = spawn(this.#executablePath, [...CHROMIUM_FLAGS, `--user-data-dir=${userDataDir}`, options.startUrl ?? "about:blank"], {
      detached: true,
      stdio: ["ignore", "ignore", "pipe"],
    });
    const exited = new Promise<BrowserExit>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
    const stderrTail: string[] = [];
    let pending = "";
    let cdpWsUrl: string | undefined;
    const found = new Promise<string>((resolve) => {
      child.stderr.setEncoding("utf8");
      // Read stderr to the end even after the URL, or Chromium blocks once the pipe is full.
      child.stderr.on("data", (chunk: string) => {
        pending += chunk;
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) {
          stderrTail.push(line);
          if (stderrTail.length > STDERR_TAIL_LINES) stderrTail.shift();
          const match = cdpWsUrl === undefined ? DEVTOOLS_LINE.exec(line) : null;
          if (match) {
            cdpWsUrl = match[1] as string;
            resolve(cdpWsUrl);
          }
        }
      });
    });
    const removeProfile = () => rm(userDataDir, { recursive: true, force: true, maxRetries: 3 });
    const killGroup = (signal: NodeJS.Signals) => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, signal);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "ESRCH") throw error;
      }
    };

    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      found.then((url) => ({ kind: "ready" as const, url })),
      exited.then((exit) => ({ kind: "exited" as const, exit })),
      once(child, "error").then(([error]) => ({ kind: "error" as const, error: error as Error })),
      new Promise<{ kind: "timeout" }>((resolve) => {
        timer = setTimeout(() => resolve({ kind: "timeout" }), this.#launchTimeoutMs);
      }),
    ]);
    clearTimeout(timer);
    if (outcome.kind !== "ready") {
      killGroup("SIGKILL");
      if (outcome.kind !== "error") await exited;
      await removeProfile();
      const why =
        outcome.kind === "error" ? `could not be run: ${outcome.error.message}`
        : outcome.kind === "exited" ? `exited (code ${outcome.exit.code}, signal ${outcome.exit.signal}) before opening DevTools`
        : `did not open DevTools within ${this.#launchTimeoutMs} ms`;
      const cause = outcome.kind === "error" ? outcome.error : undefined;
      throw new BrowserLaunchError(`Chromium at ${this.#executablePath} ${why}. Set CHROMIUM_PATH to a working Chromium. Last stderr lines:\n${stderrTail.join("\n")}`, cause);
    }

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
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
      cdpWsUrl: outcome.url,
      userDataDir,
      close,
      onExit: (listener) => void exited.then(listener),
    };
    if (child.pid !== undefined) launched.pid = child.pid;
    return launched;
  }
}
