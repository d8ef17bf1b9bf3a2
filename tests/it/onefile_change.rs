//! Changed copies of real desktop section files ([MS-ONESTORE] revision store, [MS-ONE]
//! structures), as a person's edits in OneNote would leave them between two runs: a page retitled,
//! edited (its last-modified time later, a text run rewritten), made a subpage, reordered,
//! deleted, or moved whole into another section file; and a notebook folder's own changes (a section file
//! renamed, moved into a section group's folder or to another notebook, deleted), which are file
//! operations. Each function changes as little as it needs and panics when the sample does not
//! hold what it changes, so that a test using it cannot pass on an unchanged file.
//!
//! How a section file names its pages ([MS-ONE] 1.3.2, 2.2.18, 2.2.19, 2.2.30): the section's root object
//! space holds the section node, whose `ElementChildNodes` are its page series in order; each
//! series names its pages' object spaces (`ChildGraphSpaceElementNodes`); a page's object space
//! holds its metadata (`jcidPageMetaData`: the page's GUID, cached title and level; a copy of it
//! is also in the section's space) and its page node (last-modified time, title and content). A
//! value of the same length is written in place; a property set that grows or shrinks is written
//! at the end of the file and its declaration pointed there ([MS-ONESTORE] 2.2.4.2), the old
//! bytes left as unused space, as OneNote itself leaves replaced data until it compacts the file.
//! The reader checks no CRC or hash of these structures. The one hash they have, the MD5 a
//! read-only object (a style, an author) keeps of its property set (ReadOnlyObjectDeclaration2RefCountFND), stays
//! true: such objects are never rewritten, only copied whole. A transaction added to the log ends
//! with a CRC of 0, which the reader does not check either.
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};

use crate::onestore_walk::{
    append, declarations, exguid_at, fragment, list, list_ids, log_counts, log_fragments,
    log_next_at, node_with_ref, properties, put_chunk_ref, resolve, root_list, u32_at, Declared,
    ExGuid, Node, Prop, Stream,
};

/// jcidSectionNode ([MS-ONE]).
const SECTION_NODE: u32 = 0x0006_0007;
/// jcidPageSeriesNode ([MS-ONE] 2.2.18).
const PAGE_SERIES: u32 = 0x0006_0008;
/// jcidPageNode ([MS-ONE] 2.2.19).
const PAGE_NODE: u32 = 0x0006_000b;
/// jcidRichTextOENode ([MS-ONE] 2.2.23).
const RICH_TEXT: u32 = 0x0006_000e;
/// jcidPageMetaData ([MS-ONE] 2.2.30).
const PAGE_METADATA: u32 = 0x0002_0030;

/// ElementChildNodes ([MS-ONE]): a section's page series, a page's content.
const ELEMENT_CHILD_NODES: u32 = 0x2400_1c20;
/// StructureElementChildNodes ([MS-ONE]): a page's title.
const STRUCTURE_ELEMENT_CHILD_NODES: u32 = 0x2400_1d5f;
/// ChildGraphSpaceElementNodes ([MS-ONE]): a page series' pages' object spaces.
const CHILD_GRAPH_SPACE_ELEMENT_NODES: u32 = 0x2c00_1d63;
/// LastModifiedTime ([MS-ONE] 2.3.67), a Time32.
const LAST_MODIFIED_TIME: u32 = 0x1400_1d7a;
/// NotebookManagementEntityGuid ([MS-ONE]): a page's GUID.
const ENTITY_GUID: u32 = 0x1c00_1c30;
/// CachedTitleString ([MS-ONE]): the page's title as its metadata caches it.
const CACHED_TITLE: u32 = 0x1c00_1cf3;
/// PageLevel ([MS-ONE] 2.3.74): 1 for a page, 2 and 3 for subpages.
const PAGE_LEVEL: u32 = 0x1400_1dff;
/// RichEditTextUnicode ([MS-ONE]): a rich text's text, in UTF-16.
const TEXT_UNICODE: u32 = 0x1c00_1c22;
/// TextExtendedAscii ([MS-ONE]): a rich text's text in one byte a character, in place of
/// RichEditTextUnicode.
const TEXT_ASCII: u32 = 0x1c00_3498;
/// TextRunIndex ([MS-ONE]): where each text run but the last ends, in UTF-16 units.
const TEXT_RUN_INDEX: u32 = 0x1c00_1e12;

/// Seconds from 1970-01-01 to 1980-01-01, where a Time32 ([MS-ONE]) counts from.
const TIME32_EPOCH: i64 = 315_532_800;

/// A page GUID as `scan --json` gives it, as the file stores it (little-endian fields).
fn guid_bytes(page_guid: &str) -> [u8; 16] {
    uuid::Uuid::parse_str(page_guid)
        .unwrap_or_else(|e| panic!("{page_guid:?} is not a GUID: {e}"))
        .to_bytes_le()
}

/// A section file's declarations, and what the walk of its structure needs from them.
struct Section<'a> {
    b: &'a [u8],
    decls: Vec<Declared>,
}

impl<'a> Section<'a> {
    fn new(b: &'a [u8]) -> Self {
        let decls = declarations(b);
        assert!(
            decls.iter().any(|d| d.jcid == Some(SECTION_NODE)),
            "not a desktop section file with a section node (an FSSHTTPB-packaged file?)"
        );
        Section { b, decls }
    }

    fn props(&self, d: &Declared) -> Vec<Prop> {
        properties(self.b, d.prop_set_at).expect("the sample's property sets read")
    }

