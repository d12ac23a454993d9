import { ChromiumLauncher, type BrowserLauncher, type LaunchedBrowser, type LaunchOptions } from "../../src/index.js";

/** Real Chromium, with every launched browser kept so a test can find its process. */
export class TrackingLauncher implements BrowserLauncher {
  readonly launched: LaunchedBrowser[] = [];
  readonly #inner = new ChromiumLauncher();

  async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
    const browser = await this.#inner.launch(options);
    this.launched.push(browser);
    return browser;
  }

  /** The launched browser behind a DevTools URL. */
  byCdpUrl(url: string): LaunchedBrowser {
    const browser = this.launched.find((candidate) => candidate.cdpWsUrl === url);
    if (!browser) throw new Error(`No browser was launched with ${url}`);
    return browser;
  }
}

/** Whether a process with this pid exists. */
export function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code !== "ESRCH";
  }
}

/** The DevTools HTTP endpoint behind a `ws://host:port/devtools/...` URL. */
export function devtoolsHttp(cdpWsUrl: string): string {
  const url = new URL(cdpWsUrl);
  return `http://${url.host}`;
}
