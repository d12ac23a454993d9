/** Transport and facade rules of one operation, derived from the API document. */
export interface OperationRules {
  /** The response is one page of a list (`X-Has-More`, `X-Next-Offset`): the facade adds `<method>All`. */
  paged?: true;
  /** Never retried, whatever the method: the operation can answer `outcome_unknown`. */
  noRetry?: true;
  /** Default of the body's `timeout_sec`; the request timeout always exceeds the value sent. */
  timeoutSec?: number;
  /**
   * The operation answers `If-None-Match` with `304` and sends an `ETag`: the facade adds
   * `<method>IfChanged`, which resolves to a `ConditionalResponse`.
   */
  conditional?: true;
  /** The success body is bytes, not JSON: the facade resolves to a `Uint8Array` of them. */
  binary?: true;
  /**
   * The success body is a stream of Server-Sent Events (`text/event-stream`): the facade
   * resolves to its `ReadableStream` once the headers arrive, and the timeout covers only those.
   */
  stream?: true;
  /** Binary parts of a multipart body, by name, with their content types. */
  files?: Record<string, string>;
}

/**
 * One row of the generated operation table: the facade's resource and method name (from
 * `x-client`), the HTTP method and path (whose one `{placeholder}`, if any, names the
 * path parameter), where the argument after it goes (`query`, a `json` or multipart
 * `form` body, or `""` for nothing), and the operation's rules.
 */
export type OperationRow = readonly [
  resource: string,
  method: string,
  httpMethod: string,
  path: string,
  input: "" | "query" | "json" | "form",
  rules?: OperationRules,
];