    fn prop(&self, d: &Declared, id: u32) -> Option<Prop> {
        self.props(d).into_iter().find(|p| p.is(id))
    }

    /// The object ids or object space ids a property refers to, resolved.
    fn refs(&self, d: &Declared, p: &Prop) -> Vec<ExGuid> {
        let Some((stream, first, n)) = p.refs else {
            return Vec::new();
        };
        let base = match stream {
            Stream::Objects => d.oids_at,
            Stream::Spaces => d.osids_at.expect("an object space id stream"),
            Stream::Contexts => return Vec::new(),
        };
        (first..first + n)
            .map(|i| {
                let c = u32_at(self.b, base + 4 * i).unwrap();
                resolve(&d.ids, c).expect("every compact id is in its global id table")
            })
            .collect()
    }

    /// The object's own id (none when its compact id is not in the table the walk kept).
    fn id(&self, d: &Declared) -> Option<ExGuid> {
        resolve(&d.ids, d.oid)
    }

    /// The space of the section node: the section's root object space.
    fn root_space(&self) -> Option<ExGuid> {
        self.decls
            .iter()
            .find(|d| d.jcid == Some(SECTION_NODE))
            .and_then(|d| d.space)
    }

    /// Every declaration of object `id` in `space` (one per revision).
    fn objects(&self, space: Option<ExGuid>, id: ExGuid) -> impl Iterator<Item = &Declared> {
        self.decls
            .iter()
            .filter(move |d| d.space == space && self.id(d) == Some(id))
    }

    /// Every page metadata object naming the page `guid`, in its own space and the section's.
    fn metadata_of(&self, guid: &[u8; 16]) -> Vec<&Declared> {
        self.decls
            .iter()
            .filter(|d| d.jcid == Some(PAGE_METADATA))
            .filter(|d| {
                self.prop(d, ENTITY_GUID)
                    .and_then(|p| p.data(self.b))
                    .is_some_and(|g| g == guid)
            })
            .collect()
    }

    /// The object space of page `guid`.
    fn page_space(&self, guid: &[u8; 16]) -> ExGuid {
        let root = self.root_space();
        self.metadata_of(guid)
            .into_iter()
            .find_map(|d| d.space.filter(|s| Some(*s) != root))
            .unwrap_or_else(|| panic!("the section has no page {}", uuid_text(guid)))
    }

    /// The references of `property` that every revision of an object (`decls`) holds: the
    /// walk does not tell which revision is the latest, so they must agree (they do in the
    /// samples, whose older revisions of a section or series differ elsewhere, if at all).
    fn agreed<'d>(
        &self,
        decls: impl IntoIterator<Item = &'d Declared>,
        property: u32,
    ) -> Vec<ExGuid> {
        let mut all = distinct(decls).into_iter().map(|d| {
            let p = self.prop(d, property).expect("the object has the property");
            self.refs(d, &p)
        });
        let first = all.next().expect("the object is declared");
        assert!(
            all.all(|r| r == first),
            "the object's revisions list different references"
        );
        first
    }

    /// The section's pages in order: each one's GUID, page space and page series.
    fn pages(&self) -> Vec<([u8; 16], ExGuid, ExGuid)> {
        let root = self.root_space();
        let sections = self.decls.iter().filter(|d| d.jcid == Some(SECTION_NODE));
        let mut out = Vec::new();
        for s in self.agreed(sections, ELEMENT_CHILD_NODES) {
            for space in self.agreed(self.objects(root, s), CHILD_GRAPH_SPACE_ELEMENT_NODES) {
                let guid = self
                    .decls
                    .iter()
                    .filter(|m| m.space == Some(space) && m.jcid == Some(PAGE_METADATA))
                    .find_map(|m| self.prop(m, ENTITY_GUID)?.data(self.b)?.try_into().ok())
                    .expect("each page space has its metadata");
                out.push((guid, space, s));
            }
        }
        out
    }

    /// The rich text objects reachable from page `guid`'s page node through `property` (its
    /// title or its content), each with every declaration of it, in the order the page refers
    /// to them (depth first).
    fn texts(&self, guid: &[u8; 16], property: u32) -> Vec<Vec<&Declared>> {
        let space = Some(self.page_space(guid));
        let pages: Vec<&Declared> = self
            .decls
            .iter()
            .filter(|d| d.space == space && d.jcid == Some(PAGE_NODE))
            .collect();
        assert!(!pages.is_empty(), "the page space has a page node");
        let mut stack: Vec<ExGuid> = Vec::new();
        for p in &pages {
            if let Some(prop) = self.prop(p, property) {
                for r in self.refs(p, &prop).into_iter().rev() {
                    if !stack.contains(&r) {
                        stack.push(r);
                    }
                }
            }
        }
        let mut seen = HashSet::new();
        let mut out = Vec::new();
        while let Some(id) = stack.pop() {
            if !seen.insert(id) {
                continue;
            }
            let decls: Vec<&Declared> = self.objects(space, id).collect();
            if decls.iter().any(|d| d.jcid == Some(RICH_TEXT)) {
                out.push(decls.clone());
            }
            // Every object reference of every revision: outlines, their elements, their content.
            let mut next = Vec::new();
            for d in &decls {
                for p in self.props(d) {
                    if matches!(p.refs, Some((Stream::Objects, _, _))) {
                        next.extend(self.refs(d, &p));
                    }
                }
            }
            let mut uniq = Vec::new();
            for n in next {
                if !uniq.contains(&n) {
                    uniq.push(n);
                }
            }
            stack.extend(uniq.into_iter().rev());
        }
        out
    }
}

