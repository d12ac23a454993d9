import { CdpConnection, CdpProtocolError } from "../cdp/cdp-connection.js";
import type { LaunchedBrowser } from "./browser-launcher.js";

// A navigation to a start_url that never commits (a server that never answers) must not
// keep the server's session on the user's tab for ever.
const HAND_OVER_TIMEOUT_MS = 30_000;
const DROP_ATTEMPTS = 50;
const DROP_RETRY_MS = 20;

/** A launched browser could not be prepared or handed over (it died, or its tab is gone). */
export class ReadyBrowserError extends Error {
  /** Stable code of the failure. */
  readonly code = "browser_not_ready";

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "ReadyBrowserError";
  }
}

/**
 * A launched browser ready to be handed over (one waiting in the warm pool, or one just
 * launched cold for a create), with a DevTools session already attached to its one tab
 * (`about:blank`), so that handing it over costs one message on the pipe.
 */
export class ReadyBrowser {
  /** The browser process. */
  readonly launched: LaunchedBrowser;
  readonly #connection: CdpConnection;
  readonly #pageSession: string;

  private constructor(launched: LaunchedBrowser, connection: CdpConnection, pageSession: string) {
    this.launched = launched;
    this.#connection = connection;
    this.#pageSession = pageSession;
  }

  /** Attaches to the first tab of a freshly launched browser; throws {@link ReadyBrowserError} if it has none. */
  static async prepare(launched: LaunchedBrowser): Promise<ReadyBrowser> {
    const connection = await CdpConnection.open(launched.cdp);
    try {
      const { targetInfos } = await connection.send<{ targetInfos: { targetId: string; type: string }[] }>("Target.getTargets");
      const page = targetInfos.find((target) => target.type === "page");
      if (page === undefined) throw new ReadyBrowserError("The launched browser has no tab.");
      const { sessionId } = await connection.send<{ sessionId: string }>("Target.attachToTarget", { targetId: page.targetId, flatten: true });
      return new ReadyBrowser(launched, connection, sessionId);
    } catch (error) {
      await connection.close();
      throw error instanceof ReadyBrowserError ? error : new ReadyBrowserError("Could not attach to the launched browser's tab.", error);
    }
  }

  /** Whether the browser can still be handed over (its DevTools pipe is open). */
  get usable(): boolean {
    return !this.launched.cdp.closed && !this.#connection.closed;
  }

  /**
   * Gives the browser to its user: with a `startUrl`, the tab navigates there once `after`
   * settles (at once without it); the load goes on as after a cold launch, which does not
   * wait for it either. Once the navigation commits, the `about:blank` entry it leaves
   * behind is dropped from the tab's history, so the tab looks as after a cold launch with
   * that URL, and the server's session detaches. Throws {@link ReadyBrowserError} if the
   * browser cannot take the command now.
   */
  handOver(startUrl: string | undefined, after?: Promise<unknown>): void {
    // A failed sync is reported by the create's response (a 500); here `after` only orders
    // the navigation, and must not become an unhandled rejection on the paths below that
    // navigate nowhere.
    after?.catch(() => undefined);
    if (!this.usable) throw new ReadyBrowserError("The browser's DevTools pipe has closed.");
    if (startUrl === undefined) {
      void this.#connection.close();
      return;
    }
    const navigate = (): void => {
      void this.#connection
        .send("Page.navigate", { url: startUrl }, this.#pageSession, HAND_OVER_TIMEOUT_MS)
        .then(() => this.#dropBlankEntry())
        // A failed navigation shows in the tab as after a cold launch; nobody waits for it.
        .catch(() => undefined)
        .finally(() => void this.#connection.close());
    };
    // Whether `after` (the create's commit reaching the disk) worked or not, the browser is
    // its user's now: the create's response says how the commit went.
    if (after === undefined) navigate();
    else after.then(navigate, navigate);
  }

  /**
   * Drops the `about:blank` entry before start_url from the tab's history, only while the
   * history is exactly those two (the user may already be navigating: their entries stay).
   * Right after the commit Chromium may still be switching the tab to its new renderer
   * ("Not attached to an active page"), so the command is retried for a moment.
   */
  async #dropBlankEntry(): Promise<void> {
    for (let attempt = 0; attempt < DROP_ATTEMPTS; attempt++) {
      try {
        const history = await this.#connection.send<{ currentIndex: number; entries: { url: string }[] }>("Page.getNavigationHistory", {}, this.#pageSession);
        if (history.entries.length === 2 && history.currentIndex === 1 && history.entries[0]?.url === "about:blank") {
          await this.#connection.send("Page.resetNavigationHistory", {}, this.#pageSession);
        }
        return;
      } catch (error) {
        if (!(error instanceof CdpProtocolError)) return;
        await new Promise((resolve) => setTimeout(resolve, DROP_RETRY_MS));
      }
    }
  }

  /** Closes the browser (its process and profile). */
  async close(): Promise<void> {
    await this.#connection.close();
    await this.launched.close();
  }
}
