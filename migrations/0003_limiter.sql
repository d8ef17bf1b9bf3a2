-- notebridge schema version 3: the Graph limiter's ledger.
-- Every process on this database grants requests through these tables inside one IMMEDIATE
-- transaction, so two processes can never over-grant a window or cap together.

-- One row per request sent (or about to be sent). `user_id` is the Graph user id; the app scope is
-- every row. `lane` 0 = foreground, 1 = background. `at` is the instant the request counts from: its
-- grant time while in flight, moved to its completion time when the outcome is known (the service
-- counts it on arrival, which lies between the two, so this is never more lenient). Rows older than the
-- longest window are pruned.
CREATE TABLE limiter_ledger (
    id          INTEGER PRIMARY KEY,
    user_id     TEXT NOT NULL,
    lane        INTEGER NOT NULL,
    granted_at  INTEGER NOT NULL,   -- unix ms
    at          INTEGER NOT NULL    -- unix ms
);
CREATE INDEX limiter_ledger_at ON limiter_ledger(at);
CREATE INDEX limiter_ledger_user_at ON limiter_ledger(user_id, at);

-- Requests in flight, for the concurrency caps. `owner` is "pid:token" of the granting process; a
-- killed process's rows stop counting once `lease_until` passes. `id` equals the ledger row's id.
CREATE TABLE limiter_inflight (
    id           INTEGER PRIMARY KEY,
    user_id      TEXT NOT NULL,
    lane         INTEGER NOT NULL,
    owner        TEXT NOT NULL,
    lease_until  INTEGER NOT NULL
);

-- Open (or half-open) circuit breakers. `scope` is 'app' or 'user:<id>'. Closed breakers have no row.
-- `probe_id` is the in-flight request sent as the half-open probe, if any.
CREATE TABLE limiter_breakers (
    scope             TEXT PRIMARY KEY,
    opened_at         INTEGER NOT NULL,
    open_until        INTEGER NOT NULL,
    trips             INTEGER NOT NULL,
    cooldown_ms       INTEGER NOT NULL,
    probe_id          INTEGER,
    probe_owner       TEXT,
    probe_lease_until INTEGER
);

-- Foreground requests that are waiting: background grants of the same scopes hold back for them, in
-- every process. `app_blocked` = 1 when the waiter is (also) blocked on the app scope.
CREATE TABLE limiter_fg_waiters (
    id           TEXT PRIMARY KEY,
    user_id      TEXT NOT NULL,
    app_blocked  INTEGER NOT NULL,
    lease_until  INTEGER NOT NULL
);

-- The soft brake from x-ms-throttle-limit-percentage, per user: the last value above 0.8 and when.
CREATE TABLE limiter_brakes (
    user_id      TEXT PRIMARY KEY,
    percentage   REAL NOT NULL,
    at           INTEGER NOT NULL,
    hold_until   INTEGER NOT NULL
);