/// The declarations with a property set of their own: of several that share one (revisions of
/// an object that did not change), the first, since a change is made once per property set and
/// reaches them all.
fn distinct<'a>(decls: impl IntoIterator<Item = &'a Declared>) -> Vec<&'a Declared> {
    let mut seen = HashSet::new();
    decls.into_iter().filter(|d| seen.insert(d.chunk)).collect()
}

fn uuid_text(g: &[u8; 16]) -> String {
    uuid::Uuid::from_bytes_le(*g).to_string()
}

/// A rich text object's text (UTF-16 units), from either of its forms.
fn text_of(s: &Section, d: &Declared) -> Option<Vec<u16>> {
    if let Some(data) = s.prop(d, TEXT_UNICODE).and_then(|p| p.data(s.b)) {
        return Some(
            data.chunks_exact(2)
                .map(|c| u16::from_le_bytes([c[0], c[1]]))
                .collect(),
        );
    }
    let data = s.prop(d, TEXT_ASCII)?.data(s.b)?;
    Some(data.iter().map(|&c| u16::from(c)).collect())
}

/// A reference in a rewritten list of references: one of the old ones (by its index), or a new
/// compact id.
enum Ref {
    Kept(usize),
    New(u32),
}

/// Rewritten property sets: each changed object's new property set bytes, by where its old one
/// is (objects of several declarations that share one property set are changed once).
#[derive(Default)]
struct Rewrites {
    chunks: HashMap<(usize, usize), Vec<u8>>,
}

impl Rewrites {
    /// The property set of `d` as it stands now (rewritten or not).
    fn current(&self, b: &[u8], d: &Declared) -> Vec<u8> {
        self.chunks
            .get(&d.chunk)
            .cloned()
            .unwrap_or_else(|| b[d.chunk.0..d.chunk.0 + d.chunk.1].to_vec())
    }

    /// Replaces the value of property `p` of `d` (for type 0x7, its length and data) with `value`.
    fn set_value(&mut self, b: &[u8], d: &Declared, p: &Prop, old_len: usize, value: &[u8]) {
        let mut chunk = self.current(b, d);
        let at = p.value_at - d.chunk.0;
        chunk.splice(at..at + old_len, value.iter().copied());
        self.chunks.insert(d.chunk, chunk);
    }

    /// Makes property `p` of `d` the property `id` (same type), its value left as it is.
    fn set_id(&mut self, b: &[u8], d: &Declared, p: &Prop, id: u32) {
        let mut chunk = self.current(b, d);
        let at = p.id_at - d.chunk.0;
        chunk[at..at + 4].copy_from_slice(&id.to_le_bytes());
        self.chunks.insert(d.chunk, chunk);
    }

    /// Replaces a type-0x7 property's data.
    fn set_data(&mut self, b: &[u8], d: &Declared, p: &Prop, data: &[u8]) {
        let old_len = 4 + p.data(b).unwrap().len();
        let mut value = (data.len() as u32).to_le_bytes().to_vec();
        value.extend_from_slice(data);
        self.set_value(b, d, p, old_len, &value);
    }

    /// Gives the references of property `p` of `d` in its stream in a new order: `order[i]` is
    /// the index (among the property's references) of the one that comes `i`th; an index left
    /// out drops that reference (and the property's count and the stream's shrink with it).
    fn set_refs(&mut self, b: &[u8], d: &Declared, p: &Prop, order: &[usize]) {
        let order: Vec<Ref> = order.iter().map(|&i| Ref::Kept(i)).collect();
        self.set_refs_with(b, d, p, &order);
    }

    /// [`Rewrites::set_refs`] with new references among the kept ones.
    fn set_refs_with(&mut self, b: &[u8], d: &Declared, p: &Prop, order: &[Ref]) {
        let (stream, first, n) = p.refs.expect("a property with references");
        let base = match stream {
            Stream::Objects => d.oids_at,
            Stream::Spaces => d.osids_at.unwrap(),
            Stream::Contexts => panic!("context ids are not reordered"),
        } - d.chunk.0;
        let mut chunk = self.current(b, d);
        let old: Vec<[u8; 4]> = (0..n)
            .map(|i| {
                let at = base + 4 * (first + i);
                chunk[at..at + 4].try_into().unwrap()
            })
            .collect();
        let new: Vec<u8> = order
            .iter()
            .flat_map(|e| match e {
                Ref::Kept(i) => old[*i],
                Ref::New(compact) => compact.to_le_bytes(),
            })
            .collect();
        let count_of = |c: usize| u32::try_from(c).unwrap();
        // The property's count, then the stream's (its header's low 24 bits), then the stream.
        let count_at = p.value_at - d.chunk.0;
        let count = u32::from_le_bytes(chunk[count_at..count_at + 4].try_into().unwrap());
        let now = count - count_of(n) + count_of(order.len());
        chunk[count_at..count_at + 4].copy_from_slice(&now.to_le_bytes());
        let h = u32::from_le_bytes(chunk[base - 4..base].try_into().unwrap());
        let h = h - count_of(n) + count_of(order.len());
        chunk[base - 4..base].copy_from_slice(&h.to_le_bytes());
        let at = base + 4 * first;
        chunk.splice(at..at + 4 * n, new);
        self.chunks.insert(d.chunk, chunk);
    }

