-- notebridge schema version 7: history for `report`.
-- The limiter prunes its ledger to the longest window, so the requests of past hours would be lost:
-- each pruned row is folded into its user's hourly count as it goes (a trigger, so no grant pays for
-- it and the limiter's code does not change). The report adds the rows still in the ledger.
CREATE TABLE graph_request_hours (
    user_id   TEXT NOT NULL,
    hour      INTEGER NOT NULL,   -- unix ms / 3,600,000
    requests  INTEGER NOT NULL,
    PRIMARY KEY (user_id, hour)
);
CREATE TRIGGER limiter_ledger_history BEFORE DELETE ON limiter_ledger
BEGIN
    INSERT INTO graph_request_hours(user_id, hour, requests)
    VALUES (old.user_id, old.granted_at / 3600000, 1)
    ON CONFLICT(user_id, hour) DO UPDATE SET requests = requests + 1;
END;

-- The last `verify` of each account (its JSON report), so `report` can show what Notion really holds.
CREATE TABLE verify_reports (
    account      TEXT PRIMARY KEY,
    verified_at  INTEGER NOT NULL,   -- unix ms
    report       TEXT NOT NULL
);
