-- The control plane's schema on PostgreSQL: the same tables, columns and rules as the
-- SQLite forms of 0001 to 0004 reach, plus what several servers sharing one
-- database need. Timestamps stay ISO 8601 text in UTC, as on SQLite, so both answer alike.

CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  default_project_id TEXT NOT NULL,
  default_project_max_concurrent_sessions INTEGER CHECK (default_project_max_concurrent_sessions >= 1),
  created_at TEXT NOT NULL
);
-- One organization per database, as per data directory: two servers starting on an empty
-- database at once cannot both create one.
CREATE UNIQUE INDEX organizations_one ON organizations ((true));

CREATE TABLE projects (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  name TEXT NOT NULL,
  -- The name folded by the server (JavaScript's toLowerCase), for the `query` filter:
  -- PostgreSQL's lower() depends on the database's locale.
  name_folded TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'archived')),
  max_concurrent_sessions INTEGER CHECK (max_concurrent_sessions >= 1),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  deleted_at TEXT
);
CREATE UNIQUE INDEX projects_live_name ON projects (org_id, name) WHERE deleted_at IS NULL;

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  project_id TEXT REFERENCES projects (id),
  secret_sha256 TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);

CREATE TABLE extensions (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects (id),
  name TEXT,
  size_bytes INTEGER NOT NULL,
  checksum TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT
);
CREATE UNIQUE INDEX extensions_name ON extensions (project_id, name) WHERE name IS NOT NULL;

-- The archives themselves, committed with their record, so that every server reads them
-- from the database it already shares (each keeps a copy on its own disk once used).
CREATE TABLE extension_archives (
  extension_id TEXT PRIMARY KEY REFERENCES extensions (id) ON DELETE CASCADE,
  archive BYTEA NOT NULL
);

CREATE TABLE browsers (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects (id),
  name TEXT,
  status TEXT NOT NULL CHECK (status IN ('starting', 'running', 'crashed')),
  cdp_token_sha256 TEXT,
  pid INTEGER,
  user_data_dir TEXT,
  sandboxed INTEGER NOT NULL DEFAULT 0,
  -- The server (node) whose process runs the browser: only it cleans up after its own
  -- unclean exit.
  node_id TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX browsers_name ON browsers (project_id, name) WHERE name IS NOT NULL;
CREATE INDEX browsers_status ON browsers (status, project_id);
CREATE INDEX browsers_node ON browsers (node_id, status);

CREATE TABLE browser_extensions (
  browser_id TEXT NOT NULL REFERENCES browsers (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  extension_id TEXT NOT NULL REFERENCES extensions (id),
  name TEXT,
  PRIMARY KEY (browser_id, position)
);
CREATE INDEX browser_extensions_extension ON browser_extensions (extension_id);

CREATE TABLE auth_connections (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id),
  record TEXT NOT NULL
);

CREATE TABLE pool_reservations (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id),
  name TEXT NOT NULL,
  size INTEGER NOT NULL CHECK (size >= 0)
);
