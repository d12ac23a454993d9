/** A node whose lease is current, as the others see it. */
export interface LiveNode {
  nodeId: string;
  /** Where other nodes reach it; `null` for a node that serves only its own browsers. */
  advertiseUrl: string | null;
  /** Warm browsers ready on it at its last renewal. */
  warmReady: number;
  /** Browsers running or starting on it now. */
  browsers: number;
  /** Its current lease, drawn anew each time it takes one. */
  leaseId: string;
  /** It is shutting down: it serves its browsers until they end, and takes no new ones. */
  draining: boolean;
}

/** A node whose lease lapsed, and what was done about its browsers. */
export interface ReapedNode {
  nodeId: string;
  /** Its browsers now `crashed` (their slots free). */
  crashed: number;
}

/** What this node tells the others at each renewal. */
export interface NodeLease {
  nodeId: string;
  /** This server process, drawn at random when it starts: a node id has one process at a time. */
  instance: string;
  advertiseUrl: string | null;
  warmReady: number;
  /** It is shutting down and takes no new browsers (see {@link LiveNode.draining}). */
  draining: boolean;
  /** How long the lease lasts from now, in milliseconds. */
  ttlMs: number;
}

/** What a renewal found: the lease taken, or held by another process under the same node id. */
export type LeaseRenewal =
  | {
      taken: true;
      /** This process starts a new lease: after its first renewal, its lease lapsed. */
      rejoined: boolean;
      /** Every node whose lease is current, this one included. */
      live: LiveNode[];
    }
  | {
      taken: false;
      /** How long the other process's lease runs yet, by the database's clock, in milliseconds. */
      heldForMs: number;
    };

/** The nodes sharing one database and their leases (PostgreSQL only: SQLite has one server by construction). */
export interface NodeStore {
  /**
   * Takes or renews this process's lease on its node id. A lease that lapsed is not
   * renewed: its node is reaped first (as {@link reapLapsed} would), since the others
   * stopped waiting on it once it lapsed. A current lease of another process under the
   * same node id is left alone (`taken: false`).
   */
  renew(lease: NodeLease): Promise<LeaseRenewal>;
  /**
   * For every node whose lease lapsed: marks its running browsers `crashed` and drops its
   * starting ones (freeing their slots), and removes the node, in one transaction per
   * node; nodes another caller is reaping at the moment are skipped.
   */
  reapLapsed(): Promise<ReapedNode[]>;
  /** Whether `nodeId` holds a current lease (database clock). */
  isLive(nodeId: string): Promise<boolean>;
  /** How long another process's current lease on `nodeId` runs yet, in ms (database clock); `undefined` when none holds it. */
  heldElsewhere(nodeId: string, instance: string): Promise<number | undefined>;
  /** Ends this process's lease at once (a clean shutdown, whose browsers are already gone); another process's lease on the node id stays. */
  leave(nodeId: string, instance: string): Promise<void>;
}
