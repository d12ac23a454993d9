import { readFileSync } from "node:fs";
import { type BrowserLauncher, ChromiumLauncher, type ChromiumLauncherOptions, type LaunchedBrowser, type LaunchOptions } from "../../src/index.js";

/** Real Chromium, with every launched browser kept so a test can find its process. */
export class TrackingLauncher implements BrowserLauncher {
  readonly launched: LaunchedBrowser[] = [];
  readonly #inner: ChromiumLauncher;

  /** Browsers may reach private addresses unless `options` says otherwise: tests serve their pages on 127.0.0.1. */
  constructor(options: ChromiumLauncherOptions = {}) {
    this.#inner = new ChromiumLauncher({ allowPrivateNetwork: true, ...options });
  }

  async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
    const browser = await this.#inner.launch(options);
    this.launched.push(browser);
    return browser;
  }

  browserOfConnection(remoteAddress: string | undefined, remotePort: number | undefined): string | undefined {
    return this.#inner.browserOfConnection(remoteAddress, remotePort);
  }

  egressRefusals(): number {
    return this.#inner.egressRefusals();
  }

  /** The browser launched last (tests create one browser at a time where they use this). */
  latest(): LaunchedBrowser {
    const browser = this.launched.at(-1);
    if (!browser) throw new Error("No browser was launched yet.");
    return browser;
  }
}

/** Whether a process with this pid runs (a zombie, ended but not yet reaped by its parent, does not). */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
