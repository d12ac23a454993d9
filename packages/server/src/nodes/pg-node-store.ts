import type { PgDatabase } from "../storage/pg-database.js";
import type { LiveNode, NodeLease, NodeStore, ReapedNode } from "./node-store.js";

/** {@link NodeStore} in PostgreSQL; lease times are the database's clock (`now()`). */
export class PgNodeStore implements NodeStore {
  readonly #db: PgDatabase;

  constructor(db: PgDatabase) {
    this.#db = db;
  }

  async renew(lease: NodeLease): Promise<{ rejoined: boolean; live: LiveNode[] }> {
    const row = await this.#db.get<{ inserted: boolean }>(
      `INSERT INTO nodes (node_id, advertise_url, lease_expires_at, warm_ready, started_at)
       VALUES ($1, $2, now() + make_interval(secs => $3::float8 / 1000), $4, $5)
       ON CONFLICT (node_id) DO UPDATE SET advertise_url = EXCLUDED.advertise_url, lease_expires_at = EXCLUDED.lease_expires_at, warm_ready = EXCLUDED.warm_ready
       RETURNING (xmax = 0) AS inserted`,
      [lease.nodeId, lease.advertiseUrl, lease.ttlMs, lease.warmReady, new Date().toISOString()],
    );
    const live = await this.#db.all<LiveNode>(
      `SELECT n.node_id AS "nodeId", n.advertise_url AS "advertiseUrl", n.warm_ready AS "warmReady",
              (SELECT count(*) FROM browsers b WHERE b.node_id = n.node_id AND b.status IN ('starting', 'running'))::int AS browsers
       FROM nodes n WHERE n.lease_expires_at > now() ORDER BY n.node_id`,
    );
    return { rejoined: row?.inserted === true, live };
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
        await this.#db.run("DELETE FROM browsers WHERE node_id = $1 AND status = 'starting'", [lapsed.node_id]);
        // The pid and profile stay, so that the node, if it starts again on its host, ends what is left of them.
        const crashed = await this.#db.run("UPDATE browsers SET status = 'crashed', cdp_token_sha256 = NULL WHERE node_id = $1 AND status = 'running'", [
          lapsed.node_id,
        ]);
        await this.#db.run("DELETE FROM nodes WHERE node_id = $1", [lapsed.node_id]);
        return { nodeId: lapsed.node_id, crashed };
      });
      if (one === undefined) return reaped;
      reaped.push(one);
    }
  }

  async leave(nodeId: string): Promise<void> {
    await this.#db.run("DELETE FROM nodes WHERE node_id = $1", [nodeId]);
  }
}
