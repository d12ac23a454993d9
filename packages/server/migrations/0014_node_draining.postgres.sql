-- A node shutting down (SIGTERM) serves its browsers until they end but takes no new ones:
-- the others stop placing creates on it from their next renewal.
ALTER TABLE nodes ADD COLUMN draining BOOLEAN NOT NULL DEFAULT false;
