-- Each browser's inactivity timeout in seconds (`timeout_seconds` of its create), so that
-- any node showing the record shows it. Browsers recorded before it had none: the API's
-- default stands for them.
ALTER TABLE browsers ADD COLUMN timeout_seconds INTEGER NOT NULL DEFAULT 60;
