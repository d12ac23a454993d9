import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import {
  bodyDigest,
  logProofRefusals,
  PEER_PROOF_HEADER,
  PEER_SCOPE_HEADER,
  PeerAuth,
  PLACED_HEADER,
  PROOF_WINDOW_MS,
  type ProofRefusal,
} from "../src/nodes/peer-auth.js";

// How a node proves the requests it sends, from the side of whoever captured one: what a
// proof lets through, and everything it must not.

const SECRET = "a-secret-that-every-node-shares-0123456789";
const OTHER_SECRET = "another-secret-of-at-least-32-characters!";

/** A request as the receiving node's parser hands it over: method, target, headers (lower-case names). */
const arriving = (method: string, url: string, headers: Record<string, string>) => ({ method, url, headers }) as unknown as IncomingMessage;

function nodes(options: { secretOfB?: string; acceptedByB?: string[]; now?: () => number } = {}) {
  const clock = options.now ?? Date.now;
  const a = new PeerAuth({ secret: SECRET, nodeId: "a", clock });
  const b = new PeerAuth({ secret: options.secretOfB ?? SECRET, acceptedSecrets: options.acceptedByB ?? [], nodeId: "b", clock });
  const c = new PeerAuth({ secret: SECRET, nodeId: "c", clock });
  return { a, b, c };
}

const body = '{"name":"from-a"}';

/** `proof` with the first character of its field `field` changed. */
const alter = (proof: string, field: string) => proof.replace(new RegExp(`;${field}=(.)`), (_m, c: string) => `;${field}=${c === "A" ? "B" : "A"}`);
const claims = { client: "203.0.113.9", scope: "eyJwcm9qZWN0Ijp7fX0", placed: "b", placedLease: "lease-1", opens: "b1" };

