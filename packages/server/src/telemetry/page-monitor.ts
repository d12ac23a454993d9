import type { TelemetryEvent } from "@browser-service/types";
import { CdpConnection, type CdpEvent } from "../cdp/cdp-connection.js";
import type { CdpRouter } from "../cdp/cdp-router.js";
import type { ServerLog } from "../observe/server-log.js";
import { type BrowserTelemetry, cutText } from "./browser-telemetry.js";

/** The categories a page monitor serves: each needs the service's own DevTools session on every tab. */
const PAGE_CATEGORIES = ["console", "page", "network", "interaction", "screenshot"] as const;

/** How often the newest tab is captured for the `screenshot` category. */
export const SCREENSHOT_EVERY_MS = 5_000;
/**
 * The isolated world the interaction listeners run in: the page's own scripts can neither
 * see nor call its binding, so they cannot forge interactions (they can only cause them).
 */
const INTERACTION_WORLD = "browser-service-telemetry";
const INTERACTION_BINDING = "__browserServiceInteraction";
/**
 * The listeners of the `interaction` category. The text typed is never sent: a key that
 * types a character is reported as `character`, only keys such as Enter or Tab by name.
 */
const INTERACTION_SCRIPT = `(() => {
  // Looked up at each call: in a new document the binding may come a moment after the script.
  const send = (payload) => { if (typeof globalThis.${INTERACTION_BINDING} === "function") globalThis.${INTERACTION_BINDING}(payload); };
  const selectorOf = (node) => {
    const parts = [];
    for (let el = node; el && el.nodeType === 1 && parts.length < 5; el = el.parentElement) {
      let part = el.tagName.toLowerCase();
      if (el.id) { parts.unshift(part + "#" + el.id); break; }
      const parent = el.parentElement;
      if (parent) part += ":nth-child(" + (Array.prototype.indexOf.call(parent.children, el) + 1) + ")";
      parts.unshift(part);
    }
    return parts.join(" > ").slice(0, 512);
  };
  const tagOf = (node) => (node && node.nodeType === 1 ? node.tagName : "");
  addEventListener("click", (e) => {
    send(JSON.stringify({ t: "click", x: e.clientX, y: e.clientY, selector: selectorOf(e.target), tag: tagOf(e.target), text: String((e.target && e.target.innerText) || "").trim().slice(0, 256) }));
  }, true);
  addEventListener("keydown", (e) => {
    send(JSON.stringify({ t: "key", key: e.key.length === 1 ? "character" : e.key.slice(0, 32), selector: selectorOf(e.target), tag: tagOf(e.target) }));
  }, true);
  // A scroll event comes once the view moved: the start is where the last one settled.
  let settled = [scrollX, scrollY], target = "", timer = 0;
  addEventListener("scroll", (e) => {
    if (timer === 0) target = e.target === document ? "" : selectorOf(e.target);
    clearTimeout(timer);
    timer = setTimeout(() => {
      send(JSON.stringify({ t: "scroll", from_x: settled[0], from_y: settled[1], to_x: scrollX, to_y: scrollY, target_selector: target }));
      settled = [scrollX, scrollY];
      timer = 0;
    }, 300);
  }, true);
})();`;

/** Response bodies kept for structured text (JSON, XML, form data), in bytes of text. */
export const STRUCTURED_BODY_CHARS = 8 * 1024;
/** Response bodies kept for other text. */
export const TEXT_BODY_CHARS = 4 * 1024;
/** The most characters of a request's or response's headers an event keeps, names and values together. */
const HEADER_CHARS = 8 * 1024;
/** The most characters of one header value kept. */
const HEADER_VALUE_CHARS = 1024;

/** Headers as a page's request or its response had them, cut to {@link HEADER_CHARS}; and whether anything was cut. */
function cutHeaders(headers: unknown): { headers: Record<string, string>; cut: boolean } {
  const kept: Record<string, string> = {};
  let cut = false;
  let left = HEADER_CHARS;
  if (headers === null || typeof headers !== "object") return { headers: kept, cut };
  for (const [name, raw] of Object.entries(headers)) {
    const value = cutText(String(raw), HEADER_VALUE_CHARS);
    cut ||= value.cut;
    left -= name.length + value.text.length;
    if (left < 0) return { headers: kept, cut: true };
    // Defined, not assigned: a header named __proto__ stays a header.
    Object.defineProperty(kept, name, { value: value.text, enumerable: true, writable: true, configurable: true });
  }
  return { headers: kept, cut };
}

