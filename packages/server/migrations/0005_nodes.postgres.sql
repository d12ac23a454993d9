-- The servers (nodes) sharing this database: where each is reached, and its lease. A node
-- renews its lease every few seconds; once it lapses, any node marks the lapsed node's
-- browsers crashed (freeing their slots) and removes its row. Lease times are the
-- database's clock, so the nodes' own clocks need not agree.
CREATE TABLE nodes (
  node_id TEXT PRIMARY KEY,
  -- NULL: a node that serves only its own browsers (it was started without --advertise-url).
  advertise_url TEXT,
  lease_expires_at TIMESTAMPTZ NOT NULL,
  -- Warm browsers ready on the node at its last renewal: creates go where one waits.
  warm_ready INTEGER NOT NULL DEFAULT 0,
  started_at TEXT NOT NULL
);
