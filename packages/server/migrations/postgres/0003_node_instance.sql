-- Which process holds a node's lease: a random id each server process draws at its start,
-- so that a second process started under a node id whose lease is current (a
-- misconfiguration) is refused instead of taking the lease over from the first.
ALTER TABLE nodes ADD COLUMN instance TEXT NOT NULL DEFAULT '';
