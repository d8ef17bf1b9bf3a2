-- notebridge schema 0024: `sync` keeps Notion in step with OneNote's structure.
-- `placed`: the order in which pages were last put under their Notion parent (created there or
-- moved there); Notion lists a parent's child pages in that order. NULL: placed when the record
-- was made, so its rowid stands for it (siblings are created in OneNote's order).
ALTER TABLE notion_items ADD COLUMN placed INTEGER;
-- When `sync` moved the item's page to Notion's trash (the item was deleted in OneNote).
ALTER TABLE notion_items ADD COLUMN trashed_at INTEGER;
-- 'clear' while a sync step (retitle, move, trash) has found the page unedited and its write may
-- have reached Notion without being recorded: a resumed step does not take its own write for a
-- person's edit. Cleared when the step is recorded.
ALTER TABLE notion_items ADD COLUMN sync_check TEXT CHECK (sync_check IN ('clear'));
-- A row's `Order` property as last written (layout `database`). NULL: written by an older
-- notebridge, taken as in step.
ALTER TABLE notion_items ADD COLUMN row_order INTEGER;
-- What OneNote did to a page that a person edited in Notion: 'changed' (its content: the
-- OneNote version is kept beside it), 'renamed', 'moved' or 'deleted' (the page is left where
-- and as it is; `kept_item_id` is '' as there is no other version to keep).
ALTER TABLE conflicts ADD COLUMN change TEXT NOT NULL DEFAULT 'changed'
    CHECK (change IN ('changed', 'renamed', 'moved', 'deleted'));
-- When `sync` moved a section's database to Notion's trash (the section was deleted in OneNote).
ALTER TABLE section_databases ADD COLUMN trashed_at INTEGER;
