//! A reader of a desktop section file's structure ([MS-ONESTORE] revision store), for tests that
//! change real files in ways a random bit flip does not reach: the file's node lists are walked
//! from the header's root list, each object declaration found with the object space it belongs
//! to, the global id table its references resolve through, and where its property set and its
//! reference streams are. Nothing here checks what it reads beyond staying inside the bytes: it
//! is given real samples, and a test fails when a sample does not hold what it expects.
#![allow(dead_code)]

use std::collections::HashMap;

pub fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

pub fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

pub fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// An ExtendedGUID ([MS-ONESTORE] 2.2.1): a GUID as stored, and a number.
pub type ExGuid = ([u8; 16], u32);

/// The 16 bytes of a GUID at `at`, as stored.
pub fn guid_at(b: &[u8], at: usize) -> Option<[u8; 16]> {
    b.get(at..at + 16)?.try_into().ok()
}

/// A FileNodeChunkReference ([MS-ONESTORE] 2.2.4.2) at `at` in the given formats: its location,
/// its size and where the node's body starts after it.
pub fn chunk_ref(
    b: &[u8],
    at: usize,
    stp_format: u32,
    cb_format: u32,
) -> Option<(usize, usize, usize)> {
    let (stp, at) = match stp_format {
        0 => (u64_at(b, at)? as usize, at + 8),
        1 => (u32_at(b, at)? as usize, at + 4),
        2 => (u16_at(b, at)? as usize * 8, at + 2),
        _ => (u32_at(b, at)? as usize * 8, at + 4),
    };
    let (cb, at) = match cb_format {
        0 => (u32_at(b, at)? as usize, at + 4),
        1 => (u64_at(b, at)? as usize, at + 8),
        2 => (*b.get(at)? as usize * 8, at + 1),
        _ => (u16_at(b, at)? as usize * 8, at + 2),
    };
    Some((stp, cb, at))
}

/// Writes a FileNodeChunkReference at `at` in the given formats; `None` when the formats cannot
/// say this location or size (a compressed one: a multiple of 8, and a smaller range).
pub fn put_chunk_ref(
    b: &mut [u8],
    at: usize,
    stp_format: u32,
    cb_format: u32,
    stp: usize,
    cb: usize,
) -> Option<()> {
    let stp_bytes: Vec<u8> = match stp_format {
        0 => (stp as u64).to_le_bytes().to_vec(),
        1 => u32::try_from(stp).ok()?.to_le_bytes().to_vec(),
        2 if stp.is_multiple_of(8) => u16::try_from(stp / 8).ok()?.to_le_bytes().to_vec(),
        3 if stp.is_multiple_of(8) => u32::try_from(stp / 8).ok()?.to_le_bytes().to_vec(),
        _ => return None,
    };
    let cb_bytes: Vec<u8> = match cb_format {
        0 => u32::try_from(cb).ok()?.to_le_bytes().to_vec(),
        1 => (cb as u64).to_le_bytes().to_vec(),
        2 if cb.is_multiple_of(8) => vec![u8::try_from(cb / 8).ok()?],
        3 if cb.is_multiple_of(8) => u16::try_from(cb / 8).ok()?.to_le_bytes().to_vec(),
        _ => return None,
    };
    let all = [stp_bytes, cb_bytes].concat();
    b.get_mut(at..at + all.len())?.copy_from_slice(&all);
    Some(())
}

/// The ExtendedGUID at `at`.
pub fn exguid_at(b: &[u8], at: usize) -> Option<ExGuid> {
    Some((guid_at(b, at)?, u32_at(b, at + 16)?))
}

/// A global id table ([MS-ONESTORE] GlobalIdTableEntryFNDX nodes): a compact id's index to its
/// GUID.
pub type IdTable = HashMap<u32, [u8; 16]>;

/// Resolves a CompactID ([MS-ONESTORE] 2.2.2: `n` in the low 8 bits, the table index above).
pub fn resolve(table: &IdTable, compact: u32) -> Option<ExGuid> {
    table.get(&(compact >> 8)).map(|g| (*g, compact & 0xff))
}

