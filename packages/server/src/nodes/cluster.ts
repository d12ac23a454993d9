import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import type { ServerLog } from "../observe/server-log.js";
import type { LiveNode, NodeStore } from "./node-store.js";
import type { PeerAuth, VerifiedPeer } from "./peer-auth.js";
import { PeerForwarder } from "./peer-forwarder.js";

/** How long a node's lease lasts unless renewed, by default: 10 s. */
export const DEFAULT_LEASE_TTL_MS = 10_000;

/** Another running server process holds this node id's lease: two processes may not share a node id. */
export class NodeIdInUseError extends Error {
  /** Stable code of the failure. */
  readonly code = "node_id_in_use";

  constructor(nodeId: string) {
    super(
      `The node id ${nodeId} is in use: another running server renews its lease on this database. Give each server its own --node-id (a server restarted under its id waits for its previous process's lease to lapse).`,
    );
    this.name = "NodeIdInUseError";
  }
}

/** Settings of {@link Cluster}. */
export interface ClusterOptions {
  nodeId: string;
  /** Where other nodes reach this one; `undefined`: it serves its own browsers only, and forwards nothing. */
  advertiseUrl: string | undefined;
  /** How this node proves its requests to the others and checks theirs (the nodes' shared secret); needed with `advertiseUrl`. */
  peer: PeerAuth | undefined;
  store: NodeStore;
  /** Warm browsers ready on this node now. */
  warmReady: () => number;
  /** Lease length; renewed every fifth of it. Default {@link DEFAULT_LEASE_TTL_MS}. */
  leaseTtlMs?: number;
  log: Pick<ServerLog, "info" | "warn" | "error">;
  /**
   * This node lost its lease (it could not renew it in time, or found it reaped): the other
   * nodes count its browsers as crashed, so it must end them.
   */
  leaseLost: () => Promise<void>;
  /** Another node's lease lapsed and its browsers were marked crashed: what ran in them can be ended now. */
  reaped?: () => Promise<void>;
}

/**
 * This node among the servers sharing a PostgreSQL database: it holds a lease it renews
 * every fifth of the lease's length, reaps the nodes whose lease lapsed (their browsers
 * become `crashed`, their slots free), knows where each live node is reached, picks the
 * node for a create, and forwards what belongs to another node's browser. A node killed
 * without warning has its browsers marked crashed within the lease's length plus one
 * renewal period (12 s by default).
 */
export class Cluster {
  readonly nodeId: string;
  /** This process, among any that ever ran under {@link nodeId}. */
  readonly #instance = randomUUID();
  readonly #options: ClusterOptions;
  readonly #ttlMs: number;
  readonly #peer: PeerAuth | undefined;
  readonly #forwarder: PeerForwarder | undefined;
  #live = new Map<string, LiveNode>();
  // Each request's proof, checked once (a proof is accepted only once): its sender, or null.
  readonly #peers = new WeakMap<IncomingMessage, VerifiedPeer | null>();
  #timer: NodeJS.Timeout | undefined;
  #tick: Promise<void> = Promise.resolve();
  #renewedAt = 0;
  #fenced = false;
  #stopped = false;
  #draining = false;

  constructor(options: ClusterOptions) {
    this.nodeId = options.nodeId;
    this.#options = options;
    this.#ttlMs = options.leaseTtlMs ?? DEFAULT_LEASE_TTL_MS;
    this.#peer = options.peer;
    this.#forwarder = this.#peer === undefined || options.advertiseUrl === undefined ? undefined : new PeerForwarder(this.#peer);
  }

