-- Profiles: saved browser state. The state itself is sealed (AES-256-GCM, bound to the
-- profile) in a file of the data directory's profiles/ folder that `snapshot` names:
-- a save writes a new file, then points the row at it in one commit, so a crash keeps
-- the previous state whole. A browser records the profile it started with (no foreign
-- key: a profile may be deleted while browsers that read it run) and whether it saves
-- into it; one browser that is not crashed may save into a profile at a time.
CREATE TABLE profiles (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  project_id TEXT NOT NULL REFERENCES projects (id),
  name TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  last_used_at TEXT,
  size_bytes INTEGER NOT NULL DEFAULT 0,
  snapshot TEXT
);
CREATE UNIQUE INDEX profiles_name ON profiles (project_id, name) WHERE name IS NOT NULL;

ALTER TABLE browsers ADD COLUMN profile_id TEXT;
ALTER TABLE browsers ADD COLUMN profile_name TEXT;
ALTER TABLE browsers ADD COLUMN profile_save INTEGER NOT NULL DEFAULT 0;
CREATE UNIQUE INDEX browsers_profile_saver ON browsers (profile_id) WHERE profile_save = 1 AND status <> 'crashed';
