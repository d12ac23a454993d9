/** What one attempt sends: a `fetch` init with the method and headers always set, and the caller's signal, if any. */
export interface TransportInit extends RequestInit {
  method: string;
  headers: Headers;
  /**
   * Resolve a 2xx response as soon as its headers arrive, its body a stream that the
   * caller's signal still stops: `timeoutMs` then covers the headers only. Any other
   * status is read whole, as without it.
   */
  stream?: boolean;
}

/** What a transport rejects with when `timeoutMs` passed before the whole response arrived. */
export const timedOut = new Error("timed out");

/**
 * Sends one HTTP request, `fetch`-style. It resolves only once the whole body has
 * arrived (but see {@link TransportInit.stream}), and rejects with {@link timedOut} if
 * that takes longer than `timeoutMs`, so that the call's timeout and abort signal cover
 * the body too. Each transport keeps
 * its own timer: an `AbortController` per request cost Node more than the rest of a
 * local call's bookkeeping.
 */
export type Transport = (url: string, init: TransportInit, timeoutMs: number) => Promise<Response>;

/** A `fetch`-compatible function; it must honour `init.signal`. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

/** Turns a `fetch` into a {@link Transport} by reading the body before resolving (unless streaming). */
export function bufferedFetch(fetch: FetchLike): Transport {
  return async (url, { stream, ...init }, timeoutMs) => {
    // One controller carries both the timeout and the caller's abort.
    const caller = init.signal;
    const controller = new AbortController();
    let late = false;
    let streaming = false;
    const timer = setTimeout(() => {
      late = true;
      controller.abort();
    }, timeoutMs);
    const forward = () => controller.abort();
    caller?.addEventListener("abort", forward);
    try {
      // A copy of the headers: the client may reuse its own for the next call, and a fetch
      // wrapper may add to what it is given.
      const response = await fetch(url, { ...init, headers: new Headers(init.headers), signal: controller.signal });
      // The body streams on: the caller's abort keeps reaching it through the controller.
      if (stream && response.ok && response.body) return ((streaming = true), response);
      const body = await response.arrayBuffer();
      // An empty body must be null: the Response constructor refuses any body for 204 and 304.
      return new Response(body.byteLength ? body : null, response);
    } catch (error) {
      throw late ? timedOut : error;
    } finally {
      clearTimeout(timer);
      if (!streaming) caller?.removeEventListener("abort", forward);
    }
  };
}