  /**
   * Makes sure no other running process serves this node id, before this one touches
   * anything of the node's. A lease another process holds is waited out once, since a
   * node restarted at once after a crash finds its previous process's lease still
   * running; one renewed meanwhile belongs to a running server ({@link NodeIdInUseError}).
   */
  async claim(): Promise<void> {
    const held = await this.#options.store.heldElsewhere(this.nodeId, this.#instance);
    if (held === undefined) return;
    this.#options.log.warn({ node: this.nodeId, ms: held }, "another process holds this node's lease; waiting for it to lapse");
    await new Promise((resolve) => setTimeout(resolve, held + 100));
    if ((await this.#options.store.heldElsewhere(this.nodeId, this.#instance)) !== undefined) throw new NodeIdInUseError(this.nodeId);
  }

  /** Takes the lease (failing the start if the database refuses, or another process took it since {@link claim}), reaps lapsed nodes, and renews from then on. */
  async start(): Promise<void> {
    if ((await this.#renew(true)) !== undefined) throw new NodeIdInUseError(this.nodeId);
    await this.#reap();
    this.#keepChannelsToLive();
    this.#timer = setInterval(() => {
      this.#tick = this.#tick.then(() => this.#round());
    }, this.#ttlMs / 5);
    this.#timer.unref();
  }

  async #round(): Promise<void> {
    if (this.#stopped) return;
    try {
      await this.#renew(false);
    } catch (error) {
      this.#options.log.warn({ err: error, node: this.nodeId }, "could not renew this node's lease");
      if (Date.now() - this.#renewedAt >= this.#ttlMs) await this.#fence("its lease lapsed: the database did not take a renewal in time");
      return;
    }
    await this.#reap();
    this.#keepChannelsToLive();
  }

  // A node whose lease lapsed is gone for the others: what waits on it ends now. After the
  // reap, so that a caller told so reads its browsers as crashed already.
  #keepChannelsToLive(): void {
    const live = [...this.#live.values()];
    this.#forwarder?.keepChannelsTo(new Set(live.flatMap((node) => (node.advertiseUrl === null ? [] : [new URL(node.advertiseUrl).origin]))));
  }

  /** Renews (or, `first`, takes) the lease; returns how long another process holds it yet, in ms, when it does. */
  async #renew(first: boolean): Promise<number | undefined> {
    const started = Date.now();
    const renewal = await this.#options.store.renew({
      nodeId: this.nodeId,
      instance: this.#instance,
      advertiseUrl: this.#forwarder === undefined ? null : (this.#options.advertiseUrl ?? null),
      warmReady: this.#options.warmReady(),
      draining: this.#draining,
      ttlMs: this.#ttlMs,
    });
    if (!renewal.taken) {
      // Running, this process lost its node id to another (started under the same id
      // despite the check at start): the others count that one's browsers, not these.
      if (!first) await this.#fence("another server process holds this node's lease");
      return renewal.heldForMs;
    }
    const { rejoined, live } = renewal;
    // Counted from the request: the lease may have been taken any time after it left.
    this.#renewedAt = started;
    this.#live = new Map(live.map((node) => [node.nodeId, node]));
    if (rejoined && !first) await this.#fence("its lease lapsed, and its browsers were marked crashed");
    else if (!rejoined) this.#fenced = false;
    return undefined;
  }

  async #reap(): Promise<void> {
    try {
      const lapsed = await this.#options.store.reapLapsed();
      for (const reaped of lapsed) {
        this.#options.log.warn({ node: reaped.nodeId, browsers: reaped.crashed }, "a node's lease lapsed; its browsers were marked crashed");
      }
      if (lapsed.length > 0) await this.#options.reaped?.();
    } catch (error) {
      this.#options.log.error({ err: error }, "could not reap the nodes whose lease lapsed");
    }
  }

  async #fence(why: string): Promise<void> {
    if (this.#fenced) return;
    this.#fenced = true;
    this.#options.log.error({ node: this.nodeId }, `this node ends its browsers: ${why}`);
    await this.#options.leaseLost();
  }

  /**
   * Whether this node holds its lease now, by its own clock: renewed within the lease's
   * length, and not found reaped. Once it does not, the other nodes count its browsers
   * as crashed.
   */
  holdsLease(): boolean {
    return !this.#fenced && Date.now() - this.#renewedAt < this.#ttlMs;
  }

