-- notebridge schema 0028: a planning run whose plan is not recorded yet. A `migrate --to` or `sync`
-- records what it was asked before it asks Notion or OneNote anything, and forgets it once every
-- source's plan is recorded; a run stopped in between (a refused or blocked token, a target not
-- shared yet, an outage) leaves it, and the next `--resume` of the same command goes on with it
-- instead of finding nothing queued.
-- `command`: `migrate` or `sync` (one pending run each); `request`: the run's flags as JSON (the
-- engine's `PendingRun`); `recorded_at`: unix ms.
CREATE TABLE pending_runs (
    command      TEXT PRIMARY KEY,
    request      TEXT NOT NULL,
    recorded_at  INTEGER NOT NULL
);
