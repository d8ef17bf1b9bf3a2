-- notebridge schema version 6: what each account's last scan cost in Graph requests. The limiter keeps
-- that many requests of every window free of background work (the foreground reserve), so the next
-- scan during a migration does not wait behind it.
CREATE TABLE limiter_scan_costs (
    user_id   TEXT PRIMARY KEY,
    requests  INTEGER NOT NULL,
    at        INTEGER NOT NULL      -- unix ms, when the scan ended
);