    /// The file with the rewritten property sets: in place when a set kept its size, else at the
    /// end of the file (8-byte aligned, as compressed references need), every declaration of it
    /// pointed there.
    fn apply(self, b: &[u8], decls: &[Declared]) -> Vec<u8> {
        assert!(!self.chunks.is_empty(), "nothing was changed");
        // A read-only object (a style, an author) keeps an MD5 of its property set; none of the
        // changes here touches one, and this keeps it so.
        assert!(
            !decls
                .iter()
                .any(|d| d.read_only() && self.chunks.contains_key(&d.chunk)),
            "a read-only object's property set is not rewritten"
        );
        let mut out = b.to_vec();
        let mut moved = Vec::new();
        for ((stp, cb), chunk) in &self.chunks {
            if chunk.len() == *cb {
                out[*stp..stp + cb].copy_from_slice(chunk);
            } else {
                moved.push(((*stp, *cb), chunk));
            }
        }
        moved.sort_by_key(|(at, _)| *at);
        for (old, chunk) in moved {
            let at = out.len().next_multiple_of(8);
            out.resize(at, 0);
            out.extend_from_slice(chunk);
            out.resize(out.len().next_multiple_of(8), 0);
            let cb = out.len() - at;
            for d in decls.iter().filter(|d| d.chunk == old) {
                put_chunk_ref(&mut out, d.ref_at, d.stp_format, d.cb_format, at, cb)
                    .unwrap_or_else(|| {
                        panic!("the declaration's reference format cannot reach {at} ({cb} bytes)")
                    });
            }
        }
        out
    }
}

/// UTF-16LE bytes of `text`.
fn utf16(text: &str) -> Vec<u8> {
    text.encode_utf16().flat_map(u16::to_le_bytes).collect()
}

/// Text run ends after the text from `at` (UTF-16 units) lost `old` units and gained `new`: an
/// end inside the replaced span is kept inside the new one, an end after it moves with it.
fn shift_runs(runs: &[u8], at: usize, old: usize, new: usize) -> Vec<u8> {
    runs.chunks_exact(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()) as usize)
        .map(|e| {
            if e >= at + old {
                e + new - old
            } else if e > at {
                e.min(at + new)
            } else {
                e
            }
        })
        .flat_map(|e| (e as u32).to_le_bytes())
        .collect()
}

/// Replaces the units `at..at + old_len` of the text of rich text object `d` with `new`,
/// keeping its runs in step.
fn splice_text(s: &Section, w: &mut Rewrites, d: &Declared, at: usize, old_len: usize, new: &str) {
    let text = text_of(s, d).expect("a rich text object with its text");
    let new16: Vec<u16> = new.encode_utf16().collect();
    let mut t = text.clone();
    t.splice(at..at + old_len, new16.iter().copied());
    let runs = s.prop(d, TEXT_RUN_INDEX);
    // The text first, then the runs: both are values of the same property set, rewritten in
    // the order they are in it, each found again in the set as it stands.
    let bytes: Vec<u8> = t.iter().flat_map(|u| u.to_le_bytes()).collect();
    // A text kept in one byte a character is written as the Unicode text OneNote would write
    // for the new words: the property becomes RichEditTextUnicode.
    let p = match s.prop(d, TEXT_UNICODE) {
        Some(p) => p,
        None => {
            let p = s.prop(d, TEXT_ASCII).unwrap();
            w.set_id(s.b, d, &p, TEXT_UNICODE);
            p
        }
    };
    let new_runs = runs.map(|r| {
        (
            r,
            shift_runs(r.data(s.b).unwrap(), at, old_len, new16.len()),
        )
    });
    // Later property first, so that the earlier one's position is still right.
    let mut edits = vec![(p, bytes)];
    edits.extend(new_runs);
    edits.sort_by_key(|(p, _)| std::cmp::Reverse(p.value_at));
    for (p, data) in edits {
        w.set_data(s.b, d, &p, &data);
    }
}

/// A copy of section `bytes` in which page `page_guid` is titled `new_title` (any length): the
/// title's first text object rewritten whole, and the title cached in the page's metadata (its
/// own and the section's copy).
pub fn retitle_page(bytes: &[u8], page_guid: &str, new_title: &str) -> Vec<u8> {
    let s = Section::new(bytes);
    let guid = guid_bytes(page_guid);
    let texts = s.texts(&guid, STRUCTURE_ELEMENT_CHILD_NODES);
    let first = texts.first().expect("the page has a title with text");
    let mut w = Rewrites::default();
    for d in distinct(first.iter().copied()) {
        let len = text_of(&s, d).unwrap().len();
        splice_text(&s, &mut w, d, 0, len, new_title);
    }
    for d in distinct(s.metadata_of(&guid)) {
        if let Some(p) = s.prop(d, CACHED_TITLE) {
            let mut data = utf16(new_title);
            data.extend([0, 0]);
            w.set_data(bytes, d, &p, &data);
        }
    }
    w.apply(bytes, &s.decls)
}

/// A copy of section `bytes` in which page `page_guid`'s last-modified time (its page node's
/// `LastModifiedTime`, what OneNote sets on any edit of the page) is `new_time`, to the second.
pub fn touch_page(bytes: &[u8], page_guid: &str, new_time: DateTime<Utc>) -> Vec<u8> {
    let s = Section::new(bytes);
    let space = Some(s.page_space(&guid_bytes(page_guid)));
    let t32 = u32::try_from(new_time.timestamp() - TIME32_EPOCH).expect("a time from 1980 on");
    let mut w = Rewrites::default();
    for d in distinct(
        s.decls
            .iter()
            .filter(|d| d.space == space && d.jcid == Some(PAGE_NODE)),
    ) {
        let p = s.prop(d, LAST_MODIFIED_TIME).expect("a page node's time");
        w.set_value(bytes, d, &p, 4, &t32.to_le_bytes());
    }
    w.apply(bytes, &s.decls)
}

