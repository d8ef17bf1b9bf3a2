-- notebridge schema 0018: how a migration is laid out in Notion (`migrate --layout pages|database`)
-- and what layout `database` made there.

-- The layout each target page was planned with. A target is laid out one way: resume, update and
-- retry keep it, and a different one asked for later is refused naming this one. Plans made
-- before this version were laid out as pages.
CREATE TABLE target_layouts (
    target_page_id  TEXT PRIMARY KEY,
    layout          TEXT NOT NULL CHECK (layout IN ('pages', 'database')),
    recorded_at     INTEGER NOT NULL
);
INSERT INTO target_layouts (target_page_id, layout, recorded_at)
    SELECT DISTINCT target_page_id, 'pages', 0 FROM plans;

-- One database per section (layout `database`). The intent is recorded before the database is
-- created (`database_id` NULL): after a crash in between, the database is looked for among the
-- parent page's children by its title before another is made.
CREATE TABLE section_databases (
    account         TEXT NOT NULL,
    section_id      TEXT NOT NULL,
    parent_page_id  TEXT NOT NULL,
    title           TEXT NOT NULL,
    database_id     TEXT,
    data_source_id  TEXT,
    intended_at     INTEGER NOT NULL,
    created_at      INTEGER,
    PRIMARY KEY (account, section_id),
    CHECK ((database_id IS NULL) = (data_source_id IS NULL))
);

-- The multi-select options a data source's `Tags` holds, by the name written to Notion
-- (`name`) and the OneNote tag name it stands for (`source_name`; the same unless Notion refuses
-- that name). `added_at` NULL: the schema update was sent or is about to be, and not confirmed:
-- after a crash the schema is read before it is sent again.
CREATE TABLE database_tags (
    data_source_id  TEXT NOT NULL,
    source_name     TEXT NOT NULL,
    name            TEXT NOT NULL,
    added_at        INTEGER,
    PRIMARY KEY (data_source_id, source_name),
    UNIQUE (data_source_id, name)
);
