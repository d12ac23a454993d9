-- Auth connections become the API's own (created, listed, changed, deleted), not only
-- loaded from a fixtures file: a list order, the columns the lists filter on, the
-- internals a flow keeps beside the record, and whether a row came from fixtures (only
-- those are replaced when fixtures load again), when its next health check is due. A
-- connection's login flows and health checks are its timeline.
ALTER TABLE auth_connections ADD COLUMN seq BIGSERIAL;
ALTER TABLE auth_connections ADD COLUMN domain TEXT;
ALTER TABLE auth_connections ADD COLUMN profile_name TEXT;
ALTER TABLE auth_connections ADD COLUMN from_fixtures INTEGER NOT NULL DEFAULT 0;
ALTER TABLE auth_connections ADD COLUMN internals TEXT NOT NULL DEFAULT '{}';
-- When the next health check is due, in ms since the epoch: 0 to be scheduled, NULL for none.
ALTER TABLE auth_connections ADD COLUMN next_check_at BIGINT;
UPDATE auth_connections SET domain = coalesce(record::json ->> 'domain', ''), profile_name = coalesce(record::json ->> 'profile_name', ''), from_fixtures = 1;
ALTER TABLE auth_connections ALTER COLUMN domain SET NOT NULL;
ALTER TABLE auth_connections ALTER COLUMN profile_name SET NOT NULL;
CREATE UNIQUE INDEX auth_connections_profile_domain ON auth_connections (project_id, profile_name, domain) WHERE from_fixtures = 0;
CREATE INDEX auth_connections_next_check ON auth_connections (next_check_at) WHERE next_check_at IS NOT NULL;

CREATE TABLE auth_timeline (
  seq BIGSERIAL PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  connection_id TEXT NOT NULL,
  project_id TEXT NOT NULL REFERENCES projects (id),
  type TEXT NOT NULL,
  record TEXT NOT NULL
);
CREATE INDEX auth_timeline_connection ON auth_timeline (connection_id, seq);

-- A login flow's or a health check's browser is the service's own: it holds a stored
-- credential's values while it types them, so no API read or DevTools client reaches it.
ALTER TABLE browsers ADD COLUMN internal INTEGER NOT NULL DEFAULT 0;
