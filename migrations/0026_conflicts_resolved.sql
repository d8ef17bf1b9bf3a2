-- notebridge schema 0026: a person says they have dealt with a conflict (`notebridge resolve`).
-- `resolved_at` (Unix ms): when; NULL while it is open. A resolved conflict no longer makes a run
-- exit 4, and its page is still never written; a later OneNote change to the page (its OneNote
-- version kept beside it again) opens it again.
ALTER TABLE conflicts ADD COLUMN resolved_at INTEGER;