/// A copy of section `bytes` in which the first text run of page `page_guid`'s content that
/// holds `old` has it replaced by `new` (any length; the runs after it move with it). The page's
/// time is left as it is: [`touch_page`] says when it was edited.
pub fn rewrite_text(bytes: &[u8], page_guid: &str, old: &str, new: &str) -> Vec<u8> {
    let s = Section::new(bytes);
    let guid = guid_bytes(page_guid);
    let old16: Vec<u16> = old.encode_utf16().collect();
    let at =
        |d: &Declared| text_of(&s, d).and_then(|t| t.windows(old16.len()).position(|w| w == old16));
    let mut w = Rewrites::default();
    let found = s
        .texts(&guid, ELEMENT_CHILD_NODES)
        .into_iter()
        .find(|decls| decls.iter().any(|d| at(d).is_some()))
        .unwrap_or_else(|| panic!("page {page_guid} has no text run holding {old:?}"));
    // Each revision of the object: its own text, where it holds the words.
    for d in distinct(found) {
        if let Some(at) = at(d) {
            splice_text(&s, &mut w, d, at, old16.len(), new);
        }
    }
    w.apply(bytes, &s.decls)
}

/// A copy of section `bytes` in which page `page_guid` has `level` (1: a page, 2 and 3: a
/// subpage, as OneNote's "make subpage" sets it), in its metadata and the section's copy of it.
pub fn set_page_level(bytes: &[u8], page_guid: &str, level: u32) -> Vec<u8> {
    assert!((1..=3).contains(&level), "OneNote's levels are 1 to 3");
    let s = Section::new(bytes);
    let mut w = Rewrites::default();
    for d in distinct(s.metadata_of(&guid_bytes(page_guid))) {
        let p = s.prop(d, PAGE_LEVEL).expect("a page level");
        w.set_value(bytes, d, &p, 4, &level.to_le_bytes());
    }
    w.apply(bytes, &s.decls)
}

/// The page GUIDs of section `bytes` in its order (as `scan --json` gives them).
pub fn page_order(bytes: &[u8]) -> Vec<String> {
    Section::new(bytes)
        .pages()
        .iter()
        .map(|(g, _, _)| uuid_text(g))
        .collect()
}

/// Puts the references of `property` of each of `decls` (revisions of one object) in `wanted`'s
/// order, dropping those `wanted` leaves out.
fn keep_in_order<'a>(
    s: &Section,
    w: &mut Rewrites,
    decls: impl IntoIterator<Item = &'a Declared>,
    property: u32,
    wanted: &[ExGuid],
) {
    for d in distinct(decls) {
        let p = s.prop(d, property).expect("the object has the property");
        let refs = s.refs(d, &p);
        let order: Vec<usize> = wanted
            .iter()
            .filter_map(|id| refs.iter().position(|r| r == id))
            .collect();
        w.set_refs(s.b, d, &p, &order);
    }
}

/// The declarations of page series `series`.
fn series_decls<'a>(s: &'a Section, series: ExGuid) -> impl Iterator<Item = &'a Declared> {
    s.decls
        .iter()
        .filter(move |d| d.jcid == Some(PAGE_SERIES) && s.id(d) == Some(series))
}

/// Puts the section's pages in `want`'s order (page GUIDs, each of them once): the section's
/// series, when each holds one page (OneNote's usual layout), or the pages of its one series.
fn arrange(bytes: &[u8], want: &[&str]) -> Vec<u8> {
    let s = Section::new(bytes);
    let pages = s.pages();
    let find = |g: &str| {
        let g = guid_bytes(g);
        *pages
            .iter()
            .find(|(p, _, _)| *p == g)
            .unwrap_or_else(|| panic!("the section has no page {}", uuid_text(&g)))
    };
    let want: Vec<([u8; 16], ExGuid, ExGuid)> = want.iter().map(|g| find(g)).collect();
    let mut w = Rewrites::default();
    let one_page_each = pages
        .iter()
        .all(|(_, _, series)| pages.iter().filter(|(_, _, s)| s == series).count() == 1);
    if one_page_each {
        let series: Vec<ExGuid> = want.iter().map(|p| p.2).collect();
        let sections = s.decls.iter().filter(|d| d.jcid == Some(SECTION_NODE));
        keep_in_order(&s, &mut w, sections, ELEMENT_CHILD_NODES, &series);
    } else {
        let series = want[0].2;
        assert!(
            pages.iter().all(|(_, _, s)| *s == series),
            "pages spread over several series, some holding more than one, are not reordered"
        );
        let spaces: Vec<ExGuid> = want.iter().map(|p| p.1).collect();
        let decls = series_decls(&s, series);
        keep_in_order(&s, &mut w, decls, CHILD_GRAPH_SPACE_ELEMENT_NODES, &spaces);
    }
    w.apply(bytes, &s.decls)
}

/// A copy of section `bytes` whose pages are in `order` (page GUIDs, each of the section's pages
/// once), as dragging pages in OneNote's page list leaves it.
pub fn reorder_pages(bytes: &[u8], order: &[&str]) -> Vec<u8> {
    let now = page_order(bytes);
    let mut a: Vec<&str> = now.iter().map(String::as_str).collect();
    let mut b = order.to_vec();
    a.sort_unstable();
    b.sort_unstable();
    assert_eq!(a, b, "a new order names each page once");
    arrange(bytes, order)
}

