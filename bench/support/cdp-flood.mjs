// A DevTools flood, run as a worker thread of bench/soak.mjs so that writing it does not
// delay that thread's own timing of another project's requests. Each client opens the
// browser's `cdp_ws_url` and writes, as fast as its socket drains, one large command then
// a burst of small ones, over and over; every command is one the server refuses after
// parsing it (`Target.sendMessageToTarget`), so the flood costs the server and not
// Chromium. It counts the server's answers: the server handles a connection's messages
// in order and answers each refusal, so answers are what got through its budgets.
//
// The WebSocket is spoken by hand, not through `ws`: `ws` masks every frame afresh in a
// JavaScript loop, which would cost this process as much CPU as the server's unmasking
// costs the server, on the same two cores. An attacker masks each frame once, with a key
// that is not zero (a zero key lets `ws` skip unmasking on the server), and resends it.
//
// workerData: { url, clients, shape: "strings" | "objects", largeBytes, smallPerLarge }.
// Posts "ready" once its frames are built and its clients connected; then takes { until, settledAt } and posts
// { large, small, bytes, seconds, closes }: what was answered between `settledAt` and
// `until` (after the budgets' first second, which may come at once).
import { randomBytes } from "node:crypto";
import { once } from "node:events";
import { connect } from "node:net";
import { parentPort, workerData } from "node:worker_threads";

const { url, clients, shape, largeBytes, smallPerLarge } = workerData;
const MASK = Buffer.from([0x5a, 0xa5, 0x3c, 0xc3]);

function maskedTextFrame(payload) {
  const length = payload.length;
  const header = length < 126 ? 2 : length < 65536 ? 4 : 10;
  const frame = Buffer.allocUnsafe(header + 4 + length);
  frame[0] = 0x81;
  if (length < 126) frame[1] = 0x80 | length;
  else if (length < 65536) {
    frame[1] = 0x80 | 126;
    frame.writeUInt16BE(length, 2);
  } else {
    frame[1] = 0x80 | 127;
    frame.writeBigUInt64BE(BigInt(length), 2);
  }
  MASK.copy(frame, header);
  for (let i = 0; i < length; i++) frame[header + 4 + i] = payload[i] ^ MASK[i & 3];
  return frame;
}

// Id 1 is the large command, so an answer tells which kind it was by its first bytes.
const head = '{"id":1,"method":"Target.sendMessageToTarget","params":{"message":"';
// Strings cost the server a search for their closing quote; empty objects are the densest
// structure JSON has (3 bytes each), each one an object `JSON.parse` allocates.
const largeText =
  shape === "strings"
    ? `${head}${"x".repeat(largeBytes - head.length - 3)}"}}`
    : `${head}","padding":[${"{},".repeat(Math.floor((largeBytes - head.length - 17) / 3))}{}]}}`;
const largePayload = Buffer.from(largeText);
const largeFrame = maskedTextFrame(largePayload);
const smallPayloads = Array.from({ length: smallPerLarge }, (_, i) =>
  Buffer.from(`{"id":${i + 2},"method":"Target.sendMessageToTarget","params":{"message":"{}"}}`),
);
const smallFrames = Buffer.concat(smallPayloads.map(maskedTextFrame));
// What the budgets charge: a message's payload, not its frame.
const smallBytes = smallPayloads.reduce((sum, payload) => sum + payload.length, 0) / smallPerLarge;
const LARGE_ANSWER = Buffer.from('{"id":1,');

class FloodClient {
  large = 0;
  small = 0;
  closeCode = undefined;
  #input = Buffer.alloc(0);
  #upgraded = false;

  async open() {
    const { hostname, port, pathname, search } = new URL(url);
    this.socket = connect({ host: hostname, port: Number(port) });
    await once(this.socket, "connect");
    this.ended = new Promise((resolve) => this.socket.once("close", resolve));
    this.socket.on("error", () => undefined);
    const upgraded = new Promise((resolve, reject) => {
      this.onUpgrade = resolve;
      this.onRefused = reject;
    });
    this.socket.on("data", (chunk) => this.#receive(chunk));
    this.socket.write(
      `GET ${pathname}${search} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
    );
    await upgraded;
  }

  #receive(chunk) {
    this.#input = this.#input.length === 0 ? chunk : Buffer.concat([this.#input, chunk]);
    if (!this.#upgraded) {
      const end = this.#input.indexOf("\r\n\r\n");
      if (end === -1) return;
      const status = this.#input.subarray(0, end).toString("latin1").split("\r\n")[0];
      if (!status.includes(" 101 ")) return this.onRefused(new Error(`the DevTools endpoint answered ${status}`));
      this.#upgraded = true;
      this.#input = this.#input.subarray(end + 4);
      this.onUpgrade();
    }
    let at = 0;
    const input = this.#input;
    while (input.length - at >= 2) {
      const opcode = input[at] & 0x0f;
      let length = input[at + 1] & 0x7f;
      let header = 2;
      if (length === 126) {
        if (input.length - at < 4) break;
        length = input.readUInt16BE(at + 2);
        header = 4;
      } else if (length === 127) {
        if (input.length - at < 10) break;
        length = Number(input.readBigUInt64BE(at + 2));
        header = 10;
      }
      if (input.length - at < header + length) break;
      const payload = input.subarray(at + header, at + header + length);
      if (opcode === 0x1) {
        if (payload.subarray(0, LARGE_ANSWER.length).equals(LARGE_ANSWER)) this.large++;
        else this.small++;
      } else if (opcode === 0x8) {
        this.closeCode = length >= 2 ? payload.readUInt16BE(0) : 1005;
      }
      at += header + length;
    }
    this.#input = at === input.length ? Buffer.alloc(0) : input.subarray(at);
  }

  /** Writes large, then the small burst, over and over, each write waiting for the socket to drain. */
  async flood() {
    const closed = this.ended.then(() => false);
    for (;;) {
      for (const frame of [largeFrame, smallFrames]) {
        if (this.socket.destroyed) return;
        if (
          !this.socket.write(frame) &&
          !(await Promise.race([
            once(this.socket, "drain").then(
              () => true,
              () => false,
            ),
            closed,
          ]))
        )
          return;
      }
    }
  }
}

const flooders = [];
for (let i = 0; i < clients; i++) {
  const client = new FloodClient();
  await client.open();
  flooders.push(client);
}
parentPort.postMessage("ready");
const [{ until, settledAt }] = await once(parentPort, "message");
for (const client of flooders) client.flood().catch(() => undefined);
const count = () => flooders.reduce((sum, client) => ({ large: sum.large + client.large, small: sum.small + client.small }), { large: 0, small: 0 });
await new Promise((resolve) => setTimeout(resolve, settledAt - Date.now()));
const from = count();
const fromAt = performance.now();
await new Promise((resolve) => setTimeout(resolve, until - Date.now()));
const to = count();
const seconds = (performance.now() - fromAt) / 1000;
const closes = flooders.map((client) => client.closeCode).filter((code) => code !== undefined);
for (const client of flooders) client.socket.destroy();
const large = to.large - from.large;
const small = to.small - from.small;
parentPort.postMessage({ large, small, bytes: large * largePayload.length + small * smallBytes, seconds, closes, largeBytes: largePayload.length });
