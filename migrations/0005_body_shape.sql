-- notebridge schema version 5: the shape of each written body (a hash of the number of children of
-- every block, level by level), so `verify` can tell a complete body from one with the right number of
-- blocks in the wrong places (a lost nested block hidden by a stray one).
ALTER TABLE notion_items ADD COLUMN body_shape TEXT;
