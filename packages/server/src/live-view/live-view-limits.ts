/** Bounds of the live view: what viewers may cost the server and the browsers. */
export interface LiveViewLimits {
  /** Viewers at once per browser; one more is closed with 4429. */
  maxViewers: number;
  /** The most frames per second a tab's screen is captured at. */
  maxFps: number;
  /** The largest frame, in pixels: a larger screen is scaled down to fit. */
  maxWidth: number;
  /** See {@link maxWidth}. */
  maxHeight: number;
  /** JPEG quality of frames, 1 to 100. */
  quality: number;
  /** Messages (input, invocations, tab switches, tool lists) per second each viewer may send, sustained (a second's worth at once); more are dropped. */
  inputRate: number;
  /**
   * Bytes per second all the viewers of one browser may send together, each character of
   * JSON structure counted as 256 bytes (parsing costs by it); a message is dropped while
   * the budget is spent, and one larger than the budget passes and the next waits.
   */
  byteRate: number;
  /** WebMCP invocations of one viewer running at once. */
  maxInvocations: number;
  /** The largest message a viewer may send, in bytes; a larger one closes its connection (1009). */
  maxMessageBytes: number;
  /** Output queued for a viewer that does not read (tool lists, results) before it is disconnected (1008); frames are dropped instead. */
  maxBufferedBytes: number;
  /** How often a silent viewer is pinged; one silent a whole interval after a ping is closed. Default 30 s. */
  heartbeatMs?: number;
}
