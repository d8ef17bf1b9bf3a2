-- notebridge schema 0016: the breaker of drive requests (OneDrive and SharePoint files, read in
-- place of the OneNote API), one row per scope, shared by every process on this database. Drive
-- requests do not spend the OneNote limiter's windows: their only shared state is this pause.

-- One row per scope (`drive:user:<Graph user id>`) that a 429 or 503 paused. `open_until`: no drive
-- request of the scope before this (unix ms); `trips`: the throttled answers since the scope last
-- answered anything else (the wait without `Retry-After` doubles with it); `status`: the answer
-- that last paused it. The row is deleted by the first answer after `open_until` that is not
-- throttled.
CREATE TABLE drive_breakers (
    scope       TEXT PRIMARY KEY,
    opened_at   INTEGER NOT NULL,
    open_until  INTEGER NOT NULL,
    trips       INTEGER NOT NULL,
    status      INTEGER NOT NULL
);
