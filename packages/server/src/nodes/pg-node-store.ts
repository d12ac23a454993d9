import type { PgDatabase } from "../storage/pg-database.js";
import type { LiveNode, NodeLease, NodeStore, ReapedNode } from "./node-store.js";

/** {@link NodeStore} in PostgreSQL; lease times are the database's clock (`now()`). */
export class PgNodeStore implements NodeStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async renew(lease: NodeLease): Promise<{ rejoined: boolean; live: LiveNode[] }> {
    const rejoined = await this.#db.transaction(async () => {
      // A lease that lapsed is over even before another node reaps it: the others have
      // stopped waiting on this node and answered its callers, so a late renewal must not
      // revive it. The node reaps itself instead, and rejoins like a node that was reaped.
      const lapsed = await this.#db.get<{ node_id: string }>("SELECT node_id FROM nodes WHERE node_id = $1 AND lease_expires_at <= now() FOR UPDATE", [
        lease.nodeId,
      ]);
      if (lapsed !== undefined) await this.#reap(lease.nodeId);
      const row = await this.#db.get<{ inserted: boolean }>(
        `INSERT INTO nodes (node_id, advertise_url, lease_expires_at, warm_ready, started_at)
         VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000), $4, $5)
         ON CONFLICT (node_id) DO UPDATE SET advertise_url = EXCLUDED.advertise_url, lease_expires_at = EXCLUDED.lease_expires_at, warm_ready = EXCLUDED.warm_ready
         RETURNING (xmax = 0) AS inserted`,
        [lease.nodeId, lease.advertiseUrl, lease.ttlMs, lease.warmReady, new Date().toISOString()],
      );
      return row?.inserted === true;
    });
    const live = await this.#db.all<LiveNode>(
      `SELECT n.node_id AS "nodeId", n.advertise_url AS "advertiseUrl", n.warm_ready AS "warmReady",
              (SELECT count(*) FROM browsers b WHERE b.node_id = n.node_id AND b.status IN ('starting', 'running'))::int AS browsers
       FROM nodes n WHERE n.lease_expires_at > now() ORDER BY n.node_id`,
    );
    return { rejoined, live };
  }

  async reapLapsed(): Promise<ReapedNode[]> {
    const reaped: ReapedNode[] = [];
    for (;;) {
      const one = await this.#db.transaction(async () => {
        // SKIP LOCKED: two nodes reaping at once each take a different lapsed node.
        const lapsed = await this.#db.get<{ node_id: string }>(
          "SELECT node_id FROM nodes WHERE lease_expires_at <= now() ORDER BY node_id LIMIT 1 FOR UPDATE SKIP LOCKED",
        );
        if (lapsed === undefined) return undefined;
        return { nodeId: lapsed.node_id, crashed: await this.#reap(lapsed.node_id) };
      });
      if (one === undefined) return reaped;
      reaped.push(one);
    }
  }

  /** Within the caller's transaction, holding the node's row: frees its browsers' slots and removes it; returns how many browsers crashed. */
  async #reap(nodeId: string): Promise<number> {
    await this.#db.run("DELETE FROM browsers WHERE node_id = $1 AND status = 'starting'", [nodeId]);
    // The pid and profile stay, so that the node, if it starts again on its host, ends what is left of them.
    const crashed = await this.#db.run("UPDATE browsers SET status = 'crashed', cdp_token_sha256 = NULL WHERE node_id = $1 AND status = 'running'", [nodeId]);
    await this.#db.run("DELETE FROM nodes WHERE node_id = $1", [nodeId]);
    return crashed;
  }

  async leave(nodeId: string): Promise<void> {
    await this.#db.run("DELETE FROM nodes WHERE node_id = $1", [nodeId]);
  }
}
