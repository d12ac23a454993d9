import type WebSocket from "ws";

/** How often a WebSocket client that has sent nothing is pinged; one that answers neither ping is closed. */
export const HEARTBEAT_INTERVAL_MS = 30_000;

/**
 * Closes `ws` once its peer has been silent for a whole interval after a ping: no pong,
 * no message. A client whose machine slept, lost power or left the network sends no FIN,
 * and the kernel of a frozen one still acknowledges TCP, so without this its connection
 * (and what it holds open: a browser's inactivity timeout, a place among the viewers)
 * would last for ever. DevTools clients and browsers answer pings by themselves.
 */
export function keepAlive(ws: WebSocket, intervalMs: number = HEARTBEAT_INTERVAL_MS): void {
  let heard = true;
  const alive = () => {
    heard = true;
  };
  ws.on("pong", alive);
  ws.on("message", alive);
  const timer = setInterval(() => {
    // Paused by this server (its message budgets catching up), the client's pongs wait unread.
    if (ws.isPaused) heard = true;
    if (!heard) {
      ws.terminate();
      return;
    }
    heard = false;
    ws.ping();
  }, intervalMs);
  timer.unref();
  ws.once("close", () => clearInterval(timer));
}
