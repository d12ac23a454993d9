-- Auth connections become the API's own (created, listed, changed, deleted), not only
-- loaded from a fixtures file: a list order, the columns the lists filter on, the
-- internals a flow keeps beside the record, and whether a row came from fixtures (only
-- those are replaced when fixtures load again), when its next health check is due. A
-- connection's login flows and health checks are its timeline.
CREATE TABLE auth_connections_new (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects (id),
  domain TEXT NOT NULL,
  profile_name TEXT NOT NULL,
  from_fixtures INTEGER NOT NULL DEFAULT 0,
  -- The ManagedAuth record as JSON.
  record TEXT NOT NULL,
  -- What the server keeps about past flows (no secrets), as JSON.
  internals TEXT NOT NULL DEFAULT '{}',
  -- When the next health check is due, in ms since the epoch: 0 to be scheduled, NULL for none.
  next_check_at INTEGER
);
INSERT INTO auth_connections_new (id, project_id, domain, profile_name, from_fixtures, record)
  SELECT id, project_id, coalesce(json_extract(record, '$.domain'), ''), coalesce(json_extract(record, '$.profile_name'), ''), 1, record FROM auth_connections;
DROP TABLE auth_connections;
ALTER TABLE auth_connections_new RENAME TO auth_connections;
CREATE UNIQUE INDEX auth_connections_profile_domain ON auth_connections (project_id, profile_name, domain) WHERE from_fixtures = 0;
CREATE INDEX auth_connections_next_check ON auth_connections (next_check_at) WHERE next_check_at IS NOT NULL;

CREATE TABLE auth_timeline (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  connection_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects (id),
  type TEXT NOT NULL,
  -- The ManagedAuthTimelineEvent as JSON.
  record TEXT NOT NULL
);
CREATE INDEX auth_timeline_connection ON auth_timeline (connection_id, seq);

-- A login flow's or a health check's browser is the service's own: it holds a stored
-- credential's values while it types them, so no API read or DevTools client reaches it.
ALTER TABLE browsers ADD COLUMN internal INTEGER NOT NULL DEFAULT 0;