describe("a node's proof", () => {
  it("names its sender and carries what it says, once, to the node it was made for", () => {
    const { a, b } = nodes();
    const headers = a.sign({ method: "POST", path: "/browsers", to: "b", body, claims });
    expect(Object.keys(headers).every((name) => name.startsWith("x-browser-service-"))).toBe(true);
    // The secret never travels, in any form a receiver could use again.
    expect(JSON.stringify(headers)).not.toContain(SECRET);
    expect(b.verify(arriving("POST", "/browsers", headers))).toEqual({ from: "a", bodySha256: bodyDigest(body), channelKey: expect.any(Buffer), ...claims });
    // Captured and sent again, as it is: refused.
    expect(b.verify(arriving("POST", "/browsers", headers))).toBeUndefined();
  });

  it("proves nothing once anything it covers is changed", () => {
    const { a, b } = nodes();
    const sign = () => a.sign({ method: "POST", path: "/browsers", to: "b", body, claims });
    expect(b.verify(arriving("DELETE", "/browsers", sign()))).toBeUndefined();
    expect(b.verify(arriving("POST", "/org/projects", sign()))).toBeUndefined();
    expect(b.verify(arriving("POST", "/browsers?x=1", sign()))).toBeUndefined();
    for (const [name, value] of [
      ["x-browser-service-client", "198.51.100.1"],
      [PEER_SCOPE_HEADER, "e30"],
      [PLACED_HEADER, "c"],
      ["x-browser-service-placed-lease", "lease-2"],
      ["x-browser-service-opens", "b2"],
    ] as const) {
      expect(b.verify(arriving("POST", "/browsers", { ...sign(), [name]: value }))).toBeUndefined();
      const dropped = sign();
      delete dropped[name];
      expect(b.verify(arriving("POST", "/browsers", dropped))).toBeUndefined();
    }
    // A claim added to a proof made without it.
    expect(b.verify(arriving("GET", "/browsers", { ...a.sign({ method: "GET", path: "/browsers", to: "b" }), [PEER_SCOPE_HEADER]: "e30" }))).toBeUndefined();
    // The proof itself, altered in any part.
    const proof = sign()[PEER_PROOF_HEADER] as string;
    for (const altered of [
      proof.replace("from=a", "from=c"),
      proof.replace(/t=(\d+)/, (_m, t: string) => `t=${Number(t) + 1}`),
      alter(proof, "n"),
      alter(proof, "b"),
      alter(proof, "m"),
      `${proof};x=1`,
      proof.replace("v1", "v2"),
    ]) {
      expect(b.verify(arriving("POST", "/browsers", { ...sign(), [PEER_PROOF_HEADER]: altered }))).toBeUndefined();
    }
    // The body is the receiver's to compare: the proof says which one it covers.
    expect(b.verify(arriving("POST", "/browsers", sign()))?.bodySha256).not.toBe(bodyDigest('{"name":"other"}'));
  });

  it("is refused by any node but the one it was made for", () => {
    const { a, b, c } = nodes();
    const headers = a.sign({ method: "GET", path: "/_peer/channel", to: "b" });
    expect(c.verify(arriving("GET", "/_peer/channel", headers))).toBeUndefined();
    expect(b.verify(arriving("GET", "/_peer/channel", headers))).toMatchObject({ from: "a" });
  });

  it("holds for its window only, by the receiver's clock", () => {
    let now = 1_800_000_000_000;
    const { a, b } = nodes({ now: () => now });
    const fresh = () => a.sign({ method: "GET", path: "/x", to: "b" });
    const old = fresh();
    const late = fresh();
    now += PROOF_WINDOW_MS;
    expect(b.verify(arriving("GET", "/x", late))).toMatchObject({ from: "a" });
    now += 1;
    expect(b.verify(arriving("GET", "/x", old))).toBeUndefined();
    // One made ahead of the receiver's clock (a node whose clock runs fast) holds within the window too.
    const ahead = fresh();
    now -= PROOF_WINDOW_MS;
    expect(b.verify(arriving("GET", "/x", ahead))).toMatchObject({ from: "a" });
    const tooFarAhead = fresh();
    now -= PROOF_WINDOW_MS + 1;
    expect(b.verify(arriving("GET", "/x", tooFarAhead))).toBeUndefined();
  });

  it("is made with the node's secret only, and checked with the secrets it accepts, so that the secret can be rotated", () => {
    // Mid-rotation: b signs with the new secret and still accepts the old one; a still has the old.
    const { a } = nodes();
    const b = new PeerAuth({ secret: OTHER_SECRET, acceptedSecrets: [SECRET], nodeId: "b" });
    const aAcceptingNew = new PeerAuth({ secret: SECRET, acceptedSecrets: [OTHER_SECRET], nodeId: "a" });
    expect(b.verify(arriving("GET", "/x", a.sign({ method: "GET", path: "/x", to: "b" })))).toMatchObject({ from: "a" });
    expect(aAcceptingNew.verify(arriving("GET", "/x", b.sign({ method: "GET", path: "/x", to: "a" })))).toMatchObject({ from: "b" });
    // A node that has only the new secret refuses what the old one made.
    const onlyNew = new PeerAuth({ secret: OTHER_SECRET, nodeId: "b" });
    expect(onlyNew.verify(arriving("GET", "/x", a.sign({ method: "GET", path: "/x", to: "b" })))).toBeUndefined();
    expect(() => new PeerAuth({ secret: "short", nodeId: "a" })).toThrow(RangeError);
    expect(() => new PeerAuth({ secret: SECRET, acceptedSecrets: ["short"], nodeId: "a" })).toThrow(RangeError);
  });

  it("gives the node that opens a channel and the node that accepts it one key, which no other opening shares and no header carries", () => {
    const { a, b } = nodes();
    const opening = a.opening("b", "/_peer/channel");
    const accepted = b.verify(arriving("GET", "/_peer/channel", opening.headers));
    expect(accepted?.channelKey.equals(opening.key)).toBe(true);
    expect(JSON.stringify(opening.headers)).not.toContain(opening.key.toString("base64url"));
    expect(JSON.stringify(opening.headers)).not.toContain(opening.key.toString("hex"));
    expect(a.opening("b", "/_peer/channel").key.equals(opening.key)).toBe(false);
    // Mid-rotation, the key is the one of the secret the proof was made with.
    const rotating = new PeerAuth({ secret: OTHER_SECRET, acceptedSecrets: [SECRET], nodeId: "b" });
    const old = a.opening("b", "/_peer/channel");
    expect(rotating.verify(arriving("GET", "/_peer/channel", old.headers))?.channelKey.equals(old.key)).toBe(true);
  });

  it("is the only thing that makes a request a node's: the old header with the secret itself proves nothing", () => {
    const { b } = nodes();
    const leaked = { "x-browser-service-peer": SECRET, [PEER_SCOPE_HEADER]: "e30", "x-browser-service-client": "203.0.113.9", [PLACED_HEADER]: "b" };
    expect(b.verify(arriving("POST", "/browsers", leaked))).toBeUndefined();
    expect(
      b.verify(
        arriving("POST", "/browsers", {
          ...leaked,
          [PEER_PROOF_HEADER]: `v1;from=a;to=b;t=${Date.now()};n=${"A".repeat(22)};b=${"A".repeat(43)};m=${"A".repeat(43)}`,
        }),
      ),
    ).toBeUndefined();
  });

  it("keeps a declared client only when it is one a node declares", () => {
    const { a, b } = nodes();
    const headers = a.sign({ method: "GET", path: "/x", to: "b", claims: { client: "a b\r\nx: y" } });
    const verified = b.verify(arriving("GET", "/x", headers));
    expect(verified).toMatchObject({ from: "a" });
    expect(verified?.client).toBeUndefined();
  });

  it("says why a proof made with the secret was refused, so that a node with a wrong clock or id shows in the log; an outsider's says nothing", () => {
    let now = 1_800_000_000_000;
    const refusals: ProofRefusal[] = [];
    const a = new PeerAuth({ secret: SECRET, nodeId: "a", clock: () => now });
    const b = new PeerAuth({ secret: SECRET, nodeId: "b", clock: () => now, onRefused: (refusal) => refusals.push(refusal) });
    const headers = a.sign({ method: "GET", path: "/x", to: "b" });
    expect(b.verify(arriving("GET", "/x", headers))).toBeDefined();
    expect(b.verify(arriving("GET", "/x", headers))).toBeUndefined();
    expect(b.verify(arriving("GET", "/x", a.sign({ method: "GET", path: "/x", to: "c" })))).toBeUndefined();
    const stale = a.sign({ method: "GET", path: "/x", to: "b" });
    now += PROOF_WINDOW_MS + 5_000;
    expect(b.verify(arriving("GET", "/x", stale))).toBeUndefined();
    expect(refusals).toEqual([
      { reason: "seen_already", from: "a", skewMs: 0 },
      { reason: "other_node", from: "a", skewMs: 0 },
      { reason: "outside_window", from: "a", skewMs: -(PROOF_WINDOW_MS + 5_000) },
    ]);
    // Made with another secret: nothing to say about it.
    const outsider = new PeerAuth({ secret: OTHER_SECRET, nodeId: "a", clock: () => now });
    expect(b.verify(arriving("GET", "/x", outsider.sign({ method: "GET", path: "/x", to: "b" })))).toBeUndefined();
    expect(refusals).toHaveLength(3);
  });

  it("logs each kind of refusal at most once a minute, however often it comes", () => {
    let now = 0;
    const warned: string[] = [];
    const log = logProofRefusals({ warn: (_object, message) => warned.push(message) }, () => now);
    for (let i = 0; i < 100; i++) log({ reason: "seen_already", from: "a", skewMs: 0 });
    log({ reason: "outside_window", from: "a", skewMs: 40_000 });
    expect(warned).toHaveLength(2);
    expect(warned[1]).toContain("clocks");
    now += 59_999;
    log({ reason: "seen_already", from: "a", skewMs: 0 });
    expect(warned).toHaveLength(2);
    now += 1;
    log({ reason: "seen_already", from: "a", skewMs: 0 });
    expect(warned).toHaveLength(3);
  });
});
