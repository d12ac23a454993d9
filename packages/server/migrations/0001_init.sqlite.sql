-- The control plane's first schema: one organization per data directory, its projects,
-- API keys (hashes only), extensions, browsers, auth connections and pool reservations.
-- Timestamps are ISO 8601 strings in UTC; `seq` columns give a stable oldest-first order.

CREATE TABLE organizations (
  id TEXT PRIMARY KEY,
  default_project_id TEXT NOT NULL,
  -- NULL: no default per-project cap.
  default_project_max_concurrent_sessions INTEGER CHECK (default_project_max_concurrent_sessions >= 1),
  created_at TEXT NOT NULL
);

CREATE TABLE projects (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  name TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('active', 'archived')),
  -- NULL: no override, so the organization default (if any) applies.
  max_concurrent_sessions INTEGER CHECK (max_concurrent_sessions >= 1),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  -- Soft delete: a deleted project vanishes from every read and frees its name.
  deleted_at TEXT
);
CREATE UNIQUE INDEX projects_live_name ON projects (org_id, name) WHERE deleted_at IS NULL;

CREATE TABLE api_keys (
  id TEXT PRIMARY KEY,
  org_id TEXT NOT NULL REFERENCES organizations (id),
  -- NULL: an org-wide key.
  project_id TEXT REFERENCES projects (id),
  secret_sha256 TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL
);

CREATE TABLE extensions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects (id),
  name TEXT,
  size_bytes INTEGER NOT NULL,
  checksum TEXT NOT NULL,
  created_at TEXT NOT NULL,
  last_used_at TEXT
);
CREATE UNIQUE INDEX extensions_name ON extensions (project_id, name) WHERE name IS NOT NULL;

CREATE TABLE browsers (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects (id),
  name TEXT,
  -- 'starting' holds a concurrency slot while the process launches; reads never show it.
  status TEXT NOT NULL CHECK (status IN ('starting', 'running', 'crashed')),
  cdp_ws_url TEXT,
  -- The process and profile of a running browser, to clean up after an unclean exit.
  pid INTEGER,
  user_data_dir TEXT,
  created_at TEXT NOT NULL
);
CREATE UNIQUE INDEX browsers_name ON browsers (project_id, name) WHERE name IS NOT NULL;
CREATE INDEX browsers_status ON browsers (status, project_id);

CREATE TABLE auth_connections (
  id TEXT PRIMARY KEY,
  project_id TEXT NOT NULL REFERENCES projects (id),
  -- The ManagedAuth record as JSON, validated against the spec when loaded.
  record TEXT NOT NULL
);

CREATE TABLE pool_reservations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  project_id TEXT NOT NULL REFERENCES projects (id),
  name TEXT NOT NULL,
  size INTEGER NOT NULL CHECK (size >= 0)
);
