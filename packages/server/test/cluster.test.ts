import type { IncomingMessage } from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Cluster, NodeIdInUseError } from "../src/nodes/cluster.js";
import type { LeaseRenewal, LiveNode, NodeLease, NodeStore, ReapedNode } from "../src/nodes/node-store.js";
import { PeerAuth } from "../src/nodes/peer-auth.js";

// The node's side of its lease and of placement, on a store the test controls.

const SECRET = "s".repeat(32);
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

class ScriptedNodes implements NodeStore {
  live: LiveNode[] = [];
  failing = false;
  rejoin = false;
  /** For each coming renewal, how long another process holds the lease yet (ms). */
  held: number[] = [];
  renewals: NodeLease[] = [];
  left: string[] = [];
  async renew(lease: NodeLease): Promise<LeaseRenewal> {
    if (this.failing) throw new Error("the database does not answer");
    this.renewals.push(lease);
    const heldForMs = this.held.shift();
    if (heldForMs !== undefined) return { taken: false, heldForMs };
    const rejoined = this.rejoin;
    this.rejoin = false;
    return { taken: true, rejoined, live: this.live };
  }
  /** For each coming check at start, how long another process holds the lease yet (ms), if it does. */
  elsewhere: (number | undefined)[] = [];
  checks: string[] = [];
  async heldElsewhere(_nodeId: string, instance: string) {
    this.checks.push(instance);
    return this.elsewhere.shift();
  }
  async reapLapsed(): Promise<ReapedNode[]> {
    return [];
  }
  /** Nodes the table holds beyond those of the last renewal (joined since). */
  joined: string[] = [];
  liveChecks: string[] = [];
  async isLive(nodeId: string) {
    this.liveChecks.push(nodeId);
    return this.joined.includes(nodeId);
  }
  async leave(nodeId: string, instance: string) {
    expect(instance).toBe(this.renewals[0]?.instance);
    this.left.push(nodeId);
  }
}

const node = (nodeId: string, browsers: number, warmReady = 0, advertiseUrl: string | null = `http://${nodeId}.internal:8787`, draining = false): LiveNode => ({
  nodeId,
  leaseId: `lease-of-${nodeId}`,
  advertiseUrl,
  warmReady,
  browsers,
  draining,
});

