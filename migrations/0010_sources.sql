-- notebridge schema version 9: where each account can read notebooks (`notebridge sources`).
-- Its own notebooks, the Microsoft 365 groups it is a member of and the SharePoint sites it follows or
-- named, as the last discovery found them. The inventory of a group or site is kept under the key
-- `{account}/group:{id}` or `{account}/site:{id}` in the inventory tables' `account` column, so a team's
-- items never mix with the account's own.
CREATE TABLE sources (
    account        TEXT NOT NULL,
    kind           TEXT NOT NULL CHECK (kind IN ('personal', 'group', 'site')),
    id             TEXT NOT NULL,
    name           TEXT NOT NULL,
    url            TEXT,
    notebooks      INTEGER,            -- NULL: could not be counted (see problem)
    problem        TEXT,
    discovered_at  INTEGER NOT NULL,   -- unix ms
    PRIMARY KEY (account, kind, id)
);
