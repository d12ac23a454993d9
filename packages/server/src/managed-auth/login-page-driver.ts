import { setTimeout as sleep } from "node:timers/promises";
import { CdpConnection } from "../cdp/cdp-connection.js";
import type { CdpRouter } from "../cdp/cdp-router.js";
import { type LoginPageReading, READ_LOGIN_PAGE } from "./login-page-reading.js";

/** The page moved away or the browser ended while a robot step ran; the step is retried or the flow ends. */
export class LoginPageError extends Error {
  readonly code = "login_page_unavailable";
}

/** How long a page may take to settle after a navigation or a click before it is read as it is. */
const SETTLE_LIMIT_MS = 15_000;
const POLL_MS = 100;
/** How long after a navigation or a click the page is first read: a navigation a click starts begins within it. */
const FIRST_LOOK_MS = 150;
const WORLD = "browser-service-login";

/**
 * Drives the one tab of a login flow's browser over DevTools: navigates, reads the page
 * ({@link READ_LOGIN_PAGE}, in an isolated world), fills inputs and clicks. A value is
 * put in only after the main frame's URL, read from the browser itself just before,
 * passes `mayType`, and only into the input of that same document.
 */
export class LoginPageDriver {
  readonly #connection: CdpConnection;
  readonly #session: string;

  private constructor(connection: CdpConnection, session: string) {
    this.#connection = connection;
    this.#session = session;
  }

  /** Attaches to the browser's first tab. */
  static async open(router: CdpRouter): Promise<LoginPageDriver> {
    const connection = await CdpConnection.open(router);
    try {
      const { targetInfos } = await connection.send<{ targetInfos: { targetId: string; type: string }[] }>("Target.getTargets", { filter: [{ type: "page" }] });
      const page = targetInfos.find((target) => target.type === "page");
      if (page === undefined) throw new LoginPageError("The login browser has no tab.");
      const { sessionId } = await connection.send<{ sessionId: string }>("Target.attachToTarget", { targetId: page.targetId, flatten: true });
      await connection.send("Page.enable", {}, sessionId);
      return new LoginPageDriver(connection, sessionId);
    } catch (error) {
      await connection.close();
      throw error;
    }
  }

  /** Opens `url` and waits until the page settles; `timeoutMs` bounds the navigation itself. */
  async navigate(url: string, timeoutMs: number): Promise<void> {
    const { errorText } = await this.#send<{ errorText?: string }>("Page.navigate", { url }, timeoutMs);
    if (errorText !== undefined && errorText !== "net::ERR_ABORTED") throw new LoginPageError(`The page ${url} did not load: ${errorText}.`);
    await this.settle();
  }

  /** The main frame's URL as the browser reports it. */
  async url(): Promise<string> {
    const { frameTree } = await this.#send<{ frameTree: { frame: { id: string; url: string } } }>("Page.getFrameTree");
    return frameTree.frame.url;
  }

  /** Reads the page as it is now. */
  async read(): Promise<LoginPageReading> {
    return (await this.#evaluate(READ_LOGIN_PAGE)) as LoginPageReading;
  }

  /**
   * Puts `text` into the input or text area at `selector` (replacing its value, then
   * firing `input` and `change` as typing does) when the page's URL passes `mayType`:
   * `typed`, `refused` (the URL did not pass, or the document changed origin since) or
   * `missing` (no such element any more). The value is set on that element by a script of
   * the isolated world, and only while the document is still of the origin just checked:
   * no keystroke goes to whatever frame holds the focus, and a page that navigated
   * meanwhile gets nothing.
   */
  async type(selector: string, text: string, mayType: (url: string) => boolean): Promise<"typed" | "refused" | "missing"> {
    const url = await this.url();
    if (!mayType(url)) return "refused";
    const origin = new URL(url).origin;
    const outcome = await this.#evaluate(
      `(() => {
        if (location.origin !== ${JSON.stringify(origin)}) return "refused";
        const el = document.querySelector(${JSON.stringify(selector)});
        const kind = el instanceof HTMLInputElement ? HTMLInputElement : el instanceof HTMLTextAreaElement ? HTMLTextAreaElement : undefined;
        if (kind === undefined) return "missing";
        el.focus();
        Object.getOwnPropertyDescriptor(kind.prototype, "value").set.call(el, ${JSON.stringify(text)});
        el.dispatchEvent(new Event("input", { bubbles: true }));
        el.dispatchEvent(new Event("change", { bubbles: true }));
        return "typed";
      })()`,
    );
    return outcome === "typed" || outcome === "missing" ? outcome : "refused";
  }

  /** Clicks the element at `selector`; returns whether it was there. */
  async click(selector: string): Promise<boolean> {
    return (
      (await this.#evaluate(
        `(() => { const el = document.querySelector(${JSON.stringify(selector)}); if (!el) return false; el.click(); return true; })()`,
      )) === true
    );
  }

  /** Submits the form of the input at `selector` as pressing Enter would. */
  async submitFormOf(selector: string): Promise<boolean> {
    return (
      (await this.#evaluate(
        `(() => { const el = document.querySelector(${JSON.stringify(selector)}); if (!el || !el.form) return false; el.form.requestSubmit(); return true; })()`,
      )) === true
    );
  }

  /**
   * Waits until the page has loaded and its URL stayed the same over two readings, or
   * {@link SETTLE_LIMIT_MS} passed (a page that keeps changing is then read as it is).
   */
  async settle(): Promise<void> {
    await sleep(FIRST_LOOK_MS);
    let last = "";
    const until = Date.now() + SETTLE_LIMIT_MS;
    while (Date.now() < until) {
      const now = await this.#evaluate("document.readyState + ' ' + location.href").catch(() => "");
      if (typeof now === "string" && now.startsWith("complete ") && now === last) return;
      last = typeof now === "string" ? now : "";
      await sleep(POLL_MS);
    }
  }

  /** Detaches from the browser. */
  async close(): Promise<void> {
    await this.#connection.close();
  }

  async #evaluate(expression: string): Promise<unknown> {
    const { frameTree } = await this.#send<{ frameTree: { frame: { id: string } } }>("Page.getFrameTree");
    // A world of its own: the page's scripts cannot replace what the reading code calls.
    const { executionContextId } = await this.#send<{ executionContextId: number }>("Page.createIsolatedWorld", {
      frameId: frameTree.frame.id,
      worldName: WORLD,
    });
    const { result, exceptionDetails } = await this.#send<{ result: { value?: unknown }; exceptionDetails?: { text: string } }>("Runtime.evaluate", {
      expression,
      contextId: executionContextId,
      returnByValue: true,
    });
    if (exceptionDetails !== undefined) throw new LoginPageError(`Reading the page failed: ${exceptionDetails.text}`);
    return result.value;
  }

  async #send<T = Record<string, unknown>>(method: string, params: object = {}, timeoutMs?: number): Promise<T> {
    try {
      return await this.#connection.send<T>(method, params, this.#session, timeoutMs);
    } catch (error) {
      throw new LoginPageError(`The login page did not answer ${method}: ${(error as Error).message}`, { cause: error });
    }
  }
}
