-- notebridge schema 0023: a page edited in Notion is never overwritten.
-- `fingerprint`: what a complete page held when notebridge last wrote it, as Notion gave it back
-- (`notion::conflict::Fingerprint`, JSON: the page's last_edited_time, a digest of its properties
-- and one of its body's top-level blocks). NULL: written by an older notebridge (unprovable).
-- `rewrite_check`: while a page is to be rewritten (`body_state` none with a page), the verdict of
-- the check made before any write (NULL: not checked yet; 'clear'; 'conflict'), so that a resumed
-- rewrite does not take its own half-written body for a person's edit.
ALTER TABLE notion_items ADD COLUMN fingerprint TEXT;
ALTER TABLE notion_items ADD COLUMN rewrite_check TEXT;
-- 1 while the link pass updates a complete page it found unedited: a resumed pass does not take
-- its own updates for a person's edit. Cleared with the page's new fingerprint.
ALTER TABLE notion_items ADD COLUMN links_checked INTEGER NOT NULL DEFAULT 0;
-- One row per page left as a person edited it in Notion: `kept_item_id` is the notion_items record
-- of the OneNote version kept beside it (a child page, or a row of the section's database).
CREATE TABLE conflicts (
    account TEXT NOT NULL,
    item_id TEXT NOT NULL,
    notion_page_id TEXT NOT NULL,
    kept_item_id TEXT NOT NULL,
    found_at INTEGER NOT NULL,
    onenote_last_modified TEXT,
    PRIMARY KEY (account, item_id)
);
