-- notebridge schema version 8: since when the migrating process has been waiting for a service it
-- cannot reach (NULL while everything answers), so `status` can say so from another process.
ALTER TABLE run_lock ADD COLUMN unreachable_since INTEGER;
