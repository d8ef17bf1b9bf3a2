-- notebridge schema version 12: columns written and never read go (#21 part 3). What `status`,
-- `report` and `verify` show needs none of them: a page's completion time is its job's
-- (`jobs.updated_at`, the report's chart), the inventory's age is the scan's cost record, and
-- nothing shows when an account, a plan or a source was first stored.
ALTER TABLE plans DROP COLUMN created_at;
ALTER TABLE notion_items DROP COLUMN updated_at;
ALTER TABLE notebooks DROP COLUMN scanned_at;
ALTER TABLE section_groups DROP COLUMN scanned_at;
ALTER TABLE sections DROP COLUMN scanned_at;
ALTER TABLE pages DROP COLUMN scanned_at;
ALTER TABLE accounts DROP COLUMN created_at;
ALTER TABLE sources DROP COLUMN discovered_at;