  /**
   * The node that sent `request` and what it says of it, when the request carries a valid
   * proof (see {@link PeerAuth.verify}) from a node whose lease is current: one removed
   * from the nodes' table is no node. Checked once per request; later calls (and
   * {@link verifiedPeer}) give the same answer. `undefined`: a plain client's request.
   */
  async peerOf(request: IncomingMessage): Promise<VerifiedPeer | undefined> {
    const known = this.#peers.get(request);
    if (known !== undefined) return known ?? undefined;
    const proved = this.#peer?.verify(request);
    // A node that joined since this one's last renewal is read from the table; one that left is no longer in it.
    const peer =
      proved !== undefined && proved.from !== this.nodeId && (this.#live.has(proved.from) || (await this.#options.store.isLive(proved.from)))
        ? proved
        : undefined;
    this.#peers.set(request, peer ?? null);
    return peer;
  }

  /** What {@link peerOf} found for `request`, once it was asked; `undefined` before, or for a plain client's. */
  verifiedPeer(request: IncomingMessage): VerifiedPeer | undefined {
    return this.#peers.get(request) ?? undefined;
  }

  /** The forwarder, when this node takes part in forwarding (it has an advertise URL and the secret). */
  get forwarder(): PeerForwarder | undefined {
    return this.#forwarder;
  }

  /**
   * Where a browser of `nodeId` is served: `"self"`, another live node's URL, or
   * `"unreachable"` (its lease lapsed, or it forwards nothing).
   */
  locate(nodeId: string | undefined): "self" | "unreachable" | { url: string; nodeId: string } {
    if (nodeId === undefined || nodeId === this.nodeId) return "self";
    const node = this.#live.get(nodeId);
    if (this.#forwarder === undefined || node === undefined || node.advertiseUrl === null) return "unreachable";
    return { url: node.advertiseUrl, nodeId };
  }

  /**
   * This node is shutting down: the others stop placing creates on it once they read its
   * lease, renewed here at once to say so; {@link place} sends this node's own to them.
   */
  async drain(): Promise<void> {
    this.#draining = true;
    const renewed = this.#tick.then(() => this.#round());
    this.#tick = renewed;
    await renewed;
  }

  /** Another node said it drains (it declined a create): no create goes there until a renewal reads the table again. */
  noteDraining(nodeId: string): void {
    const node = this.#live.get(nodeId);
    if (node !== undefined && nodeId !== this.nodeId) this.#live.set(nodeId, { ...node, draining: true });
  }

  /**
   * The node a create goes to: this one when its own warm pool has a browser ready; else
   * the live node with the most warm browsers ready; else the one running the fewest
   * browsers (this one on a tie). Draining nodes (this one included) take none while
   * another node can; with none, `"self"`, which refuses it. Counts since the last
   * renewal are adjusted as creates are sent, so that a burst spreads.
   */
  place(): "self" | { url: string; nodeId: string; leaseId: string } {
    if (this.#forwarder === undefined || (!this.#draining && this.#options.warmReady() > 0)) return "self";
    const self: LiveNode = {
      ...(this.#live.get(this.nodeId) ?? { nodeId: this.nodeId, advertiseUrl: null, browsers: 0, leaseId: "" }),
      warmReady: 0,
      draining: this.#draining,
    };
    let best: LiveNode | undefined = self.draining ? undefined : self;
    for (const node of this.#live.values()) {
      if (node.nodeId === this.nodeId || node.advertiseUrl === null || node.draining) continue;
      const better = best === undefined || (node.warmReady !== best.warmReady ? node.warmReady > best.warmReady : node.browsers < best.browsers);
      if (better) best = node;
    }
    if (best === undefined || best.nodeId === this.nodeId) {
      if (best !== undefined && this.#live.has(this.nodeId)) this.#live.set(this.nodeId, { ...self, browsers: self.browsers + 1 });
      return "self";
    }
    this.#live.set(best.nodeId, { ...best, browsers: best.browsers + 1, warmReady: Math.max(0, best.warmReady - 1) });
    return { url: best.advertiseUrl as string, nodeId: best.nodeId, leaseId: best.leaseId };
  }

  /** Stops renewing and gives the lease up (the node's browsers are closed already). */
  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#tick;
    this.#forwarder?.close();
    await this.#options.store.leave(this.nodeId, this.#instance);
  }
}