function clusterOn(store: ScriptedNodes, options: { warmReady?: () => number; leaseLost?: () => Promise<void>; advertised?: boolean } = {}) {
  return new Cluster({
    nodeId: "a",
    advertiseUrl: options.advertised === false ? undefined : "http://a.internal:8787",
    peer: new PeerAuth({ secret: SECRET, nodeId: "a" }),
    store,
    warmReady: options.warmReady ?? (() => 0),
    leaseTtlMs: 10_000,
    log: silent,
    leaseLost: options.leaseLost ?? (async () => undefined),
  });
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the lease", () => {
  it("is renewed every fifth of its length, and given up at stop", async () => {
    vi.useFakeTimers();
    const store = new ScriptedNodes();
    const cluster = clusterOn(store);
    await cluster.start();
    await vi.advanceTimersByTimeAsync(2_000 * 3);
    expect(store.renewals).toHaveLength(4);
    expect(store.renewals[0]).toMatchObject({ nodeId: "a", advertiseUrl: "http://a.internal:8787", ttlMs: 10_000 });
    await cluster.stop();
    expect(store.left).toEqual(["a"]);
  });

  it("ends the node's browsers once, when renewals fail for the lease's length", async () => {
    vi.useFakeTimers();
    const store = new ScriptedNodes();
    const lost = vi.fn(async () => undefined);
    const cluster = clusterOn(store, { leaseLost: lost });
    await cluster.start();
    expect(cluster.holdsLease()).toBe(true);
    store.failing = true;
    await vi.advanceTimersByTimeAsync(8_000);
    expect(lost).not.toHaveBeenCalled();
    expect(cluster.holdsLease()).toBe(true);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(lost).toHaveBeenCalledTimes(1);
    expect(cluster.holdsLease()).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(lost).toHaveBeenCalledTimes(1);
    await cluster.stop();
  });

  it("ends the node's browsers when it finds its lease reaped by another node", async () => {
    vi.useFakeTimers();
    const store = new ScriptedNodes();
    const lost = vi.fn(async () => undefined);
    const cluster = clusterOn(store, { leaseLost: lost });
    await cluster.start();
    store.rejoin = true;
    await vi.advanceTimersByTimeAsync(2_000);
    expect(lost).toHaveBeenCalledTimes(1);
    expect(cluster.holdsLease()).toBe(false);
    await cluster.stop();
  });

  it("waits out, once, a lease another process holds on the node id at start (its previous process, just killed), then takes it", async () => {
    vi.useFakeTimers();
    const store = new ScriptedNodes();
    store.elsewhere = [3_000, undefined];
    const cluster = clusterOn(store);
    let claimed = false;
    const claiming = cluster.claim().then(() => {
      claimed = true;
    });
    await vi.advanceTimersByTimeAsync(2_900);
    expect(claimed).toBe(false);
    await vi.advanceTimersByTimeAsync(300);
    await claiming;
    await cluster.start();
    expect(cluster.holdsLease()).toBe(true);
    expect(new Set([...store.checks, ...store.renewals.map((lease) => lease.instance)]).size).toBe(1);
    await cluster.stop();
  });

  it("refuses to start when another process renews the node id's lease while it waits: that one is running", async () => {
    vi.useFakeTimers();
    const store = new ScriptedNodes();
    store.elsewhere = [3_000, 9_000];
    const claiming = clusterOn(store).claim();
    const refused = expect(claiming).rejects.toBeInstanceOf(NodeIdInUseError);
    await vi.advanceTimersByTimeAsync(3_100);
    await refused;
    await expect(claiming).rejects.toMatchObject({ code: "node_id_in_use" });
    expect(store.renewals).toEqual([]);
  });

  it("refuses to start when another process took the node id's lease since the claim", async () => {
    const store = new ScriptedNodes();
    store.held = [10_000];
    const lost = vi.fn(async () => undefined);
    const cluster = clusterOn(store, { leaseLost: lost });
    await cluster.claim();
    await expect(cluster.start()).rejects.toBeInstanceOf(NodeIdInUseError);
    // It never held the lease, so it has nothing of the other's to end.
    expect(lost).not.toHaveBeenCalled();
    expect(cluster.holdsLease()).toBe(false);
  });

  it("ends the node's browsers when, running, it finds another process holding its node id", async () => {
    vi.useFakeTimers();
    const store = new ScriptedNodes();
    const lost = vi.fn(async () => undefined);
    const cluster = clusterOn(store, { leaseLost: lost });
    await cluster.start();
    store.held = [10_000];
    await vi.advanceTimersByTimeAsync(2_000);
    expect(lost).toHaveBeenCalledTimes(1);
    expect(cluster.holdsLease()).toBe(false);
    await cluster.stop();
  });
});

