-- notebridge schema 0019: what the last read of an import's files found that is no item to
-- migrate, such as a folder its table of contents names that is not on disk. Not a failure: `status`, `report` and the run's summary show it, and
-- each read of the files replaces the import's notes.
CREATE TABLE import_notes (
    account  TEXT NOT NULL,   -- the import's inventory key
    seq      INTEGER NOT NULL,
    note     TEXT NOT NULL,
    PRIMARY KEY (account, seq)
);
