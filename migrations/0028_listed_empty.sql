-- notebridge schema 0028: sections Graph listed empty whose section file could not confirm them.
-- Their section's job is failed with the reason; `migrate --resume --retry-failed` scans their
-- notebooks again and reads the files. A row goes when a scan of its notebook confirms the section
-- (its file read: pages, or none).
CREATE TABLE listed_empty_sections (
    key TEXT NOT NULL,
    section_id TEXT NOT NULL,
    notebook_id TEXT NOT NULL,
    PRIMARY KEY (key, section_id)
);
