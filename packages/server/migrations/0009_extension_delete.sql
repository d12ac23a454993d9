-- A deleted extension keeps its row, marked deleted, because the browsers that loaded it
-- keep showing it (browser_extensions points at it); its archive goes, and its name is
-- free again, so the name index covers only extensions not deleted.
ALTER TABLE extensions ADD COLUMN deleted_at TEXT;
DROP INDEX extensions_name;
CREATE UNIQUE INDEX extensions_name ON extensions (project_id, name) WHERE name IS NOT NULL AND deleted_at IS NULL;
