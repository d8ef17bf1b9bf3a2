-- notebridge schema 0017: which way each section's pages are read (`migrate --via auto|api|files`).

-- The delegated permissions the last token response granted (its `scope` field, space-separated,
-- as the service spelled them), refreshed with every token. NULL: not known yet (signed in with an
-- older notebridge, until the next refresh). `--via auto` decides from it.
ALTER TABLE accounts ADD COLUMN granted_scopes TEXT;

-- A notebook's links: `links.oneNoteClientUrl.href` (its folder's address, read by path in its
-- drive) and `links.oneNoteWebUrl.href` (what the drive API's shares route resolves): where its
-- folder of section files is in OneDrive or SharePoint.
ALTER TABLE notebooks ADD COLUMN client_url TEXT;
ALTER TABLE notebooks ADD COLUMN web_url TEXT;

-- The way planned for each section of an account's (or a group's or site's) inventory key:
-- `files` (its `.one` file through the drive API, read locally) or `api` (the OneNote API, page by
-- page), and why. `drive_id`/`item_id`/`size`: the section file, when it was found. `fell_back`: why a
-- section planned `files` went through the API after all (its file could not be found, downloaded
-- or read; NULL: it did not). `pages_by_api`: pages of a `files` section that were read through
-- the API (missing from the file, or after the fall-back).
CREATE TABLE section_ways (
    account       TEXT NOT NULL,
    section_id    TEXT NOT NULL,
    way           TEXT NOT NULL CHECK (way IN ('files', 'api')),
    reason        TEXT NOT NULL,
    drive_id      TEXT,
    item_id       TEXT,
    size          INTEGER,
    ctag          TEXT,
    fell_back     TEXT,
    pages_by_api  INTEGER NOT NULL DEFAULT 0,
    updated_at    INTEGER NOT NULL,
    PRIMARY KEY (account, section_id)
);
