-- notebridge schema version 1: accounts and the OneNote inventory.
-- Forward-only: never edit a migration that has been released; add a new numbered file instead.

-- Signed-in Microsoft accounts. `name` is the local label (`--account NAME`); the Graph user id is the
-- limiter's user. Tokens are NULL after logout (the row, inventory and jobs are kept).
CREATE TABLE accounts (
    name                TEXT PRIMARY KEY,
    user_id             TEXT NOT NULL,
    user_principal_name TEXT NOT NULL,
    display_name        TEXT,
    refresh_token       TEXT,
    access_token        TEXT,
    access_expires_at   INTEGER,            -- unix ms
    created_at          INTEGER NOT NULL,   -- unix ms
    updated_at          INTEGER NOT NULL
);

-- The inventory, keyed by (account, id): one shared notebook seen by two accounts is two rows, since
-- each account reads it through its own budget. `position` is the order among siblings as Graph lists
-- them; `deleted_at` marks items a re-scan no longer found (kept so `status`/`verify` can explain them).
CREATE TABLE notebooks (
    account        TEXT NOT NULL,
    id             TEXT NOT NULL,
    name           TEXT NOT NULL,
    position       INTEGER NOT NULL,
    created        TEXT,
    last_modified  TEXT,
    scanned_at     INTEGER NOT NULL,
    deleted_at     INTEGER,
    PRIMARY KEY (account, id)
);

CREATE TABLE section_groups (
    account          TEXT NOT NULL,
    id               TEXT NOT NULL,
    notebook_id      TEXT NOT NULL,
    parent_group_id  TEXT,              -- NULL: directly in the notebook
    name             TEXT NOT NULL,
    position         INTEGER NOT NULL,
    created          TEXT,
    last_modified    TEXT,
    scanned_at       INTEGER NOT NULL,
    deleted_at       INTEGER,
    PRIMARY KEY (account, id),
    FOREIGN KEY (account, notebook_id) REFERENCES notebooks(account, id)
);

CREATE TABLE sections (
    account          TEXT NOT NULL,
    id               TEXT NOT NULL,
    notebook_id      TEXT NOT NULL,
    parent_group_id  TEXT,
    name             TEXT NOT NULL,
    position         INTEGER NOT NULL,
    created          TEXT,
    last_modified    TEXT,
    scanned_at       INTEGER NOT NULL,
    deleted_at       INTEGER,
    PRIMARY KEY (account, id),
    FOREIGN KEY (account, notebook_id) REFERENCES notebooks(account, id)
);

CREATE TABLE pages (
    account          TEXT NOT NULL,
    id               TEXT NOT NULL,
    section_id       TEXT NOT NULL,
    title            TEXT NOT NULL,
    level            INTEGER NOT NULL DEFAULT 0,
    "order"          INTEGER NOT NULL,
    created          TEXT,
    last_modified    TEXT,
    content_url      TEXT,
    scanned_at       INTEGER NOT NULL,
    deleted_at       INTEGER,
    PRIMARY KEY (account, id),
    FOREIGN KEY (account, section_id) REFERENCES sections(account, id)
);
CREATE INDEX pages_by_section ON pages(account, section_id, "order");
