-- notebridge schema version 2: the migration plan, the job queue, what exists in Notion, and the
-- one-migrating-process lock.

-- One row per `migrate --to` planning: the Notion page everything of this plan goes under.
CREATE TABLE plans (
    id              INTEGER PRIMARY KEY,
    account         TEXT NOT NULL,
    target_page_id  TEXT NOT NULL,
    created_at      INTEGER NOT NULL
);

-- One job per notebook, section group, section and page (and one link pass per plan), in OneNote order
-- (`seq`). A job runs only after its parent job is done, so Notion parents exist before children and
-- siblings are created in OneNote's order. `lease_*` marks a job in flight; a lease that expired belongs
-- to a process that died and the job is taken up again.
CREATE TABLE jobs (
    id             INTEGER PRIMARY KEY,
    plan_id        INTEGER NOT NULL REFERENCES plans(id),
    account        TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('notebook', 'section_group', 'section', 'page', 'links')),
    item_id        TEXT NOT NULL,
    parent_job     INTEGER REFERENCES jobs(id),
    seq            INTEGER NOT NULL,
    state          TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts       INTEGER NOT NULL DEFAULT 0,
    not_before     INTEGER NOT NULL DEFAULT 0,
    lease_owner    TEXT,
    lease_until    INTEGER,
    last_error     TEXT,
    updated_at     INTEGER NOT NULL,
    UNIQUE (account, kind, item_id)
);
CREATE INDEX jobs_ready ON jobs(state, seq);

-- What exists in Notion for each OneNote item. A row with a NULL notion_page_id records the intent to
-- create the page (written before the request): after a lost answer the parent's children are listed
-- and the page at `sibling_index` among ours is recognised instead of being created twice.
CREATE TABLE notion_items (
    account                TEXT NOT NULL,
    item_id                TEXT NOT NULL,
    kind                   TEXT NOT NULL,
    parent_notion_id       TEXT NOT NULL,
    sibling_index          INTEGER NOT NULL,
    title                  TEXT NOT NULL,
    notion_page_id         TEXT,
    body_state             TEXT NOT NULL DEFAULT 'none' CHECK (body_state IN ('none', 'writing', 'done')),
    onenote_last_modified  TEXT,
    blocks                 INTEGER NOT NULL DEFAULT 0,
    files                  INTEGER NOT NULL DEFAULT 0,
    report                 TEXT,
    pending_links          INTEGER NOT NULL DEFAULT 0, -- links to pages not migrated when it was written
    updated_at             INTEGER NOT NULL,
    PRIMARY KEY (account, item_id)
);
CREATE INDEX notion_items_by_parent ON notion_items(parent_notion_id, sibling_index);

-- At most one migrating process per database (exit 5 for a second one).
CREATE TABLE run_lock (
    id            INTEGER PRIMARY KEY CHECK (id = 1),
    pid           INTEGER NOT NULL,
    token         TEXT NOT NULL,
    started_at    INTEGER NOT NULL,
    heartbeat_at  INTEGER NOT NULL
);
