-- notebridge schema 0015: Notion's pace per integration token, shared by every process on this
-- database (two `migrate` runs, or `--all-accounts` on one integration token), beside the Graph
-- limiter's ledger. Every grant is one IMMEDIATE transaction over these rows.

-- One row per integration token, keyed by the hex SHA-256 of the token (never the token itself).
-- `per_window`: the requests per window the pace spends now; `budget`: the connection's budget
-- learned from a per-connection 429 (NULL until one came); `reset_at`: a window reset that 429's
-- Retry-After gave (later resets follow every `window_ms`); `tat`: the GCRA theoretical arrival
-- time (unix ms, fractional); `paused_until`/`pause_reason`: the shared pause a 429 or 529 imposes;
-- `throttled_at`: the last 429/529; `raised_at`: when the pace last changed or a clean window began;
-- `ramping`: 1 until the first 429 of any kind (the pace doubles each full window until then).
CREATE TABLE notion_pace (
    token_hash    TEXT PRIMARY KEY,
    window_ms     INTEGER NOT NULL,
    per_window    REAL NOT NULL,
    budget        INTEGER,
    reset_at      INTEGER,
    tat           REAL NOT NULL,
    paused_until  INTEGER NOT NULL,
    pause_reason  TEXT,
    throttled_at  INTEGER,
    raised_at     INTEGER NOT NULL,
    ramping       INTEGER NOT NULL
);

-- One row per Notion request granted. `outcome`: NULL while in flight (or never answered), 1
-- answered (Notion counted it), 0 refused with 429/529. What the window that ended in a
-- per-connection 429 granted is read from here. Rows older than two windows are pruned.
CREATE TABLE notion_grants (
    id          INTEGER PRIMARY KEY,
    token_hash  TEXT NOT NULL,
    granted_at  INTEGER NOT NULL,
    outcome     INTEGER
);
CREATE INDEX notion_grants_token_at ON notion_grants(token_hash, granted_at);
