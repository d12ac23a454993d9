-- Why the last save into a profile was given up (the profile kept its previous state), so
-- that its owner can see it on the record: NULL when the last save went through.
ALTER TABLE profiles ADD COLUMN save_error_code TEXT;
ALTER TABLE profiles ADD COLUMN save_error_message TEXT;
ALTER TABLE profiles ADD COLUMN save_error_browser_id TEXT;
ALTER TABLE profiles ADD COLUMN save_error_at TEXT;
