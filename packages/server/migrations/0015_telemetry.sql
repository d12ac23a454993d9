-- Browser telemetry (issue 40): what a browser's create asked to capture, shown on its
-- record; its captured events, kept after it ends for the retention period; and, per
-- browser that captured anything, its project (so that its events stay readable, and only
-- to that project, after its browsers row is gone), when it ended and how many of its
-- events were dropped by the caps.
ALTER TABLE browsers ADD COLUMN telemetry TEXT;

CREATE TABLE telemetry_browsers (
  browser_id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL,
  -- Milliseconds since the epoch; NULL while the browser runs.
  ended_at BIGINT,
  dropped BIGINT NOT NULL DEFAULT 0,
  -- Characters of its events kept, their JSON together (its byte cap reads this, not a sum).
  bytes BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX telemetry_browsers_project ON telemetry_browsers (project_id);

CREATE TABLE telemetry_events (
  browser_id TEXT NOT NULL,
  seq BIGINT NOT NULL,
  project_id TEXT NOT NULL,
  -- Unix microseconds.
  ts BIGINT NOT NULL,
  category TEXT NOT NULL,
  type TEXT NOT NULL,
  -- The TelemetryEvent as JSON, and its length.
  event TEXT NOT NULL,
  bytes BIGINT NOT NULL,
  PRIMARY KEY (browser_id, seq)
);
CREATE INDEX telemetry_events_project ON telemetry_events (project_id, ts);
