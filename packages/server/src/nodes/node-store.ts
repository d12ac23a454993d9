/** A node whose lease is current, as the others see it. */
export interface LiveNode {
  nodeId: string;
  /** Where other nodes reach it; `null` for a node that serves only its own browsers. */
  advertiseUrl: string | null;
  /** Warm browsers ready on it at its last renewal. */
  warmReady: number;
  /** Browsers running or starting on it now. */
  browsers: number;
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
  advertiseUrl: string | null;
  warmReady: number;
  /** How long the lease lasts from now, in milliseconds. */
  ttlMs: number;
}

/** The nodes sharing one database and their leases (PostgreSQL only: SQLite has one server by construction). */
export interface NodeStore {
  /**
   * Takes or renews this node's lease, then returns every node whose lease is current
   * (this one included). A lease that lapsed is not renewed: the node is reaped first
   * (as {@link reapLapsed} would), since the others stopped waiting on it once it lapsed.
   * `rejoined` is true when the node starts a new lease, which after its first renewal
   * means that its lease lapsed.
   */
  renew(lease: NodeLease): Promise<{ rejoined: boolean; live: LiveNode[] }>;
  /**
   * For every node whose lease lapsed: marks its running browsers `crashed` and drops its
   * starting ones (freeing their slots), and removes the node, in one transaction per
   * node; nodes another caller is reaping at the moment are skipped.
   */
  reapLapsed(): Promise<ReapedNode[]>;
  /** Ends this node's lease at once (a clean shutdown, whose browsers are already gone). */
  leave(nodeId: string): Promise<void>;
}
