-- Whether each browser ran in its sandbox (false only under --unsafe-no-sandbox), so that a
-- record says so after a restart too. Browsers started before this column ran without one.
ALTER TABLE browsers ADD COLUMN sandboxed INTEGER NOT NULL DEFAULT 0;
