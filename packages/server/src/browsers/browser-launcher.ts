import type { CdpRouter } from "../cdp/cdp-router.js";
import type { OverBudget, ResourceBudget } from "../sandbox/browser-cgroups.js";

/** What a browser is started with. */
export interface LaunchOptions {
  /** The URL the first tab opens; `about:blank` when omitted. */
  startUrl?: string;
  /**
   * Storage folders of a saved profile (a tar of `Default/...` as {@link LaunchedBrowser.closeAndSave}
   * gave it), unpacked into the new profile before the browser starts, inside its sandbox.
   */
  profileState?: Buffer;
  /** The browser's storage is read back when it ends ({@link LaunchedBrowser.closeAndSave}). */
  saveProfile?: boolean;
}

/** The profile state given to a launch could not be unpacked into the new profile. */
export class ProfileLoadError extends Error {
  /** Stable code of the failure. */
  readonly code = "profile_load_failed";

  constructor(message: string) {
    super(message);
    this.name = "ProfileLoadError";
  }
}

/** A browser's storage read back at its end was larger than allowed: nothing of it is kept. */
export class ProfileTooLargeError extends Error {
  /** Stable code of the failure. */
  readonly code = "profile_too_large";

  constructor(maxBytes: number) {
    super(`The browser's storage is larger than the ${maxBytes} bytes a profile may hold; the profile keeps its previous state.`);
    this.name = "ProfileTooLargeError";
  }
}

/** How a browser process ended. */
export interface BrowserExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The browser went past its {@link LaunchedBrowser.budget} (memory, or processes) and was ended for it. */
  overBudget?: OverBudget;
}

/** A started browser process. */
export interface LaunchedBrowser {
  /** The browser's DevTools pipe, shared among the server and every client through channels. */
  cdp: CdpRouter;
  /** The process id, kept so an orphan can be found after the server dies uncleanly. */
  pid?: number;
  /** The profile directory, removed when the browser closes. */
  userDataDir?: string;
  /** Whether the browser runs in its sandbox (false only with `--unsafe-no-sandbox`, or a launcher that has none). */
  sandboxed?: boolean;
  /** What the kernel lets it use of the host; `undefined`: no budget (`--unsafe-no-resource-limits`, or a launcher that has none). */
  budget?: ResourceBudget;
  /**
   * An empty folder the server unpacks extensions into: the browser reads it at the same
   * path and, in its sandbox, cannot write it. `undefined`: this browser loads none.
   */
  extensionsDir?: string;
  /** The most the extensions unpacked into {@link extensionsDir} may take together, in bytes. */
  extensionsBytes?: number;
  /** Stops the browser (politely, then forcibly) and removes its profile; safe to call twice. */
  close(): Promise<void>;
  /**
   * For a browser launched with `saveProfile`: asks it to close (`Browser.close`, so its
   * storage is written out whole), then reads its storage folders back as a tar of at most
   * `maxBytes` ({@link ProfileTooLargeError} past it), and cleans up as {@link close} does.
   */
  closeAndSave?(maxBytes: number): Promise<Buffer>;
  /** Calls `listener` once when the process exits, whether closed or crashed. */
  onExit(listener: (exit: BrowserExit) => void): void;
}

/** Starts browser processes. The server takes one; tests may pass their own. */
export interface BrowserLauncher {
  /** Starts a browser and resolves once it answers on its DevTools pipe. */
  launch(options: LaunchOptions): Promise<LaunchedBrowser>;
  /**
   * The browser (a label such as `3`, its launch's number) whose outgoing connection is the peer
   * `remoteAddress:remotePort` of a request to this server, so that what its pages send
   * to the API is told apart from other clients on the same address.
   */
  browserOfConnection?(remoteAddress: string | undefined, remotePort: number | undefined): string | undefined;
  /** Destinations the browsers' egress was refused, in all, since the launcher was made (the server's metrics). */
  egressRefusals?(): number;
  /** Why browsers cannot start here now (no Chromium, no sandbox), or `undefined` when they can; for `GET /readyz`. */
  unavailable?(): Promise<string | undefined>;
  /** Lets go of what the launcher keeps for all its browsers (the parent of their cgroups), once they ended; the server calls it as it closes. */
  close?(): Promise<void>;
}

/** A browser process could not be started. */
export class BrowserLaunchError extends Error {
  /** Stable code of the failure. */
  readonly code = "browser_launch_failed";

  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = "BrowserLaunchError";
  }
}

/** This launcher runs browsers where a profile's state cannot be loaded or read back (without their sandbox). */
export class ProfilesUnsupportedError extends BrowserLaunchError {
  constructor(message: string) {
    super(message);
    this.name = "ProfilesUnsupportedError";
  }
}
