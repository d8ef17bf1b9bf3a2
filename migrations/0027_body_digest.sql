-- notebridge schema 0027: a rewrite whose new body is the one written before writes no body.
-- `body_digest`: a digest of the converted body a complete page was last written from (its blocks'
-- request JSON, its files' sources, its drawings), recorded only when every element arrived as
-- converted (no placeholder, no smaller rendition). NULL: not known (written by an older
-- notebridge, or not all of it arrived), and a rewrite writes the body again.
ALTER TABLE notion_items ADD COLUMN body_digest TEXT;
