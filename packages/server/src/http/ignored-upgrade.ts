import { IncomingMessage, type Server, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Duplex } from "node:stream";

/** How long a client may take to close its side once its answer is sent. */
const CLOSE_GRACE_MS = 5_000;

/**
 * Serves a request that asked to upgrade (Node hands every such request to the
 * `upgrade` listeners, and no longer parses its socket) as the plain request it also is,
 * so that the API ignores `Upgrade` as RFC 9110 7.8 lets it: the request, with the body
 * its `Content-Length` announces (the bytes after the head, then the socket's), goes to
 * the server's `request` listener, and the connection closes after the answer (cut
 * {@link CLOSE_GRACE_MS} later if the client keeps its side open). A chunked body is not
 * decoded: the upgrade router refuses such a request before it comes here.
 */
export function serveIgnoringUpgrade(server: Server, upgrade: IncomingMessage, socket: Duplex, head: Buffer): void {
  // The parser already ended `upgrade`'s stream; a fresh message carries the same head and the body.
  const request = new IncomingMessage(socket as Socket);
  request.method = upgrade.method as string;
  request.url = upgrade.url as string;
  request.httpVersion = upgrade.httpVersion;
  request.httpVersionMajor = upgrade.httpVersionMajor;
  request.httpVersionMinor = upgrade.httpVersionMinor;
  request.headers = upgrade.headers;
  request.rawHeaders = upgrade.rawHeaders;
  const announced = Number(upgrade.headers["content-length"] ?? 0);
  let remaining = Number.isSafeInteger(announced) && announced > 0 && upgrade.headers["transfer-encoding"] === undefined ? announced : 0;
  const take = (chunk: Buffer) => {
    if (remaining === 0) return;
    const part = chunk.subarray(0, remaining);
    remaining -= part.length;
    request.push(part);
    if (remaining === 0) end();
  };
  const end = () => {
    socket.off("data", take);
    socket.off("end", end);
    // Complete even when cut short: an incomplete message reads as aborted, and would get no answer.
    request.complete = true;
    request.push(null);
  };
  if (remaining === 0) end();
  else {
    if (head.length > 0) take(head);
    if (remaining > 0) {
      socket.on("data", take);
      // A body cut short ends with the stream (the operation then sees a wrong length: 400).
      socket.once("end", end);
    }
  }
  // The server's own socket timeout handling is gone with its parser: the body idle timeout listens on the request.
  socket.on("timeout", () => request.emit("timeout"));
  const response = new ServerResponse(request);
  response.shouldKeepAlive = false;
  response.assignSocket(socket as Socket);
  response.once("finish", () => {
    socket.off("data", take);
    socket.off("end", end);
    response.detachSocket(socket as Socket);
    socket.end();
    // A client that never closes its side must not keep the connection: Node no longer counts it as the server's.
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref();
  });
  server.emit("request", request, response);
}
