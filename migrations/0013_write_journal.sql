-- notebridge schema version 13: what each step of a page's write plan learned, and where links to
-- other pages were written (#21 part 2).
--
-- `write_steps`: one row per finished step of the page being written (its number in the plan, a
-- mark of what the step sends, and what it learned: block ids, an upload's id). A resumed write
-- skips the steps recorded here without looking them up in Notion; the rows go once the body is
-- written. `at` is when it was learned (an upload not attached expires an hour after it was made).
CREATE TABLE write_steps (
    account  TEXT NOT NULL,
    item_id  TEXT NOT NULL,
    step     INTEGER NOT NULL,
    mark     TEXT NOT NULL,
    learned  TEXT NOT NULL,
    at       INTEGER NOT NULL,
    PRIMARY KEY (account, item_id, step)
) WITHOUT ROWID;
-- `link_blocks`: each Notion block written holding a link to a OneNote page that was not migrated
-- yet, with the rich text it holds (the link's target kept as OneNote's page id), so the link pass
-- updates exactly these blocks without reading the page again. A row goes when all its links point
-- at Notion pages.
CREATE TABLE link_blocks (
    account  TEXT NOT NULL,
    item_id  TEXT NOT NULL,
    block_id TEXT NOT NULL,
    body     TEXT NOT NULL,
    PRIMARY KEY (account, item_id, block_id)
);
-- Whether the page's links were recorded where they were written (pages written before this
-- version were not: the link pass reads those again from OneNote, as it did).
ALTER TABLE notion_items ADD COLUMN links_recorded INTEGER NOT NULL DEFAULT 0;