/// A copy of section `bytes` without page `page_guid`: its series no longer lists it, or, when
/// it was its series' only page, the section no longer lists the series. The page's object space
/// stays in the file, unlisted, as a deleted page's data stays until OneNote cleans the file up.
pub fn remove_page(bytes: &[u8], page_guid: &str) -> Vec<u8> {
    let s = Section::new(bytes);
    let pages = s.pages();
    let guid = guid_bytes(page_guid);
    let &(_, _, series) = pages
        .iter()
        .find(|(p, _, _)| *p == guid)
        .unwrap_or_else(|| panic!("the section has no page {page_guid}"));
    assert!(pages.len() > 1, "the section keeps at least one page");
    let mut w = Rewrites::default();
    let siblings: Vec<ExGuid> = pages
        .iter()
        .filter(|(p, _, s)| *s == series && *p != guid)
        .map(|p| p.1)
        .collect();
    if siblings.is_empty() {
        let mut others: Vec<ExGuid> = pages.iter().map(|p| p.2).filter(|s| *s != series).collect();
        others.dedup();
        let sections = s.decls.iter().filter(|d| d.jcid == Some(SECTION_NODE));
        keep_in_order(&s, &mut w, sections, ELEMENT_CHILD_NODES, &others);
    } else {
        let decls = series_decls(&s, series);
        keep_in_order(
            &s,
            &mut w,
            decls,
            CHILD_GRAPH_SPACE_ELEMENT_NODES,
            &siblings,
        );
    }
    w.apply(bytes, &s.decls)
}

/// ObjectSpaceManifestListReferenceFND ([MS-ONESTORE] 2.5.2): an object space's list, in the
/// root list.
const SPACE_LIST_REFERENCE: u32 = 0x008;
/// ObjectSpaceManifestListStartFND and RevisionManifestListStartFND: each names
/// its object space first thing in its body.
const SPACE_NAMING_STARTS: [u32; 2] = [0x00c, 0x014];
/// ObjectDeclarationFileData3RefCountFND and ...LargeRefCountFND (2.5.27): objects whose
/// data is in the file's data store, outside the page's lists.
const FILE_DATA_DECLARATIONS: [u32; 2] = [0x072, 0x073];

/// Copies a page's object space (its lists, and the chunks they point to) from one section file
/// to the end of another: each list as one fragment under a list id the other file does not use,
/// each reference uncompressed, the space named by the id it gets there.
struct Copier<'a> {
    from: &'a [u8],
    counts: HashMap<u32, usize>,
    out: Vec<u8>,
    next_id: u32,
    /// The lists written: id and node count, for the transaction log.
    lists: Vec<(u32, usize)>,
    chunks: HashMap<(usize, usize), (usize, usize)>,
    space: ExGuid,
    /// The file data objects the page's declarations name (`<ifndf>{GUID}`), as stored.
    file_data: Vec<[u8; 16]>,
}