/// An object declared in the file: its compact id, its JCID (none for a later revision of an
/// object, which does not repeat it), the object space whose lists declare it (none: the root
/// list's), the global id table its references resolve through, where the node's reference to
/// its property set is (so that it can be pointed elsewhere), and where the property set's
/// reference streams ([MS-ONESTORE] 2.6.1) and properties start.
#[derive(Debug, Clone)]
pub struct Declared {
    /// The declaring node's id and where the node starts.
    pub node: (u32, usize),
    pub oid: u32,
    pub jcid: Option<u32>,
    pub space: Option<ExGuid>,
    pub ids: IdTable,
    pub ref_at: usize,
    pub stp_format: u32,
    pub cb_format: u32,
    pub chunk: (usize, usize),
    pub oids_at: usize,
    pub osids_at: Option<usize>,
    pub prop_set_at: usize,
}

impl Declared {
    /// Whether the node is a read-only declaration (ReadOnlyObjectDeclaration2RefCountFND or
    /// ...LargeRefCountFND, [MS-ONESTORE]), which keeps an MD5 of its property set.
    pub fn read_only(&self) -> bool {
        matches!(self.node.0, 0x0c4 | 0x0c5)
    }

    /// Whether this is (a revision of) an object of class `jcid`: JCIDs are compared by their
    /// index (the low bits), as a short declaration keeps only that; a revision of an
    /// object, whose class the node does not say, matches every class.
    pub fn is(&self, jcid: u32) -> bool {
        self.jcid.is_none_or(|j| j & 0xffff == jcid & 0xffff)
    }
}

/// A list of the walk: where it is, and the object space it belongs to.
struct Pending {
    stp: usize,
    cb: usize,
    space: Option<ExGuid>,
}

/// Every object declared in the file's node lists, found with an explicit stack of lists (each
/// list read once). A list's global id table is the last one started in that list before the
/// declaration (an object group's own, or its revision's).
pub fn declarations(b: &[u8]) -> Vec<Declared> {
    let mut out = Vec::new();
    let mut read = std::collections::HashSet::new();
    // fcrFileNodeListRoot ([MS-ONESTORE] 2.3.1) at byte 172.
    let mut lists = vec![Pending {
        stp: u64_at(b, 172).unwrap() as usize,
        cb: u32_at(b, 180).unwrap() as usize,
        space: None,
    }];
    while let Some(Pending {
        mut stp,
        mut cb,
        space,
    }) = lists.pop()
    {
        let mut ids = IdTable::new();
        // A list's fragments, each: a 16-byte header, nodes, then nextFragment (12) and a footer (8).
        while read.insert(stp) && cb > 36 {
            let end = stp + cb - 20;
            let mut at = stp + 16;
            while at + 4 <= end {
                let h = u32_at(b, at).unwrap();
                let (id, size) = (h & 0x3ff, ((h >> 10) & 0x1fff) as usize);
                let (stp_format, cb_format, base) = ((h >> 23) & 3, (h >> 25) & 3, (h >> 27) & 0xf);
                if size == 0 || id == 0xff {
                    break;
                }
                match id {
                    // GlobalIdTableStartFNDX, GlobalIdTableStart2FND: a new table.
                    0x021 | 0x022 => ids.clear(),
                    // GlobalIdTableEntryFNDX: an index and its GUID.
                    0x024 => {
                        if let (Some(i), Some(g)) = (u32_at(b, at + 4), guid_at(b, at + 8)) {
                            ids.insert(i, g);
                        }
                    }
                    _ => {}
                }
                if let (1 | 2, Some((rs, rc, body))) =
                    (base, chunk_ref(b, at + 4, stp_format, cb_format))
                {
                    if base == 2 {
                        // ObjectSpaceManifestListReferenceFND: the list of an object space,
                        // named by the ExtendedGUID after the reference.
                        let space = if id == 0x008 {
                            guid_at(b, body).zip(u32_at(b, body + 16))
                        } else {
                            space
                        };
                        lists.push(Pending {
                            stp: rs,
                            cb: rc,
                            space,
                        });
                    } else {
                        let jcid = match id {
                            // ObjectDeclaration2RefCountFND and its kin: oid, then a JCID.
                            0x0a4 | 0x0a5 | 0x0c4 | 0x0c5 => u32_at(b, body + 4).map(Some),
                            // ObjectDeclarationWithRefCountFNDX: oid, then a 10-bit JCI of a
                            // property set.
                            0x02d | 0x02e => {
                                u16_at(b, body + 4).map(|j| Some(0x20000 | u32::from(j & 0x3ff)))
                            }
                            // ObjectRevisionWithRefCountFNDX and ...2FNDX: a new revision of an
                            // object declared elsewhere, under an oid whose meaning depends on the
                            // revision's id table.
                            0x041 | 0x042 => Some(None),
                            _ => None,
                        };
                        if let (Some(jcid), Some(oid)) = (jcid, u32_at(b, body)) {
                            if let Some(mut d) = stream_layout(b, rs, oid, jcid) {
                                d.node = (id, at);
                                d.space = space;
                                d.ids = ids.clone();
                                d.ref_at = at + 4;
                                (d.stp_format, d.cb_format, d.chunk) =
                                    (stp_format, cb_format, (rs, rc));
                                out.push(d);
                            }
                        }
                    }
                }
                at += size;
            }
            let (Some(next), Some(next_cb)) = (u64_at(b, end), u32_at(b, end + 8)) else {
                break;
            };
            if next == 0 || next == u64::MAX {
                break;
            }
            (stp, cb) = (next as usize, next_cb as usize);
        }
    }
    out
}