/** Requests followed at once per tab for their response; past it the oldest is forgotten. */
const MAX_IN_FLIGHT = 1000;

const STRUCTURED = /^(application\/(?:[\w.+-]+\+)?(?:json|xml)|application\/x-www-form-urlencoded|multipart\/form-data|text\/xml)\b/i;
const TEXTUAL = /^(text\/|application\/(?:javascript|ecmascript|x-javascript))/i;

/** The console's own argument text, as the DevTools console prints a `RemoteObject`. */
function argumentText(arg: Record<string, unknown>): string {
  if (typeof arg.value === "string") return arg.value;
  if (arg.value !== undefined) return JSON.stringify(arg.value) ?? String(arg.value);
  if (typeof arg.unserializableValue === "string") return arg.unserializableValue;
  if (typeof arg.description === "string") return arg.description;
  return String(arg.type ?? "");
}

/** Whether a tab monitor should run: any category it serves is on. */
export function needsPageMonitor(recorder: BrowserTelemetry): boolean {
  return PAGE_CATEGORIES.some((category) => recorder.wants(category));
}

/** A request followed for its response: its URL and what its response said. */
interface InFlight {
  url: string;
  response?: { status: number; mime: string; headers: { headers: Record<string, string>; cut: boolean } };
}

/**
 * The service's own DevTools session that turns what a browser's tabs do into events of
 * the categories its telemetry asks for: `console` (console calls, uncaught exceptions),
 * `page` (navigation, DOMContentLoaded, load, LCP, layout shifts) and `network`
 * (requests, responses with text bodies cut at their limits, failures). Only the domains
 * of categories that are on are enabled, so a browser that asks for none of them costs
 * nothing here. A new tab waits until its domains are on, so its first document's events
 * are seen. This session is the service's: none of its traffic is a client's
 * `cdp_command`. Page text in events is data: it is cut, never interpreted.
 */
export class PageMonitor {
  readonly #connection: CdpConnection;
  readonly #recorder: BrowserTelemetry;
  readonly #log: Pick<ServerLog, "warn">;
  readonly #inFlight = new Map<string, Map<string, InFlight>>();
  // Tabs being set up (their domains enabled); they settle, never reject.
  readonly #following = new Set<Promise<unknown>>();
  // Tabs followed for screenshots, the newest last.
  #tabs: string[] = [];
  #screenshots: NodeJS.Timeout | undefined;
  #capturing = false;

  private constructor(connection: CdpConnection, recorder: BrowserTelemetry, log: Pick<ServerLog, "warn">) {
    this.#connection = connection;
    this.#recorder = recorder;
    this.#log = log;
    if (recorder.wants("screenshot")) {
      this.#screenshots = setInterval(() => this.#screenshot(), SCREENSHOT_EVERY_MS);
      this.#screenshots.unref();
    }
    // A message too large to read (a 10 MB console line) is lost, and counted as dropped.
    connection.onDropped(() => recorder.lost(1));
    connection.onEvent((event) => {
      try {
        this.#handle(event);
      } catch (error) {
        this.#log.warn({ err: error, browser: recorder.browserId, method: event.method }, "a telemetry event of a page could not be read; it was skipped");
      }
    });
  }

