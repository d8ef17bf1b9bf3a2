-- notebridge schema 0028: a row keeps its properties across a move, and a section's database
-- follows its section to another notebook or section group.
-- `row_owed`: the properties a row is owed once a sync step has moved it into another data source
-- (Notion keeps only its title there): recorded with the step's check, before the move, as JSON
-- (OneNote's times, the tags by their OneNote names, the author, the link); cleared when the step
-- that wrote them is recorded. NULL: nothing owed.
ALTER TABLE notion_items ADD COLUMN row_owed TEXT;
-- A section database whose section OneNote moved: the page its new database goes in, recorded
-- before that database is created (a crash after the creation finds it there by its title).
ALTER TABLE section_databases ADD COLUMN move_parent_page_id TEXT;
-- The database the section had before it moved, and its data source, from the moment the
-- section's record names the new one until the old one is trashed (once it holds no row): rows
-- a person edited, and rows a person added there, keep it in Notion.
ALTER TABLE section_databases ADD COLUMN old_database_id TEXT;
ALTER TABLE section_databases ADD COLUMN old_data_source_id TEXT;