/// Where an ObjectSpaceObjectPropSet at `at` keeps its reference streams and its property set.
fn stream_layout(b: &[u8], at: usize, oid: u32, jcid: Option<u32>) -> Option<Declared> {
    let h = u32_at(b, at)?;
    let oids_at = at + 4;
    let mut p = oids_at + 4 * (h & 0xff_ffff) as usize;
    let mut osids_at = None;
    // OsidStreamNotPresent (the OID stream header's top bit) clear: an OSID stream follows, and
    // its ExtendedStreamsPresent bit says whether a context id stream follows it.
    if h >> 31 == 0 {
        let osids = u32_at(b, p)?;
        osids_at = Some(p + 4);
        p += 4 + 4 * (osids & 0xff_ffff) as usize;
        if (osids >> 30) & 1 == 1 {
            p += 4 + 4 * (u32_at(b, p)? & 0xff_ffff) as usize;
        }
    }
    Some(Declared {
        node: (0, 0),
        oid,
        jcid,
        space: None,
        ids: IdTable::new(),
        ref_at: 0,
        stp_format: 0,
        cb_format: 0,
        chunk: (0, 0),
        oids_at,
        osids_at,
        prop_set_at: p,
    })
}

/// How many bytes the value of a property of type `kind` takes at `at` ([MS-ONESTORE] 2.6.6),
/// for every type but the nested ones (0x10, 0x11), whose values are property sets. None for a
/// type the format does not have.
pub fn plain_value_size(b: &[u8], at: usize, kind: u32) -> Option<usize> {
    match kind {
        0x1 | 0x2 | 0x8 | 0xa | 0xc => Some(0),
        0x3 => Some(1),
        0x4 => Some(2),
        0x5 | 0x9 | 0xb | 0xd => Some(4),
        0x6 => Some(8),
        0x7 => Some(4 + u32_at(b, at)? as usize),
        _ => None,
    }
}

/// The reference streams of an object's property set ([MS-ONESTORE] 2.6.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    /// Object ids (property types 0x8 and 0x9).
    Objects,
    /// Object space ids (0xA and 0xB).
    Spaces,
    /// Context ids (0xC and 0xD).
    Contexts,
}

