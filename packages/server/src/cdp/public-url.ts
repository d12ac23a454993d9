import type { IncomingHttpHeaders } from "node:http";
import { type LiveViewAccess, liveViewToken } from "./browser-token.js";

// A Host header is reflected into `cdp_ws_url` only when it is a plain host and port.
const HOST_HEADER = /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

/** `--public-url` is not an absolute http(s) URL without query or fragment. */
export class PublicUrlError extends Error {
  /** Stable code of the failure. */
  readonly code = "invalid_public_url";

  constructor(message: string) {
    super(message);
    this.name = "PublicUrlError";
  }
}

/** The URLs of a browser the API shows (the spec's `Browser.cdp_ws_url`, `live_view_url`, `live_view_read_only_url`). */
export interface BrowserUrlSet {
  cdp_ws_url: string;
  live_view_url: string;
  live_view_read_only_url: string;
}

/**
 * Where clients reach a browser through the server: `--public-url` when the server sits
 * behind a proxy or TLS (`https://h/p`: DevTools at `wss://h/p/...`, the live view at
 * `https://h/p/...`), else the request's own `Host`, so that the URLs name the host the
 * client used. A Host that is not a plain host and port falls back to the address the
 * server listens on.
 */
export class BrowserUrls {
  readonly #fixed: { http: string; ws: string } | undefined;
  readonly #fallbackHost: () => string;

  /** Checks `publicUrl` (throws {@link PublicUrlError}); `fallbackHost` is the listening `host:port`. */
  constructor(publicUrl: string | undefined, fallbackHost: () => string) {
    this.#fallbackHost = fallbackHost;
    if (publicUrl === undefined) return;
    let url: URL;
    try {
      url = new URL(publicUrl);
    } catch {
      throw new PublicUrlError(`--public-url must be an absolute URL such as https://browsers.example.org; received "${publicUrl}".`);
    }
    if ((url.protocol !== "http:" && url.protocol !== "https:") || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
      throw new PublicUrlError(`--public-url must be an http or https URL without credentials, query or fragment; received "${publicUrl}".`);
    }
    const rest = `//${url.host}${url.pathname.replace(/\/+$/, "")}`;
    this.#fixed = { http: `${url.protocol}${rest}`, ws: `${url.protocol === "https:" ? "wss:" : "ws:"}${rest}` };
  }

  /**
   * The URLs of a browser for a request with these headers; without tokens for a browser
   * that has none (it no longer runs). The live view tokens are derived from `token`.
   */
  forBrowser(headers: IncomingHttpHeaders, browserId: string, token: string | undefined): BrowserUrlSet {
    const host = this.#fixed === undefined ? (hostOf(headers) ?? this.#fallbackHost()) : undefined;
    const ws = this.#fixed?.ws ?? `ws://${host}`;
    const http = this.forPage(headers);
    const path = `/browsers/${encodeURIComponent(browserId)}`;
    const live = (access: LiveViewAccess) => `${http}${path}/live${token === undefined ? "" : `#token=${liveViewToken(token, access)}`}`;
    return {
      cdp_ws_url: `${ws}${path}/cdp${token === undefined ? "" : `?token=${token}`}`,
      live_view_url: live("control"),
      live_view_read_only_url: live("watch"),
    };
  }

  /** The service's HTTP base URL (no trailing slash) for a page it links to, as {@link forBrowser} chooses it. */
  forPage(headers: IncomingHttpHeaders): string {
    return this.#fixed?.http ?? `http://${hostOf(headers) ?? this.#fallbackHost()}`;
  }
}

function hostOf(headers: IncomingHttpHeaders): string | undefined {
  const host = headers.host;
  return host !== undefined && HOST_HEADER.test(host) ? host : undefined;
}

/**
 * The origins of the service's own pages, as browsers serialize `Origin`: the address the
 * server listens on (for a loopback address, also `localhost` and the other loopback
 * spelling), and `--public-url`'s. Behind any other name, pages are the service's own only
 * through `--public-url`.
 */
export function ownOrigins(listening: string, publicUrl: string | undefined): string[] {
  const { origin, hostname, port } = new URL(listening);
  const origins = [origin];
  if (hostname === "localhost" || hostname === "[::1]" || /^127\./.test(hostname)) {
    for (const loopback of ["localhost", "127.0.0.1", "[::1]"]) origins.push(new URL(`http://${loopback}:${port}`).origin);
  }
  if (publicUrl !== undefined) origins.push(new URL(publicUrl).origin);
  return origins;
}
