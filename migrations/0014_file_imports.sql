-- notebridge schema version 14: imports from OneNote's own files (`scan --from`, `migrate --from`).
-- Each path imported is a source of its own: its inventory is kept under the key `files:{id}` in the
-- inventory tables' `account` column, so its items never mix with an account's. `path` is the path
-- as given, made absolute.
CREATE TABLE file_imports (
    id    INTEGER PRIMARY KEY,
    path  TEXT NOT NULL UNIQUE
);

-- Where each section of an import is read from (`SectionLocation::to_stored`), kept with the plan so a
-- resumed run opens the same file; and why the last read could not read it, if it could not.
CREATE TABLE file_sections (
    account     TEXT NOT NULL,      -- the import's inventory key
    section_id  TEXT NOT NULL,
    location    TEXT NOT NULL,
    problem     TEXT,
    PRIMARY KEY (account, section_id)
);
