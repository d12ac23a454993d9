-- Browsers are driven through the server's own DevTools endpoint, never Chromium's port:
-- the record keeps the SHA-256 of the browser's access token instead of a DevTools URL.
ALTER TABLE browsers DROP COLUMN cdp_ws_url;
ALTER TABLE browsers ADD COLUMN cdp_token_sha256 TEXT;
