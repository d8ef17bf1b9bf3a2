-- notebridge schema 0025: the upload limit a personal access token learns from Notion's refusals.
-- `GET /v1/users/me` reports no upload limit to such a token, so the workspace's limit is met as the
-- refusal of a file too large; without this row every later run would create and send each such
-- file again. One row per token, keyed by the hex SHA-256 of the token (never the token itself), as
-- `notion_pace` is.
-- `size`: the smallest file size (bytes) Notion refused, so every file at least this big goes as a
-- placeholder without a request; `message`: Notion's own words for that refusal (the placeholder
-- quotes them); `refused_at`: when (unix ms). A row older than a day is not used (the workspace may
-- have changed plan since), and the next refusal replaces it.
CREATE TABLE notion_upload_refusals (
    token_hash  TEXT PRIMARY KEY,
    size        INTEGER NOT NULL,
    message     TEXT NOT NULL,
    refused_at  INTEGER NOT NULL
);
