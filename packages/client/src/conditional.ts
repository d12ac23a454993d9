/**
 * What a conditional read (`client.webmcp.listToolsIfChanged(browser, etag)`) resolves
 * to: the new body with its `ETag`, or word that the caller's copy is still current.
 */
export type ConditionalResponse<T> =
  | {
      /** The resource differs from the version named (or none was named): here it is. */
      changed: true;
      /** The body, as the plain method would resolve to it. */
      data: T;
      /** Its version, to pass next time; `undefined` if the server sent no `ETag`. */
      etag: string | undefined;
    }
  | {
      /** The server answered `304 Not Modified`: the version named is the current one. */
      changed: false;
      /** The current version (the server's `ETag`, else the one sent). */
      etag: string;
    };