  /** Opens the session and follows every tab (those open now too). */
  static async open(router: CdpRouter, recorder: BrowserTelemetry, log: Pick<ServerLog, "warn">): Promise<PageMonitor> {
    const monitor = new PageMonitor(await CdpConnection.open(router), recorder, log);
    try {
      await monitor.#connection.send("Target.setAutoAttach", { autoAttach: true, waitForDebuggerOnStart: true, flatten: true, filter: [{ type: "page" }] });
      // The tabs open now were attached before that answer, and do not wait for this
      // session: their domains are on before the browser is handed over (its start_url).
      await Promise.all([...monitor.#following]);
    } catch (error) {
      await monitor.close();
      throw error;
    }
    return monitor;
  }

  async close(): Promise<void> {
    clearInterval(this.#screenshots);
    await this.#connection.close();
  }

  /** The newest tab's viewport, one capture at a time (a slow one skips the next tick). */
  #screenshot(): void {
    const sessionId = this.#tabs[this.#tabs.length - 1];
    if (sessionId === undefined || this.#capturing || !this.#recorder.wants("screenshot")) return;
    this.#capturing = true;
    this.#connection
      .send<{ data: string }>("Page.captureScreenshot", { format: "png" }, sessionId)
      .then(
        ({ data }) => this.#emit("screenshot", "monitor_screenshot", "Page.captureScreenshot", sessionId, { png: data }),
        () => undefined,
      )
      .catch((error: unknown) => this.#log.warn({ err: error, browser: this.#recorder.browserId }, "a screenshot could not be captured as an event"))
      .finally(() => {
        this.#capturing = false;
      });
  }

  /** An interaction the listeners of the isolated world reported, checked field by field: only numbers and cut text pass. */
  #interaction(sessionId: string | undefined, payload: string): void {
    if (payload.length > 4096) return;
    let report: Record<string, unknown>;
    try {
      report = JSON.parse(payload) as Record<string, unknown>;
    } catch {
      return;
    }
    const text = (value: unknown, max: number) => (typeof value === "string" ? value.slice(0, max) : "");
    const number = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : 0);
    if (report.t === "click") {
      this.#emit("interaction", "interaction_click", "Runtime.bindingCalled", sessionId, {
        x: number(report.x),
        y: number(report.y),
        selector: text(report.selector, 512),
        tag: text(report.tag, 64),
        text: text(report.text, 256),
      });
    } else if (report.t === "key") {
      this.#emit("interaction", "interaction_key", "Runtime.bindingCalled", sessionId, {
        key: text(report.key, 32),
        selector: text(report.selector, 512),
        tag: text(report.tag, 64),
      });
    } else if (report.t === "scroll") {
      this.#emit("interaction", "interaction_scroll_settled", "Runtime.bindingCalled", sessionId, {
        from_x: number(report.from_x),
        from_y: number(report.from_y),
        to_x: number(report.to_x),
        to_y: number(report.to_y),
        target_selector: text(report.target_selector, 512),
      });
    }
  }

  #emit(
    category: (typeof PAGE_CATEGORIES)[number],
    type: string,
    cdpEvent: string,
    sessionId: string | undefined,
    data: Record<string, unknown>,
    truncated = false,
  ): void {
    const source: TelemetryEvent["source"] = { kind: "cdp", event: cdpEvent };
    if (sessionId !== undefined) source.metadata = { session_id: sessionId };
    this.#recorder.emit(category, type, source, data, truncated);
  }

  #handle({ method, params, sessionId }: CdpEvent): void {
    const recorder = this.#recorder;
    switch (method) {
      case "Target.attachedToTarget":
        this.#follow(params.sessionId as string, params.waitingForDebugger === true);
        return;
      case "Target.detachedFromTarget":
        this.#inFlight.delete(params.sessionId as string);
        this.#tabs = this.#tabs.filter((tab) => tab !== params.sessionId);
        return;
      case "Runtime.bindingCalled":
        if (recorder.wants("interaction") && params.name === INTERACTION_BINDING) this.#interaction(sessionId, String(params.payload ?? ""));
        return;
      case "Runtime.consoleAPICalled": {
        if (!recorder.wants("console")) return;
        const level = String(params.type ?? "log");
        let truncated = false;
        const args = (Array.isArray(params.args) ? (params.args as Record<string, unknown>[]) : []).slice(0, 32).map((arg) => {
          const cut = cutText(argumentText(arg));
          truncated ||= cut.cut;
          return cut.text;
        });
        this.#emit("console", level === "error" ? "console_error" : "console_log", method, sessionId, { level, text: args[0] ?? "", args }, truncated);
        return;
      }
      case "Runtime.exceptionThrown": {
        if (!recorder.wants("console")) return;
        const details = (params.exceptionDetails ?? {}) as Record<string, unknown>;
        const exception = (details.exception ?? {}) as Record<string, unknown>;
        const text = cutText(`${String(details.text ?? "Uncaught")} ${typeof exception.description === "string" ? exception.description : ""}`.trim());
        this.#emit(
          "console",
          "console_error",
          method,
          sessionId,
          { text: text.text, line: details.lineNumber, column: details.columnNumber, source_url: cutText(String(details.url ?? "")).text },
          text.cut,
        );
        return;
      }
      case "Page.frameNavigated": {
        const frame = (params.frame ?? {}) as Record<string, unknown>;
        // The tab's own document: a frame without a parent.
        if (!recorder.wants("page") || frame.parentId !== undefined) return;
        const url = cutText(String(frame.url ?? ""));
        this.#emit("page", "page_navigation", method, sessionId, { url: url.text, frame_id: frame.id, loader_id: frame.loaderId }, url.cut);
        return;
      }
      case "Page.domContentEventFired":
        if (recorder.wants("page")) this.#emit("page", "page_dom_content_loaded", method, sessionId, {});
        return;
      case "Page.loadEventFired":
        if (recorder.wants("page")) this.#emit("page", "page_load", method, sessionId, {});
        return;
      case "PerformanceTimeline.timelineEventAdded":
        if (recorder.wants("page")) this.#timeline(sessionId, (params.event ?? {}) as Record<string, unknown>);
        return;
      case "Network.requestWillBeSent":
        if (recorder.wants("network") && sessionId !== undefined) this.#request(sessionId, params);
        return;
      case "Network.responseReceived":
        if (recorder.wants("network") && sessionId !== undefined) this.#response(sessionId, params);
        return;
      case "Network.loadingFinished":
        if (recorder.wants("network") && sessionId !== undefined) this.#finished(sessionId, String(params.requestId));
        return;
      case "Network.loadingFailed":
        if (recorder.wants("network") && sessionId !== undefined) this.#failed(sessionId, params);
        return;
    }
  }

  #follow(sessionId: string, waiting: boolean): void {
    const send = (method: string, params: object = {}) => this.#connection.send(method, params, sessionId);
    const recorder = this.#recorder;
    const enabling: Promise<unknown>[] = [];
    // Runtime.bindingCalled, the interaction listeners' reports, is only sent with Runtime on.
    if (recorder.wants("console") || recorder.wants("interaction")) enabling.push(send("Runtime.enable"));
    if (recorder.wants("page")) {
      enabling.push(send("Page.enable"), send("PerformanceTimeline.enable", { eventTypes: ["largest-contentful-paint", "layout-shift"] }));
    }
    if (recorder.wants("network")) enabling.push(send("Network.enable", { maxTotalBufferSize: 4 * 1024 * 1024, maxResourceBufferSize: 1024 * 1024 }));
    if (recorder.wants("interaction")) {
      // Chromium injects a script on new documents only into a tab whose Page domain is on.
      if (!recorder.wants("page")) enabling.push(send("Page.enable"));
      enabling.push(
        send("Runtime.addBinding", { name: INTERACTION_BINDING, executionContextName: INTERACTION_WORLD }).then(() =>
          send("Page.addScriptToEvaluateOnNewDocument", { source: INTERACTION_SCRIPT, worldName: INTERACTION_WORLD, runImmediately: true }),
        ),
      );
    }
    if (recorder.wants("screenshot")) this.#tabs.push(sessionId);
    const following: Promise<unknown> = Promise.allSettled(enabling)
      .then(() => (waiting ? send("Runtime.runIfWaitingForDebugger") : undefined))
      .catch(() => undefined)
      .finally(() => this.#following.delete(following));
    this.#following.add(following);
  }

  #timeline(sessionId: string | undefined, event: Record<string, unknown>): void {
    if (event.type === "largest-contentful-paint") {
      const lcp = (event.lcpDetails ?? {}) as Record<string, unknown>;
      const url = cutText(String(lcp.url ?? ""));
      this.#emit(
        "page",
        "page_lcp",
        "PerformanceTimeline.timelineEventAdded",
        sessionId,
        { render_time_ms: Number(lcp.renderTime ?? 0) * 1000, size: lcp.size, url: url.text, frame_id: event.frameId },
        url.cut,
      );
    } else if (event.type === "layout-shift") {
      const shift = (event.layoutShiftDetails ?? {}) as Record<string, unknown>;
      this.#emit("page", "page_layout_shift", "PerformanceTimeline.timelineEventAdded", sessionId, { score: shift.value, frame_id: event.frameId });
    }
  }

  #requests(sessionId: string): Map<string, InFlight> {
    let requests = this.#inFlight.get(sessionId);
    if (requests === undefined) {
      requests = new Map();
      this.#inFlight.set(sessionId, requests);
    }
    return requests;
  }

  #request(sessionId: string, params: Record<string, unknown>): void {
    const request = (params.request ?? {}) as Record<string, unknown>;
    const url = cutText(String(request.url ?? ""));
    // A login flow's browser posts the stored secrets it typed: its bodies are never kept.
    const post = typeof request.postData === "string" && !this.#recorder.secretInputs ? cutText(request.postData) : undefined;
    const requests = this.#requests(sessionId);
    if (requests.size >= MAX_IN_FLIGHT) requests.delete(requests.keys().next().value as string);
    requests.set(String(params.requestId), { url: url.text });
    const headers = cutHeaders(request.headers);
    const data: Record<string, unknown> = {
      request_id: params.requestId,
      url: url.text,
      method: request.method,
      resource_type: params.type,
      headers: headers.headers,
    };
    if (post !== undefined) data.post_data = post.text;
    this.#emit("network", "network_request", "Network.requestWillBeSent", sessionId, data, url.cut || post?.cut === true || headers.cut);
  }

  #response(sessionId: string, params: Record<string, unknown>): void {
    const request = this.#inFlight.get(sessionId)?.get(String(params.requestId));
    if (request === undefined) return;
    const response = (params.response ?? {}) as Record<string, unknown>;
    request.response = { status: Number(response.status ?? 0), mime: String(response.mimeType ?? "").slice(0, 256), headers: cutHeaders(response.headers) };
  }

  #finished(sessionId: string, requestId: string): void {
    const requests = this.#inFlight.get(sessionId);
    const request = requests?.get(requestId);
    requests?.delete(requestId);
    const response = request?.response;
    if (request === undefined || response === undefined) return;
    const data: Record<string, unknown> = {
      request_id: requestId,
      url: request.url,
      status: response.status,
      mime_type: response.mime,
      headers: response.headers.headers,
    };
    const limit = STRUCTURED.test(response.mime) ? STRUCTURED_BODY_CHARS : TEXTUAL.test(response.mime) ? TEXT_BODY_CHARS : undefined;
    if (limit === undefined) {
      // Binary (images, fonts, media): metadata only.
      this.#emit("network", "network_response", "Network.loadingFinished", sessionId, data, response.headers.cut);
      return;
    }
    this.#connection
      .send<{ body: string; base64Encoded: boolean }>("Network.getResponseBody", { requestId }, sessionId)
      .then(
        ({ body, base64Encoded }) => {
          if (base64Encoded) return { text: undefined, cut: false };
          return cutText(body, limit);
        },
        () => ({ text: undefined, cut: false }),
      )
      .then(({ text, cut }) => {
        if (text !== undefined) data.body = text;
        this.#emit("network", "network_response", "Network.loadingFinished", sessionId, data, cut || response.headers.cut);
      })
      .catch((error: unknown) => this.#log.warn({ err: error, browser: this.#recorder.browserId }, "a response could not be captured as an event"));
  }

  #failed(sessionId: string, params: Record<string, unknown>): void {
    const requestId = String(params.requestId);
    const request = this.#inFlight.get(sessionId)?.get(requestId);
    this.#inFlight.get(sessionId)?.delete(requestId);
    this.#emit("network", "network_loading_failed", "Network.loadingFailed", sessionId, {
      request_id: requestId,
      url: request?.url,
      error_text: params.errorText,
      canceled: params.canceled === true,
    });
  }
}
