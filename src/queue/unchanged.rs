//! A rewrite whose body has not changed. OneNote stamps a page modified when it is only renamed,
//! moved, or saved again as it was, and `--update` and `sync` rewrite every page stamped so. When
//! the new version converts to the very body the page was last written from (the same
//! [`body_digest`] as recorded, which leaves out the grey line of OneNote's dates), the body is
//! not written again: after the conflict rule's check, a page's date line alone is updated in
//! place and a new title written, or a row's properties (its title and OneNote's times among
//! them) are set, and the fingerprint is taken again. A page with no date line and no new title is
//! not even read. A page whose last write did not arrive whole (a placeholder, a smaller
//! rendition, an element Notion refused) has no digest recorded, so its rewrite tries again.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;

use bytes::Bytes;
use serde_json::json;
use sha2::{Digest, Sha256};

use crate::convert::blocks::table_row_json;
use crate::convert::{is_date_line, Block};
use crate::notion::database::{self, Row};
use crate::notion::item::ItemRecord;
use crate::notion::writer::{display_title, Resource, WriteError, WriteStats, Writer};
use crate::store::notion_items::{Check, NotionItem, Rewriting, Unfinished, Written};

use super::{JobError, Migration};

/// The digest of a converted body: each block's own request JSON with its depth, in document
/// order (a block at a time, walked with a stack of its own: the input decides the nesting), a
/// table's rows with it, then its files' sources and its drawings' bytes, each by name. The
/// leading date line is left out: it changes with every save.
pub fn body_digest(
    blocks: &[Block],
    resources: &HashMap<String, Resource>,
    svgs: &HashMap<String, Bytes>,
) -> String {
    let body = match blocks.first() {
        Some(b) if is_date_line(b) => &blocks[1..],
        _ => blocks,
    };
    let mut h = Sha256::new();
    let mut stack: Vec<(usize, &Block)> = body.iter().rev().map(|b| (0, b)).collect();
    while let Some((depth, b)) = stack.pop() {
        h.update(depth.to_string().as_bytes());
        h.update(b" ");
        h.update(b.to_json_shallow().to_string().as_bytes());
        if let Block::Table { rows, .. } = b {
            for r in rows {
                h.update(b"|");
                h.update(table_row_json(r).to_string().as_bytes());
            }
        }
        h.update(b"\n");
        stack.extend(b.children().iter().rev().map(|c| (depth + 1, c)));
    }
    let resources: BTreeMap<_, _> = resources.iter().collect();
    for (name, r) in resources {
        for part in [
            name.as_str(),
            &r.url,
            &r.file_name,
            r.mime.as_deref().unwrap_or(""),
            r.fallback.as_deref().unwrap_or(""),
        ] {
            h.update(part.as_bytes());
            h.update(b"\0");
        }
    }
    let svgs: BTreeMap<_, _> = svgs.iter().collect();
    for (name, svg) in svgs {
        h.update(name.as_bytes());
        h.update(b"\0");
        h.update(Sha256::digest(svg));
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// The digest to record for a body written with `stats`: none when not all of it arrived as
/// converted, so that a later rewrite writes it again.
pub(super) fn digest_to_record(digest: &str, stats: &WriteStats) -> Option<String> {
    (stats.placeholders.is_empty() && stats.smaller.is_empty() && stats.degraded.is_empty())
        .then(|| digest.to_owned())
}

impl Migration {
    /// Finishes the rewrite `page` of `item` without writing its body when the new version's
    /// body `blocks` (`digest`) is the one `record` was last written from; returns the rewrite
    /// back when it is not, or when the check finds the page edited in Notion (the conflict's own
    /// path takes it from there). `title`, `last_modified` and `pending_links` are the new
    /// version's: its title, its OneNote time, whether it links to pages not migrated yet; `row`
    /// its properties in layout `database`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn rewrite_unless_unchanged(
        &self,
        writer: &Writer,
        item: ItemRecord<'_>,
        page: Rewriting,
        record: &NotionItem,
        title: &str,
        blocks: &[Block],
        digest: &str,
        (last_modified, pending_links): (Option<&str>, bool),
        row: Option<&Row>,
    ) -> Result<Option<Rewriting>, JobError> {
        if record.body_digest.as_deref() != Some(digest) {
            return Ok(Some(page));
        }
        let title = display_title(title);
        let date_line = blocks.first().filter(|b| is_date_line(b));
        let modified = last_modified.map(str::to_owned);
        if title == record.title && date_line.is_none() && row.is_none() && page.check().is_none() {
            // Nothing to write, so nothing to check; but a conflict keeps its own path (its kept
            // copy follows OneNote), which the check below takes without a request.
            let (a, i) = (item.account.to_owned(), item.item_id.to_owned());
            if self.db.call(move |db| db.is_conflict(&a, &i)).await? {
                return Ok(Some(page));
            }
            let token = item.token.clone();
            self.db
                .call(move |db| page.unchanged(db, &token, modified.as_deref()))
                .await?;
            crate::crash::point("rewrite.unchanged");
            self.stats.unchanged.fetch_add(1, Ordering::Relaxed);
            return Ok(None);
        }
        // Every write comes after the check says the page is still notebridge's (a recorded
        // conflict is one without a request).
        let (page, listed) = self.check_rewrite(item, page).await?;
        if page.check() != Some(Check::Clear) {
            return Ok(Some(page));
        }
        let client = writer.client();
        if let Some(line) = date_line {
            // The page's first block is the date line it was written with: the check found its
            // body as written. (A check recorded by an earlier attempt lists it again.)
            let first = match listed {
                Some(l) => l.into_iter().next(),
                None => client
                    .children(page.page_id())
                    .await
                    .map_err(WriteError::from)?
                    .first()
                    .and_then(crate::notion::listed::Listed::of),
            };
            let Some(first) = first.filter(|f| f.kind == "paragraph") else {
                return Ok(Some(page));
            };
            let json = line.to_json_shallow();
            client
                .update_block(&first.id, json!({"paragraph": json["paragraph"]}))
                .await
                .map_err(WriteError::from)?;
            crate::crash::point("rewrite.date_line");
        }
        if let Some(row) = row {
            // A row's title, times and tags are its properties: set whole, as a rewrite sets them.
            database::update_row(client, page.page_id(), row)
                .await
                .map_err(WriteError::from)?;
            crate::crash::point("rewrite.properties");
        }
        if title != record.title {
            if row.is_none() {
                client
                    .set_title(page.page_id(), &title)
                    .await
                    .map_err(WriteError::from)?;
                crate::crash::point("rewrite.retitled");
            }
            let (token, retitle, t) = (item.token.clone(), page.clone(), title.clone());
            self.db
                .call(move |db| retitle.retitled(db, &token, &t))
                .await?;
        } else {
            self.stats.unchanged.fetch_add(1, Ordering::Relaxed);
        }
        // What the page holds now: its edit time moved, and its date line or properties.
        let fingerprint = self.fingerprint(page.page_id()).await?;
        let (token, digest) = (item.token.clone(), digest.to_owned());
        let (blocks, files) = (record.blocks, record.files);
        let (report, shape) = (record.report.clone(), record.body_shape.clone());
        let links_recorded = record.links_recorded;
        let row_order = row.map(|r| i64::from(r.order));
        self.db
            .call(move |db| {
                Unfinished::Rewriting(page).written(
                    db,
                    &token,
                    &Written {
                        blocks,
                        files,
                        report: report.as_deref(),
                        onenote_last_modified: modified.as_deref(),
                        pending_links,
                        shape: shape.as_deref(),
                        links_recorded,
                        fingerprint: Some(&fingerprint),
                        row_order,
                        body_digest: Some(&digest),
                    },
                )
            })
            .await?;
        crate::crash::point("rewrite.unchanged");
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::RichText;

    fn para(text: &str) -> Block {
        Block::Paragraph(crate::convert::TextBlock::new(vec![RichText::plain(text)]))
    }

    fn digest(blocks: &[Block]) -> String {
        body_digest(blocks, &HashMap::new(), &HashMap::new())
    }

    #[test]
    fn the_digest_follows_the_body_and_its_files_but_not_the_date_line() {
        let date = |m: &str| {
            let mut t = RichText::plain(format!(
                "Created 2024-01-01 10:00 · Last modified {m} (OneNote)"
            ));
            t.annotations.italic = true;
            t.annotations.color = crate::convert::Color::Text(crate::convert::Hue::Gray);
            Block::Paragraph(crate::convert::TextBlock::new(vec![t]))
        };
        let body = [date("2024-02-01 10:00"), para("a"), para("b")];
        let saved_again = [date("2024-03-01 10:00"), para("a"), para("b")];
        assert_eq!(digest(&body), digest(&saved_again));
        assert_ne!(digest(&body), digest(&[date("x"), para("a"), para("c")]));
        assert_ne!(digest(&body), digest(&[date("x"), para("b"), para("a")]));
        // A grey line that is not the first block is content.
        assert_ne!(
            digest(&[para("a"), date("1"), para("b")]),
            digest(&[para("a"), date("2"), para("b")])
        );
        // Files by their sources, drawings by their bytes.
        let file = |url: &str| Resource {
            url: url.into(),
            file_name: "f.png".into(),
            mime: None,
            fallback: None,
        };
        let with = |url: &str, svg: &'static [u8]| {
            body_digest(
                &body,
                &HashMap::from([("f".to_owned(), file(url))]),
                &HashMap::from([("ink:1".to_owned(), Bytes::from_static(svg))]),
            )
        };
        assert_eq!(with("u1", b"<svg/>"), with("u1", b"<svg/>"));
        assert_ne!(with("u1", b"<svg/>"), with("u2", b"<svg/>"));
        assert_ne!(with("u1", b"<svg/>"), with("u1", b"<svg></svg>"));
    }

    #[test]
    fn nesting_moves_the_digest_and_a_deep_body_is_walked_without_recursion() {
        let nested = |inner: Block| {
            let mut item = crate::convert::TextBlock::new(vec![RichText::plain("item")]);
            item.children.push(inner);
            Block::Bulleted(item)
        };
        assert_ne!(
            digest(&[nested(para("x"))]),
            digest(&[para("item"), para("x")])
        );
        let mut deep = para("bottom");
        for _ in 0..1000 {
            deep = nested(deep);
        }
        assert_eq!(digest(std::slice::from_ref(&deep)).len(), 64);
    }
}
