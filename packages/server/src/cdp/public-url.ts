import type { IncomingHttpHeaders } from "node:http";

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

/**
 * Where clients reach the server's DevTools endpoint: the WebSocket form of
 * `--public-url` when the server sits behind a proxy or TLS (`https://h/p` becomes
 * `wss://h/p`), else `ws://` and the request's own `Host`, so that the URL names the
 * host the client used. A Host that is not a plain host and port falls back to the
 * address the server listens on.
 */
export class CdpUrls {
  readonly #fixedBase: string | undefined;
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
    this.#fixedBase = `${url.protocol === "https:" ? "wss:" : "ws:"}//${url.host}${url.pathname.replace(/\/+$/, "")}`;
  }

  /** The DevTools URL of a browser for a request with these headers; without a token for a browser that has none. */
  forBrowser(headers: IncomingHttpHeaders, browserId: string, token: string | undefined): string {
    const base = this.#fixedBase ?? `ws://${hostOf(headers) ?? this.#fallbackHost()}`;
    return `${base}/browsers/${encodeURIComponent(browserId)}/cdp${token === undefined ? "" : `?token=${token}`}`;
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
