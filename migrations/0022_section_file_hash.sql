-- notebridge schema 0022: a section file's hash as its drive listed it (`file.hashes`), written
-- `quickXorHash:{base64}` or `sha256Hash:{hex}`, which its download is checked against. The
-- listed size is kept, but a download's length is its own (OneDrive lists OneNote files with a
-- wrong size). NULL: the drive gave none, or the plan was made before this column.
ALTER TABLE section_ways ADD COLUMN hash TEXT;