/// A property of a property set, at any depth: its id and where that is, where its value starts (for a type-0x7
/// property, its 4-byte length), and which stream its references are in, from which index and
/// how many.
#[derive(Debug, Clone, Copy)]
pub struct Prop {
    pub id: u32,
    pub id_at: usize,
    pub value_at: usize,
    pub refs: Option<(Stream, usize, usize)>,
}

impl Prop {
    /// The property's type ([MS-ONESTORE] 2.6.6).
    pub fn kind(&self) -> u32 {
        (self.id >> 26) & 0x1f
    }

    /// Whether this is property `id` (whatever its type bits say beyond the id's).
    pub fn is(&self, id: u32) -> bool {
        self.id & 0x3ff_ffff == id & 0x3ff_ffff
    }

    /// The bytes of a type-0x7 property's value, after its length.
    pub fn data<'a>(&self, b: &'a [u8]) -> Option<&'a [u8]> {
        let len = u32_at(b, self.value_at)? as usize;
        b.get(self.value_at + 4..self.value_at + 4 + len)
    }
}

/// Every property of the property set at `prop_set_at`, nested sets' included, in the order of
/// the set: a property set's references are in the streams in that order ([MS-ONESTORE] 2.6.7).
/// Iterative, with one stack entry per open set. None when the set runs past the bytes or holds
/// a type the format does not have.
pub fn properties(b: &[u8], prop_set_at: usize) -> Option<Vec<Prop>> {
    /// A set being read: its property ids still to read, and how many sets follow it in the same
    /// array of property values (2.6.9).
    struct Open {
        ids: std::vec::IntoIter<(u32, usize)>,
        then_sets: usize,
    }
    let header = |at: &mut usize| -> Option<std::vec::IntoIter<(u32, usize)>> {
        let count = u16_at(b, *at)? as usize;
        let ids: Vec<(u32, usize)> = (0..count)
            .map(|i| Some((u32_at(b, *at + 2 + 4 * i)?, *at + 2 + 4 * i)))
            .collect::<Option<_>>()?;
        *at += 2 + 4 * count;
        Some(ids.into_iter())
    };
    let mut out = Vec::new();
    let mut at = prop_set_at;
    let mut seen = HashMap::<&str, usize>::new();
    let mut count = |stream: Stream, n: usize| {
        let key = match stream {
            Stream::Objects => "o",
            Stream::Spaces => "s",
            Stream::Contexts => "c",
        };
        let first = *seen.get(key).unwrap_or(&0);
        seen.insert(key, first + n);
        Some((stream, first, n))
    };
    let mut open = vec![Open {
        ids: header(&mut at)?,
        then_sets: 0,
    }];
    while let Some(top) = open.last_mut() {
        let Some((id, id_at)) = top.ids.next() else {
            if top.then_sets > 0 {
                top.then_sets -= 1;
                top.ids = header(&mut at)?;
            } else {
                open.pop();
            }
            continue;
        };
        let value_at = at;
        let kind = (id >> 26) & 0x1f;
        let refs = match kind {
            0x8 => count(Stream::Objects, 1),
            0xa => count(Stream::Spaces, 1),
            0xc => count(Stream::Contexts, 1),
            0x9 => count(Stream::Objects, u32_at(b, at)? as usize),
            0xb => count(Stream::Spaces, u32_at(b, at)? as usize),
            0xd => count(Stream::Contexts, u32_at(b, at)? as usize),
            _ => None,
        };
        out.push(Prop {
            id,
            id_at,
            value_at,
            refs,
        });
        match kind {
            0x10 => {
                let n = u32_at(b, at)? as usize;
                at += 8;
                if n > 0 {
                    let ids = header(&mut at)?;
                    open.push(Open {
                        ids,
                        then_sets: n - 1,
                    });
                }
            }
            0x11 => {
                let ids = header(&mut at)?;
                open.push(Open { ids, then_sets: 0 });
            }
            kind => at += plain_value_size(b, at, kind)?,
        }
    }
    Some(out)
}

