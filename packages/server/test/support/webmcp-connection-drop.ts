import type { CdpChannel, LaunchedBrowser, LaunchOptions } from "../../src/index.js";
import { TrackingLauncher } from "./tracking-launcher.js";

/** Whether a command is the WebMCP connection's first (BrowserAttachment.open): auto-attach to tabs. */
function startsWebMcp(message: unknown): boolean {
  const { method, params, sessionId } = message as { method?: unknown; params?: { filter?: unknown }; sessionId?: unknown };
  return method === "Target.setAutoAttach" && sessionId === undefined && JSON.stringify(params?.filter) === '[{"type":"page"}]';
}

/**
 * Real Chromium whose server-side WebMCP connection a test can close, as a lost
 * connection would end: the server connects again on its next WebMCP request and finds
 * the tabs already open, whose tools Chromium then reports in one replay per frame.
 */
export class DroppingLauncher extends TrackingLauncher {
  readonly #webmcp = new Map<LaunchedBrowser, CdpChannel>();

  override async launch(options: LaunchOptions): Promise<LaunchedBrowser> {
    const browser = await super.launch(options);
    const router = browser.cdp;
    const open = router.openChannel.bind(router);
    router.openChannel = async (...args: Parameters<typeof router.openChannel>) => {
      const channel = await open(...args);
      const send = channel.send.bind(channel);
      channel.send = (message: unknown) => {
        if (startsWebMcp(message)) this.#webmcp.set(browser, channel);
        send(message);
      };
      return channel;
    };
    return browser;
  }

  /** Closes the WebMCP connection of the browser launched last. */
  dropWebMcpConnection(): void {
    const channel = this.#webmcp.get(this.latest());
    if (!channel || channel.closed) throw new Error("The latest browser has no open WebMCP connection.");
    channel.close();
  }
}
