/** Bounds of the DevTools endpoint and of each client connection it bridges to a channel. */
export interface CdpEndpointLimits {
  /** WebSocket clients at once per browser (the server's own WebMCP session is not one of them). */
  maxClients: number;
  /** The largest message a client may send; a larger one closes its connection (1009). */
  maxMessageBytes: number;
  /** Bytes queued for a client that does not read; past this it is disconnected (1008), never the others. */
  maxBufferedBytes: number;
  /** Messages per second each client connection may send, sustained (a second's worth at once); `0`: no limit. */
  messageRate: number;
  /** Bytes per second each client connection may send, sustained; `0`: no limit. */
  byteRate: number;
  /** Messages per second all the DevTools connections of one project may send together; `0`: no limit. */
  projectMessageRate: number;
  /** Bytes per second all the DevTools connections of one project may send together; `0`: no limit. */
  projectByteRate: number;
  /** Commands of one client awaiting the browser's answer; past it a command is answered with an error, not sent. */
  maxPending: number;
  /** Milliseconds on a monotonic clock, for the rates. Default `performance.now`; tests pass a fake one. */
  clock?: () => number;
  /** How often a silent client is pinged; one silent a whole interval after a ping is closed. Default 30 s. */
  heartbeatMs?: number;
}