/// Where in the OID stream the references of the property `wanted` start, and how many it has.
pub fn references_of(b: &[u8], prop_set_at: usize, wanted: u32) -> Option<(usize, usize)> {
    properties(b, prop_set_at)?
        .into_iter()
        .find(|p| p.kind() == 0x9 && p.is(wanted))
        .and_then(|p| p.refs)
        .map(|(_, first, n)| (first, n))
}

/// `uintMagic` of a FileNodeListFragment's header ([MS-ONESTORE] FileNodeListHeader).
pub const FRAGMENT_MAGIC: u64 = 0xA456_7AB1_F5F7_F4C4;
/// A FileNodeListFragment's footer.
pub const FRAGMENT_FOOTER: u64 = 0x8BC2_15C3_8233_BA4B;

/// A file node of a list ([MS-ONESTORE] 2.4.3): where it is, its id, size and base type, the
/// chunk its reference points to (base types 1 and 2) and where its body goes on after that.
#[derive(Debug, Clone, Copy)]
pub struct Node {
    pub at: usize,
    pub id: u32,
    pub size: usize,
    pub base: u32,
    pub chunk: Option<(usize, usize)>,
    pub body_at: usize,
}

/// A file node list: its id, its fragments (location and size) and its nodes, at most as many
/// as the transaction log counts for it (`counts`; all of them when it has no count), chunk
/// terminators and empty nodes left out.
pub struct List {
    pub id: u32,
    pub fragments: Vec<(usize, usize)>,
    pub nodes: Vec<Node>,
}

/// Reads the list whose first fragment is at `stp` (`cb` bytes).
pub fn list(b: &[u8], stp: usize, cb: usize, counts: &HashMap<u32, usize>) -> Option<List> {
    let id = u32_at(b, stp + 8)?;
    let mut left = counts.get(&id).copied().unwrap_or(usize::MAX);
    let mut out = List {
        id,
        fragments: Vec::new(),
        nodes: Vec::new(),
    };
    let (mut stp, mut cb) = (stp, cb);
    loop {
        if out.fragments.contains(&(stp, cb)) || cb < 36 {
            return None;
        }
        out.fragments.push((stp, cb));
        let end = stp + cb - 20;
        let mut at = stp + 16;
        while at + 4 <= end && left > 0 {
            let h = u32_at(b, at)?;
            let (id, size) = (h & 0x3ff, ((h >> 10) & 0x1fff) as usize);
            let (stp_format, cb_format, base) = ((h >> 23) & 3, (h >> 25) & 3, (h >> 27) & 0xf);
            if size == 0 || id == 0xff {
                break;
            }
            let (chunk, body_at) = match base {
                1 | 2 => {
                    let (s, c, body) = chunk_ref(b, at + 4, stp_format, cb_format)?;
                    (Some((s, c)), body)
                }
                _ => (None, at + 4),
            };
            out.nodes.push(Node {
                at,
                id,
                size,
                base,
                chunk,
                body_at,
            });
            left -= 1;
            at += size;
        }
        let (next, next_cb) = (u64_at(b, end)?, u32_at(b, end + 8)?);
        if next == 0 || next == u64::MAX {
            return Some(out);
        }
        (stp, cb) = (next as usize, next_cb as usize);
    }
}

/// The transaction log's fragments ([MS-ONESTORE] 2.3.3), from the header's `fcrTransactionLog`
/// (byte 160): each one's location and size.
pub fn log_fragments(b: &[u8]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let (mut stp, mut cb) = (u64_at(b, 160).unwrap(), u32_at(b, 168).unwrap() as usize);
    while stp != 0 && stp != u64::MAX && !out.iter().any(|(s, _)| *s == stp as usize) {
        out.push((stp as usize, cb));
        let next = log_next_at(stp as usize, cb);
        (stp, cb) = (
            u64_at(b, next).unwrap(),
            u32_at(b, next + 8).unwrap() as usize,
        );
    }
    out
}

