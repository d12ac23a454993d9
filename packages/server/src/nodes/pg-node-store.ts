import { randomUUID } from "node:crypto";
import type { PgDatabase } from "../storage/pg-database.js";
import { runOnPg } from "../storage/program-runners.js";
import type { SqlProgram } from "../storage/sql-program.js";
import { type Sql, sql } from "../storage/sql-text.js";
import type { LeaseRenewal, LiveNode, NodeLease, NodeStore, ReapedNode } from "./node-store.js";

/**
 * What becomes of a lapsed node's browsers, written by the browsers' own rules (a floor
 * above): `owner` selects the node's rows; returns how many crashed.
 */
export type AbandonBrowsers = (owner: Sql, options: { keepProcess: boolean }) => SqlProgram<number>;

/** {@link NodeStore} in PostgreSQL; lease times are the database's clock (`now()`). */
export class PgNodeStore implements NodeStore {
  readonly #db: PgDatabase;
  readonly #abandon: AbandonBrowsers;

  constructor(db: PgDatabase, abandon: AbandonBrowsers) {
    this.#db = db;
    this.#abandon = abandon;
  }

  async renew(lease: NodeLease): Promise<LeaseRenewal> {
    const taken = await this.#db.transaction(async (): Promise<{ rejoined: boolean } | { heldForMs: number }> => {
      const held = await this.#db.get<{ instance: string; held_for_ms: number }>(
        "SELECT instance, (extract(epoch FROM lease_expires_at - now()) * 1000)::float8 AS held_for_ms FROM nodes WHERE node_id = $1 FOR UPDATE",
        [lease.nodeId],
      );
      if (held !== undefined && held.held_for_ms > 0) {
        if (held.instance !== lease.instance) return { heldForMs: held.held_for_ms };
        await this.#db.run(
          "UPDATE nodes SET advertise_url = $2, lease_expires_at = now() + make_interval(secs => $3::float8 / 1000), warm_ready = $4, draining = $5 WHERE node_id = $1",
          [lease.nodeId, lease.advertiseUrl, lease.ttlMs, lease.warmReady, lease.draining],
        );
        return { rejoined: false };
      }
      // A lease that lapsed is over even before another node reaps it: the others have
      // stopped waiting on this node and answered its callers, so a late renewal must not
      // revive it. The node is reaped here instead, and its process starts a new lease.
      if (held !== undefined) await this.#reap(lease.nodeId);
      // ON CONFLICT: another process inserted the node id since the read; its lease stands.
      const inserted = await this.#db.run(
        `INSERT INTO nodes (node_id, instance, lease_id, advertise_url, lease_expires_at, warm_ready, started_at, draining)
         VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5::float8 / 1000), $6, $7, $8) ON CONFLICT (node_id) DO NOTHING`,
        [lease.nodeId, lease.instance, randomUUID(), lease.advertiseUrl, lease.ttlMs, lease.warmReady, new Date().toISOString(), lease.draining],
      );
      return inserted === 1 ? { rejoined: true } : { heldForMs: lease.ttlMs };
    });
    if ("heldForMs" in taken) return { taken: false, heldForMs: taken.heldForMs };
    const live = await this.#db.all<LiveNode>(
      `SELECT n.node_id AS "nodeId", n.advertise_url AS "advertiseUrl", n.warm_ready AS "warmReady", n.lease_id AS "leaseId", n.draining,
              (SELECT count(*) FROM browsers b WHERE b.node_id = n.node_id AND b.status IN ('starting', 'running'))::int AS browsers
       FROM nodes n WHERE n.lease_expires_at > now() ORDER BY n.node_id`,
    );
    return { taken: true, rejoined: taken.rejoined, live };
  }

  async isLive(nodeId: string): Promise<boolean> {
    return (await this.#db.get<{ live: boolean }>("SELECT true AS live FROM nodes WHERE node_id = $1 AND lease_expires_at > now()", [nodeId])) !== undefined;
  }

  async heldElsewhere(nodeId: string, instance: string): Promise<number | undefined> {
    const held = await this.#db.get<{ held_for_ms: number }>(
      "SELECT (extract(epoch FROM lease_expires_at - now()) * 1000)::float8 AS held_for_ms FROM nodes WHERE node_id = $1 AND instance <> $2 AND lease_expires_at > now()",
      [nodeId, instance],
    );
    return held?.held_for_ms;
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
    // The pid and profile stay, so that the node, if it starts again on its host, ends what is left of them.
    const crashed = await runOnPg(this.#db, this.#abandon(sql`node_id = ${nodeId}`, { keepProcess: true }));
    await this.#db.run("DELETE FROM nodes WHERE node_id = $1", [nodeId]);
    return crashed;
  }

  async leave(nodeId: string, instance: string): Promise<void> {
    await this.#db.run("DELETE FROM nodes WHERE node_id = $1 AND instance = $2", [nodeId, instance]);
  }
}
