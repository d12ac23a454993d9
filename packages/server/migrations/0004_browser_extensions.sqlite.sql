-- The uploaded extensions each browser was started with, in the order its create named
-- them, with the name each had then: Browser.extensions shows them as they were at the
-- start. Rows go with their browser.
CREATE TABLE browser_extensions (
  browser_id TEXT NOT NULL REFERENCES browsers (id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  extension_id TEXT NOT NULL REFERENCES extensions (id),
  name TEXT,
  PRIMARY KEY (browser_id, position)
);
CREATE INDEX browser_extensions_extension ON browser_extensions (extension_id);
