-- notebridge schema 0028: pages `sync` found gone while pages of their title and created time came,
-- none told apart by a OneNote GUID (`store::moves`): their Notion page went as a deletion and a new
-- one was made, not moved. Kept so that `status` and `report` name them.
CREATE TABLE recreated_pages (
    account        TEXT NOT NULL,
    item_id        TEXT NOT NULL,
    title          TEXT NOT NULL,
    notion_page_id TEXT NOT NULL,
    why            TEXT NOT NULL,
    found_at       INTEGER NOT NULL,
    PRIMARY KEY (account, item_id)
);
