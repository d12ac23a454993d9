-- Which process holds a node's lease: a random id each server process draws at its start,
-- so that a second process started under a node id whose lease is current (a
-- misconfiguration) is refused instead of taking the lease over from the first.
ALTER TABLE nodes ADD COLUMN instance TEXT NOT NULL DEFAULT '';
-- Which lease this is: drawn at random each time a node takes its lease anew (at its start,
-- or after it lapsed). A create placed on a node names the lease it was placed under, and
-- is refused once that lease is over, since its sender started the browser elsewhere then.
ALTER TABLE nodes ADD COLUMN lease_id TEXT NOT NULL DEFAULT '';
