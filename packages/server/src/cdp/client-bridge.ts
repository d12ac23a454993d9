import type { FastifyBaseLogger } from "fastify";
import WebSocket from "ws";
import type { CdpChannel } from "./cdp-router.js";
import type { CdpEndpointLimits } from "./client-limits.js";
import { type MessageBudget, STRUCTURE_COST } from "./message-budget.js";
import { ThrottledIntake } from "./throttled-intake.js";

/** What {@link bridge} needs besides the connection and its channel. */
export interface BridgeOptions {
  limits: CdpEndpointLimits;
  /** The budgets each of the client's messages is charged to: the connection's own and its project's. */
  budgets: MessageBudget[];
  log: FastifyBaseLogger;
  /** Told of the bytes of each message received from the client (`in`) and sent to it (`out`): the server's metrics. */
  onBytes?: (direction: "in" | "out", bytes: number) => void;
}

/** Close codes of a client connection the server ends (RFC 6455 7.4.1). */
const POLICY_VIOLATION = 1008;
const INTERNAL_ERROR = 1011;
/** How long a connection that failed (its close frame sent) stays open for that frame to arrive. */
const CLOSE_FRAME_GRACE_MS = 1_000;

/**
 * Relays between one WebSocket client and its channel until either ends. The client's
 * messages pass its budgets before anything reads them (see {@link ThrottledIntake}),
 * then go to the channel as text. Whatever fails while handling this connection's input
 * or output closes this connection only (1011), and is logged.
 */
export function bridge(ws: WebSocket, channel: CdpChannel, options: BridgeOptions): void {
  const { limits, log, onBytes } = options;
  let failed = false;
  const fail = (error: unknown, what: string): void => {
    if (failed) return;
    failed = true;
    log.error({ err: error }, `DevTools endpoint: ${what}; the client was disconnected`);
    intake.close();
    // The connection first: closing the channel first would close it with 1000.
    if (ws.readyState === WebSocket.OPEN) ws.close(INTERNAL_ERROR, "The server failed to handle this DevTools session; it was closed.");
    else ws.terminate();
    channel.close();
  };
  const intake = new ThrottledIntake({
    budgets: options.budgets,
    // What can wait while reading is paused: one message of the size cap, and the rest of one socket read.
    maxQueuedBytes: limits.maxMessageBytes + 1024 * 1024,
    pause: () => ws.pause(),
    resume: () => ws.resume(),
    handle: (data) => {
      try {
        // Each character of structure is charged as STRUCTURE_COST bytes, its own included.
        return channel.sendText(data.toString("utf8")) * (STRUCTURE_COST - 1);
      } catch (error) {
        fail(error, "handling a client's message failed");
        return 0;
      }
    },
    overflow: () => {
      ws.close(POLICY_VIOLATION, "The client sent past its DevTools budget faster than the server holds messages.");
      ws.terminate();
      channel.close();
    },
  });
  ws.on("message", (data: WebSocket.RawData) => {
    try {
      const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
      onBytes?.("in", bytes.length);
      intake.receive(bytes);
    } catch (error) {
      fail(error, "receiving a client's message failed");
    }
  });
  channel.onMessage((message) => {
    try {
      if (ws.readyState !== WebSocket.OPEN) return;
      if (ws.bufferedAmount > limits.maxBufferedBytes) {
        // A client that does not read must not make the server hold the browser's output for it.
        ws.close(POLICY_VIOLATION, "The client read too slowly; its queue passed the server's limit.");
        ws.terminate();
        return;
      }
      // A large message arrives still serialized: it is relayed as it is, never re-serialized.
      const text = typeof message === "string" ? message : JSON.stringify(message);
      onBytes?.("out", Buffer.byteLength(text));
      ws.send(text);
    } catch (error) {
      fail(error, "relaying a message from the browser failed");
    }
  });
  channel.onClose((reason) => {
    if (ws.readyState === WebSocket.OPEN)
      ws.close(reason === "browser" ? 1001 : 1000, reason === "browser" ? "The browser has stopped." : "The DevTools session ended.");
  });
  ws.on("close", () => {
    intake.close();
    channel.close();
  });
  // A frame over the size cap (or not UTF-8) makes ws send its close frame (1009, 1007)
  // and then report the error: the connection ends a moment later, not at once, so that
  // the close frame is not lost to the reset that closing on the client's unread bytes
  // sends (a relay between nodes would lose it). ws reads and drops what the client still
  // sends meanwhile.
  ws.on("error", () => {
    if (ws.readyState === WebSocket.CLOSING) setTimeout(() => ws.terminate(), CLOSE_FRAME_GRACE_MS).unref();
    else ws.terminate();
  });
}