impl Copier<'_> {
    fn chunk(&mut self, stp: usize, cb: usize) -> (usize, usize) {
        if let Some(done) = self.chunks.get(&(stp, cb)) {
            return *done;
        }
        let at = append(&mut self.out, &self.from[stp..stp + cb]);
        self.chunks.insert((stp, cb), (at, cb));
        (at, cb)
    }

    fn list(&mut self, stp: usize, cb: usize) -> (usize, usize) {
        let l = list(self.from, stp, cb, &self.counts).expect("the page's lists read");
        let mut nodes = Vec::new();
        for n in &l.nodes {
            if FILE_DATA_DECLARATIONS.contains(&n.id) {
                self.file_data.extend(file_data_named(self.from, n));
            }
            let rest = &self.from[n.body_at..n.at + n.size];
            match n.chunk {
                // A nil or empty reference is kept as it is.
                Some((s, c)) if c > 0 && s.checked_add(c).is_some_and(|e| e <= self.from.len()) => {
                    let (s, c) = if n.base == 2 {
                        self.list(s, c)
                    } else {
                        self.chunk(s, c)
                    };
                    nodes.extend(node_with_ref(n.id, n.base, s, c, rest));
                }
                _ => {
                    let mut node = self.from[n.at..n.at + n.size].to_vec();
                    if SPACE_NAMING_STARTS.contains(&n.id) {
                        node[4..20].copy_from_slice(&self.space.0);
                        node[20..24].copy_from_slice(&self.space.1.to_le_bytes());
                    }
                    nodes.extend(node);
                }
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        self.lists.push((id, l.nodes.len()));
        let f = fragment(id, 0, &nodes);
        (append(&mut self.out, &f), f.len())
    }
}

/// The file data object a file data declaration names ([MS-ONESTORE] 2.5.27: oid, JCID, a
/// reference count of 1 or 4 bytes, then `FileDataReference`, a counted UTF-16 string), when it
/// names one in the file's data store (`<ifndf>{GUID}`).
fn file_data_named(b: &[u8], n: &Node) -> Option<[u8; 16]> {
    let at = n.body_at + 8 + if n.id == 0x072 { 1 } else { 4 };
    let cch = u32_at(b, at)? as usize;
    let units: Vec<u16> = b
        .get(at + 4..at + 4 + 2 * cch)?
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    let text = String::from_utf16(&units).ok()?;
    let guid = text.strip_prefix("<ifndf>")?;
    Some(
        uuid::Uuid::parse_str(guid.trim_matches(['{', '}']))
            .ok()?
            .to_bytes_le(),
    )
}

/// FileDataStoreListReferenceFND ([MS-ONESTORE] 2.5.21), in the root list: the file's data store.
const FILE_DATA_STORE: u32 = 0x090;
/// FileDataStoreObjectReferenceFND (2.5.22): one object of the store, and its GUID.
const FILE_DATA_OBJECT: u32 = 0x094;

/// The file data store's list of `b`.
fn file_data_store(b: &[u8]) -> Option<crate::onestore_walk::List> {
    let counts = log_counts(b);
    let (stp, cb) = root_list(b)
        .nodes
        .into_iter()
        .find(|n| n.id == FILE_DATA_STORE)?
        .chunk?;
    list(b, stp, cb, &counts)
}

/// ChunkTerminatorFND ([MS-ONESTORE] 2.4.3): no more nodes in this fragment, as a 4-byte node.
const CHUNK_TERMINATOR: u32 = 0x0ff | (4 << 10);

/// Adds `nodes` (whole nodes, back to back) to the end of list `l` of `out`, where OneNote adds a
/// list's nodes: in the unused end of its last fragment when they fit there, else in a fragment
/// of its own chained after it (the last one then ended with a chunk terminator).
fn append_nodes(out: &mut Vec<u8>, l: &crate::onestore_walk::List, nodes: &[u8]) {
    let (last, last_cb) = *l.fragments.last().unwrap();
    let start = l
        .nodes
        .iter()
        .filter(|n| n.at > last && n.at < last + last_cb)
        .map(|n| n.at + n.size)
        .max()
        .unwrap_or(last + 16);
    let end = last + last_cb - 20;
    if start + nodes.len() <= end {
        out[start..start + nodes.len()].copy_from_slice(nodes);
        return;
    }
    if start + 4 <= end {
        out[start..start + 4].copy_from_slice(&CHUNK_TERMINATOR.to_le_bytes());
    }
    let f = fragment(l.id, l.fragments.len() as u32, nodes);
    let at = append(out, &f);
    out[end..end + 8].copy_from_slice(&(at as u64).to_le_bytes());
    out[end + 8..end + 12].copy_from_slice(&(f.len() as u32).to_le_bytes());
}

/// A page moved from section `from` to section `to`, as cutting it in OneNote and pasting it at
/// the end of the other section leaves both files: `from` without page `page_guid` (see
/// [`remove_page`]), and `to` with the page's object space, its GUID, title, times, level and
/// content as they were, listed after `to`'s last page (in that page's series), and the page's
/// pictures and files added to `to`'s data store. In `to` the
/// page's space is added to the root list in a fragment of its own, its lists get ids `to` does
/// not use, and a transaction is added to the log that counts them ([MS-ONESTORE] 2.3.3), as an
/// append by OneNote would. The space is named by an ExtendedGUID whose GUID the series' global
/// id table already holds (another number with it), so that the series can name it without a
/// table entry of its own. The other section needs a data store of its own when the page has
/// pictures or files.
pub fn move_page(from: &[u8], to: &[u8], page_guid: &str) -> (Vec<u8>, Vec<u8>) {
    let guid = guid_bytes(page_guid);
    let a = Section::new(from);
    let space = a.page_space(&guid);
    let reference = root_list(from)
        .nodes
        .into_iter()
        .find(|n| n.id == SPACE_LIST_REFERENCE && exguid_at(from, n.body_at) == Some(space))
        .expect("the page's space is in the root list");
    let b = Section::new(to);
    assert!(
        b.metadata_of(&guid).is_empty(),
        "the other section has page {page_guid} already"
    );
    let &(_, last_space, series) = b.pages().last().expect("the other section has pages");
    let root = root_list(to);
    let n = 1 + root
        .nodes
        .iter()
        .filter(|n| n.id == SPACE_LIST_REFERENCE)
        .filter_map(|n| exguid_at(to, n.body_at))
        .filter(|g| g.0 == last_space.0)
        .map(|g| g.1)
        .max()
        .unwrap();
    assert!(n < 256, "a compact id's number is one byte");
    let new_space = (last_space.0, n);
    let mut w = Rewrites::default();
    for d in distinct(series_decls(&b, series)) {
        let p = b.prop(d, CHILD_GRAPH_SPACE_ELEMENT_NODES).unwrap();
        let index = d
            .ids
            .iter()
            .find(|(_, g)| **g == new_space.0)
            .map(|(i, _)| *i)
            .expect("the series' table holds its page's space");
        let (_, _, count) = p.refs.unwrap();
        let mut order: Vec<Ref> = (0..count).map(Ref::Kept).collect();
        order.push(Ref::New((index << 8) | n));
        w.set_refs_with(to, d, &p, &order);
    }
    let mut c = Copier {
        from,
        counts: log_counts(from),
        out: w.apply(to, &b.decls),
        next_id: list_ids(to).into_iter().max().unwrap() + 1,
        lists: Vec::new(),
        chunks: HashMap::new(),
        space: new_space,
        file_data: Vec::new(),
    };
    let (stp, cb) = reference.chunk.unwrap();
    let (stp, cb) = c.list(stp, cb);
    // The page's pictures and files: their objects in the data store, after `to`'s own.
    let counts = log_counts(to);
    let mut entries: Vec<(u32, u32)> = Vec::new();
    let wanted: Vec<[u8; 16]> = c.file_data.clone();
    if !wanted.is_empty() {
        let theirs = file_data_store(from).expect("the page's section has a data store");
        let ours = file_data_store(to).expect("the other section has a data store");
        let mut nodes = Vec::new();
        let mut added = 0;
        for g in &wanted {
            let in_to = ours.nodes.iter().any(|n| {
                n.id == FILE_DATA_OBJECT && to.get(n.body_at..n.body_at + 16) == Some(&g[..])
            });
            if in_to || nodes.windows(16).any(|w| w == g) {
                continue;
            }
            let n = theirs
                .nodes
                .iter()
                .find(|n| {
                    n.id == FILE_DATA_OBJECT && from.get(n.body_at..n.body_at + 16) == Some(&g[..])
                })
                .expect("the page's file data is in its section's data store");
            let (s, len) = n.chunk.unwrap();
            let (s, len) = c.chunk(s, len);
            nodes.extend(node_with_ref(FILE_DATA_OBJECT, 1, s, len, g));
            added += 1;
        }
        if added > 0 {
            append_nodes(&mut c.out, &ours, &nodes);
            if let Some(n) = counts.get(&ours.id) {
                entries.push((ours.id, *n as u32 + added));
            }
        }
    }
    let mut out = c.out;
    // The root list: the space's reference, after its last node.
    let mut name = new_space.0.to_vec();
    name.extend(new_space.1.to_le_bytes());
    append_nodes(
        &mut out,
        &root,
        &node_with_ref(SPACE_LIST_REFERENCE, 2, stp, cb, &name),
    );
    // The transaction: the root list's new count, the page's lists' counts, and its end (srcID
    // 1, whose CRC the reader does not check and is left 0).
    entries.extend(counts.get(&root.id).map(|n| (root.id, *n as u32 + 1)));
    entries.extend(c.lists.iter().map(|(id, n)| (*id, *n as u32)));
    entries.push((1, 0));
    let log: Vec<u8> = entries
        .iter()
        .flat_map(|(id, n)| [id.to_le_bytes(), n.to_le_bytes()].concat())
        .collect();
    // Written after the log's last transaction (`cTransactionsInLog`, byte 96, counts them), in
    // the unused entries OneNote leaves in its log fragment for the next ones.
    let transactions = u32_at(&out, 96).unwrap();
    let at = log_end(&out, transactions);
    out[at..at + log.len()].copy_from_slice(&log);
    out[96..100].copy_from_slice(&(transactions + 1).to_le_bytes());
    (remove_page(from, page_guid), out)
}

/// Where the transaction after the log's first `transactions` goes: the entry after their last
/// one, when the fragment holding it has room after it for a transaction of a few entries.
fn log_end(b: &[u8], transactions: u32) -> usize {
    let mut ended = 0;
    for (stp, cb) in log_fragments(b) {
        let end = log_next_at(stp, cb);
        let mut at = stp;
        while at + 8 <= end {
            if ended == transactions {
                assert!(
                    at + 8 * 16 <= end,
                    "the log's fragment has room for a transaction"
                );
                return at;
            }
            if u32_at(b, at) == Some(1) {
                ended += 1;
            }
            at += 8;
        }
    }
    panic!("the log holds fewer transactions than its header counts")
}

/// The real desktop sections a notebook folder is made of by [`desktop_notebook`]: each one's
/// path among the samples and in the notebook folder.
pub const DESKTOP_NOTEBOOK: &[(&str, &str)] = &[
    ("apache-tika/testOneNote1.one", "testOneNote1.one"),
    ("apache-tika/testOneNote2.one", "testOneNote2.one"),
    (
        "apache-tika/testOneNote2016.one",
        "Group/testOneNote2016.one",
    ),
    ("apache-tika/testOneNote4.one", "Group/testOneNote4.one"),
];

/// A notebook folder `name` in `into` as OneNote desktop keeps one, of real desktop sections (two
/// with two pages, and a section group's folder with two of one page): the files the functions
/// above change. It has no table of contents: OneNote rewrites that on each change of its
/// sections, and one kept from before would name files no longer there. None (and a line saying
/// so) when the samples are not beside this clone.
pub fn desktop_notebook(into: &Path, name: &str) -> Option<PathBuf> {
    let notebook = into.join(name);
    for (sample, at) in DESKTOP_NOTEBOOK {
        let src = crate::files_support::sample(sample)?;
        let to = notebook.join(at);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(src, to).unwrap();
    }
    Some(notebook)
}

/// A notebook folder copied into `into` (a temporary folder of the test's), for changes that
/// touch files: its path.
pub fn copy_notebook(src: &Path, into: &Path) -> PathBuf {
    crate::files_support::copy_into(src, into)
}

/// Renames section file `section` to `new_name` in its folder (OneNote renames the file; the
/// section keeps its GUID): the new path.
pub fn rename_section(section: &Path, new_name: &str) -> PathBuf {
    let to = section.with_file_name(new_name);
    assert!(!to.exists(), "{to:?} is already there");
    std::fs::rename(section, &to).unwrap();
    to
}

/// Moves section file `section` into folder `folder` (a section group's folder of the same
/// notebook, or another notebook's folder), creating the folder: the new path.
pub fn move_section(section: &Path, folder: &Path) -> PathBuf {
    std::fs::create_dir_all(folder).unwrap();
    let to = folder.join(section.file_name().unwrap());
    assert!(!to.exists(), "{to:?} is already there");
    std::fs::rename(section, &to).unwrap();
    to
}

/// Deletes section file `section`.
pub fn delete_section(section: &Path) {
    std::fs::remove_file(section).unwrap();
}

/// Replaces section file `section` with `bytes` (a changed copy), as OneNote saving it would.
pub fn write_section(section: &Path, bytes: &[u8]) {
    std::fs::write(section, bytes).unwrap();
}