describe("placement", () => {
  it("keeps a create where a warm browser waits, else sends it to the most warm browsers, else to the fewest browsers", async () => {
    const store = new ScriptedNodes();
    let warmHere = 1;
    const cluster = clusterOn(store, { warmReady: () => warmHere });
    store.live = [node("a", 5), node("b", 1, 2), node("c", 0)];
    await cluster.start();
    expect(cluster.place()).toBe("self");
    warmHere = 0;
    expect(cluster.place()).toEqual({ nodeId: "b", url: "http://b.internal:8787", leaseId: "lease-of-b" });
    expect(cluster.place()).toEqual({ nodeId: "b", url: "http://b.internal:8787", leaseId: "lease-of-b" });
    // b's warm browsers are spoken for; c runs the fewest.
    expect(cluster.place()).toEqual({ nodeId: "c", url: "http://c.internal:8787", leaseId: "lease-of-c" });
    await cluster.stop();
  });

  it("sends no create to a draining node, and a draining node sends its own creates to the others", async () => {
    const store = new ScriptedNodes();
    let warmHere = 1;
    const cluster = clusterOn(store, { warmReady: () => warmHere });
    // b has warm browsers and runs nothing, but drains: c takes the creates.
    store.live = [node("a", 0), node("b", 0, 3, "http://b.internal:8787", true), node("c", 4)];
    await cluster.start();
    expect(cluster.place()).toBe("self");
    warmHere = 0;
    expect(cluster.place()).toBe("self");
    // a drains: it says so in a renewal at once, and keeps no create, even with a warm browser ready.
    warmHere = 1;
    const renewals = store.renewals.length;
    await cluster.drain();
    expect(store.renewals.slice(renewals)).toEqual([expect.objectContaining({ nodeId: "a", draining: true })]);
    expect(cluster.place()).toEqual({ nodeId: "c", url: "http://c.internal:8787", leaseId: "lease-of-c" });
    // Every other node drains too: nowhere to send it, so it stays here (and is refused here).
    store.live = [node("a", 0, 0, "http://a.internal:8787", true), node("b", 0, 3, "http://b.internal:8787", true)];
    await cluster.drain();
    expect(cluster.place()).toBe("self");
    await cluster.stop();
  });

  it("never sends a create, nor forwards, to a node without an advertise URL, and a node without one forwards nothing", async () => {
    const store = new ScriptedNodes();
    store.live = [node("a", 3), node("hidden", 0, 4, null)];
    const cluster = clusterOn(store);
    await cluster.start();
    expect(cluster.place()).toBe("self");
    expect(cluster.locate("hidden")).toBe("unreachable");
    expect(cluster.locate("gone")).toBe("unreachable");
    expect(cluster.locate("a")).toBe("self");
    await cluster.stop();
    const alone = clusterOn(new ScriptedNodes(), { advertised: false });
    expect(alone.forwarder).toBeUndefined();
  });
});

describe("requests of other nodes", () => {
  const arriving = (headers: Record<string, string>) => ({ method: "GET", url: "/x", headers }) as unknown as IncomingMessage;
  const proofFrom = (nodeId: string) =>
    new PeerAuth({ secret: SECRET, nodeId }).sign({ method: "GET", path: "/x", to: "a", claims: { client: "203.0.113.9" } });

  it("come from a node whose lease is current: one gone from the table is a plain client, one that joined since is read from it", async () => {
    const store = new ScriptedNodes();
    store.live = [node("a", 0), node("b", 0)];
    const cluster = clusterOn(store);
    await cluster.start();
    const fromB = arriving(proofFrom("b"));
    expect(await cluster.peerOf(fromB)).toMatchObject({ from: "b", client: "203.0.113.9" });
    // Asked again (the rate limiter asks for its client): the same answer, the proof not spent twice.
    expect(cluster.verifiedPeer(fromB)).toMatchObject({ from: "b" });
    expect(await cluster.peerOf(fromB)).toMatchObject({ from: "b" });
    expect(store.liveChecks).toEqual([]);
    // Removed from the table (its lease lapsed, or it left): its proofs are a plain client's.
    expect(await cluster.peerOf(arriving(proofFrom("gone")))).toBeUndefined();
    expect(store.liveChecks).toEqual(["gone"]);
    // Joined since this node's last renewal: found in the table.
    store.joined.push("new");
    expect(await cluster.peerOf(arriving(proofFrom("new")))).toMatchObject({ from: "new" });
    // This node's own id is no other node, and a request never checked is a plain client's.
    expect(await cluster.peerOf(arriving(proofFrom("a")))).toBeUndefined();
    expect(cluster.verifiedPeer(arriving(proofFrom("b")))).toBeUndefined();
    await cluster.stop();
  });
});
