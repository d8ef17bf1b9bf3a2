-- notebridge schema version 4: the GUID OneNote uses for a page in `onenote:` links
-- (`page-id={GUID}` in `links.oneNoteClientUrl`), so links between pages can point at the migrated
-- Notion pages. Lower case, with braces, as links are matched.
ALTER TABLE pages ADD COLUMN onenote_guid TEXT;
CREATE INDEX pages_by_guid ON pages(account, onenote_guid);