/// Where a transaction log fragment's `nextFragment` is: after as many whole 8-byte entries as
/// its size leaves room for beside that 12-byte reference (the size need not be a multiple of 8).
pub fn log_next_at(stp: usize, cb: usize) -> usize {
    stp + 8 * ((cb - 12) / 8)
}

/// Each list's node count as the transaction log gives it: the largest of its entries, as the
/// reader takes it (entries of `srcID` 1 end a transaction and count nothing).
pub fn log_counts(b: &[u8]) -> HashMap<u32, usize> {
    let mut out = HashMap::new();
    for (stp, cb) in log_fragments(b) {
        for i in 0..(cb - 12) / 8 {
            let (src, n) = (
                u32_at(b, stp + 8 * i).unwrap(),
                u32_at(b, stp + 8 * i + 4).unwrap() as usize,
            );
            if src != 1 && src != 0 {
                let c = out.entry(src).or_insert(0);
                *c = n.max(*c);
            }
        }
    }
    out
}

/// The root file node list (`fcrFileNodeListRoot`, byte 172).
pub fn root_list(b: &[u8]) -> List {
    let counts = log_counts(b);
    list(
        b,
        u64_at(b, 172).unwrap() as usize,
        u32_at(b, 180).unwrap() as usize,
        &counts,
    )
    .expect("the root list reads")
}

/// The id of every list the file's lists lead to from the root.
pub fn list_ids(b: &[u8]) -> std::collections::HashSet<u32> {
    let counts = log_counts(b);
    let root = root_list(b);
    let mut out = std::collections::HashSet::from([root.id]);
    let mut stack: Vec<(usize, usize)> = root
        .nodes
        .iter()
        .filter(|n| n.base == 2)
        .filter_map(|n| n.chunk)
        .collect();
    let mut seen = std::collections::HashSet::new();
    while let Some((stp, cb)) = stack.pop() {
        if !seen.insert(stp) {
            continue;
        }
        if let Some(l) = list(b, stp, cb, &counts) {
            out.insert(l.id);
            stack.extend(
                l.nodes
                    .iter()
                    .filter(|n| n.base == 2)
                    .filter_map(|n| n.chunk),
            );
        }
    }
    out.extend(counts.keys().copied());
    out
}

/// One fragment of a list, complete: its header (`id`, sequence number `sequence`), `nodes`
/// (whole nodes, back to back) and a `nextFragment` that ends the list.
pub fn fragment(id: u32, sequence: u32, nodes: &[u8]) -> Vec<u8> {
    let mut out = FRAGMENT_MAGIC.to_le_bytes().to_vec();
    out.extend(id.to_le_bytes());
    out.extend(sequence.to_le_bytes());
    out.extend_from_slice(nodes);
    out.extend(u64::MAX.to_le_bytes());
    out.extend(0u32.to_le_bytes());
    out.extend(FRAGMENT_FOOTER.to_le_bytes());
    out
}

/// A node of file node id `id` and base type `base` whose reference (uncompressed: an 8-byte
/// location, a 4-byte size) points at `stp` (`cb` bytes), followed by `rest`.
pub fn node_with_ref(id: u32, base: u32, stp: usize, cb: usize, rest: &[u8]) -> Vec<u8> {
    let size = 4 + 12 + rest.len();
    let h = id | ((size as u32) << 10) | (base << 27);
    let mut out = h.to_le_bytes().to_vec();
    out.extend((stp as u64).to_le_bytes());
    out.extend((cb as u32).to_le_bytes());
    out.extend_from_slice(rest);
    out
}

/// Appends `bytes` to `out` at the next 8-byte boundary: where they start.
pub fn append(out: &mut Vec<u8>, bytes: &[u8]) -> usize {
    let at = out.len().next_multiple_of(8);
    out.resize(at, 0);
    out.extend_from_slice(bytes);
    at
}
