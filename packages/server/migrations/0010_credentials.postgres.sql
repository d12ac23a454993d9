-- Credentials: login values per domain. The values and the TOTP settings are sealed
-- (AES-256-GCM, bound to the row) by a key the database never holds; value_keys lists
-- the values' keys in the clear, as every read shows them. secrets_check holds one value
-- sealed with the current key, so that a server given another key refuses to start
-- instead of writing secrets no one could open.
CREATE TABLE credentials (
  seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects (id),
  name TEXT NOT NULL,
  domain TEXT NOT NULL,
  sso_provider TEXT,
  value_keys TEXT NOT NULL,
  values_sealed TEXT NOT NULL,
  totp_sealed TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE UNIQUE INDEX credentials_name ON credentials (project_id, name);
CREATE INDEX credentials_domain ON credentials (project_id, domain);

CREATE TABLE secrets_check (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  sealed TEXT NOT NULL
);
