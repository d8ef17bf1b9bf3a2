-- notebridge schema 0020: what a page's row in layout `database` shows besides its dates: who wrote
-- it (`Author`, where the source says: a section file names each page's author, Graph's page
-- resource names none) and the page in OneNote on the web (`OneNote link`: Graph's
-- `links.oneNoteWebUrl`; a local file has none). Pages scanned before this version have neither
-- until their next scan.
ALTER TABLE pages ADD COLUMN author TEXT;
ALTER TABLE pages ADD COLUMN web_url TEXT;
