/** What one attempt sends: a `fetch` init with the method, headers and signal always set. */
export interface TransportInit extends RequestInit {
  method: string;
  headers: Headers;
  signal: AbortSignal;
}

/**
 * Sends one HTTP request, `fetch`-style. It resolves only once the whole body has
 * arrived, so that the call's timeout and abort signal cover the body too.
 */
export type Transport = (url: string, init: TransportInit) => Promise<Response>;

/** A `fetch`-compatible function; it must honour `init.signal`. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Turns a `fetch` into a {@link Transport} by reading the body before resolving. */
export function bufferedFetch(fetch: FetchLike): Transport {
  return async (url, init) => {
    const response = await fetch(url, init);
    const body = await response.arrayBuffer();
    // An empty body must be null: the Response constructor refuses any body for 204 and 304.
    return new Response(body.byteLength ? body : null, response);
  };
}
