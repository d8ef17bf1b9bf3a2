//! Damage made on purpose in a real desktop section file ([MS-ONESTORE] revision store): the
//! file's node lists are walked from the header's root list, its object declarations found, and
//! one reference in an object's property set rewritten, so that a test can give the reader a file
//! whose objects refer to each other in a way no random bit flip is likely to reach.

/// An object declared in the file: its compact id, its JCID (none for a later revision of an
/// object, which does not repeat it) and where its property set's references (the OID stream,
/// [MS-ONESTORE] 2.6.1) start.
struct Declared {
    oid: u32,
    jcid: Option<u32>,
    oids_at: usize,
    prop_set_at: usize,
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

/// A FileNodeChunkReference ([MS-ONESTORE] 2.2.4.2) at `at` in the given formats: its location,
/// its size and where the node's body starts after it.
fn chunk_ref(
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

/// Every object declared in the file's node lists, found with an explicit stack of lists (each
/// list read once).
fn declarations(b: &[u8]) -> Vec<Declared> {
    let mut out = Vec::new();
    let mut read = std::collections::HashSet::new();
    // fcrFileNodeListRoot ([MS-ONESTORE] 2.3.1) at byte 172.
    let mut lists = vec![(
        u64_at(b, 172).unwrap() as usize,
        u32_at(b, 180).unwrap() as usize,
    )];
    while let Some((mut stp, mut cb)) = lists.pop() {
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
                if let (1 | 2, Some((rs, rc, body))) =
                    (base, chunk_ref(b, at + 4, stp_format, cb_format))
                {
                    if base == 2 {
                        lists.push((rs, rc));
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
                            if let Some(d) = stream_layout(b, rs, oid, jcid) {
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

/// Where an ObjectSpaceObjectPropSet at `at` keeps its OID stream and its property set.
fn stream_layout(b: &[u8], at: usize, oid: u32, jcid: Option<u32>) -> Option<Declared> {
    let h = u32_at(b, at)?;
    let oids_at = at + 4;
    let mut p = oids_at + 4 * (h & 0xff_ffff) as usize;
    if h >> 31 == 0 {
        let osids = u32_at(b, p)?;
        p += 4 + 4 * (osids & 0xff_ffff) as usize;
        if (osids >> 30) & 1 == 1 {
            p += 4 + 4 * (u32_at(b, p)? & 0xff_ffff) as usize;
        }
    }
    Some(Declared {
        oid,
        jcid,
        oids_at,
        prop_set_at: p,
    })
}

/// How many bytes the value of a property of type `kind` takes at `at` ([MS-ONESTORE] 2.6.6),
/// for every type but the nested ones (0x10, 0x11), whose values are property sets. None for a
/// type the format does not have.
fn plain_value_size(b: &[u8], at: usize, kind: u32) -> Option<usize> {
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

/// Where in the OID stream the references of the property `wanted` start, and how many it has:
/// a property set's references are in the stream in the order of its properties ([MS-ONESTORE]
/// 2.6.7), nested sets included. Iterative, with one stack entry per open set.
fn references_of(b: &[u8], prop_set_at: usize, wanted: u32) -> Option<(usize, usize)> {
    /// A set being read: its property ids still to read, and how many sets follow it in the same
    /// array of property values (2.6.9).
    struct Open {
        ids: std::vec::IntoIter<u32>,
        then_sets: usize,
    }
    let header = |at: &mut usize| -> Option<std::vec::IntoIter<u32>> {
        let count = u16_at(b, *at)? as usize;
        let ids: Vec<u32> = (0..count)
            .map(|i| u32_at(b, *at + 2 + 4 * i))
            .collect::<Option<_>>()?;
        *at += 2 + 4 * count;
        Some(ids.into_iter())
    };
    let mut at = prop_set_at;
    let mut seen = 0usize;
    let mut open = vec![Open {
        ids: header(&mut at)?,
        then_sets: 0,
    }];
    while let Some(top) = open.last_mut() {
        let Some(id) = top.ids.next() else {
            if top.then_sets > 0 {
                top.then_sets -= 1;
                top.ids = header(&mut at)?;
            } else {
                open.pop();
            }
            continue;
        };
        match (id >> 26) & 0x1f {
            0x8 => seen += 1,
            0x9 => {
                let n = u32_at(b, at)? as usize;
                at += 4;
                if id & 0x3ff_ffff == wanted & 0x3ff_ffff {
                    return Some((seen, n));
                }
                seen += n;
            }
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
    None
}

/// A copy of the desktop section `bytes` in which every object of `jcid` (or a later revision of
/// an object, whose kind the file does not repeat) that has references in its property `property`
/// names itself as the first of them. How many were rewritten is returned with it (none: the
/// sample has no such object).
pub fn naming_itself(bytes: &[u8], jcid: u32, property: u32) -> (Vec<u8>, usize) {
    let mut out = bytes.to_vec();
    let mut rewritten = 0;
    for d in declarations(bytes)
        .into_iter()
        .filter(|d| d.jcid.is_none_or(|j| j == jcid))
    {
        if let Some((first, n)) = references_of(bytes, d.prop_set_at, property) {
            if n > 0 {
                let at = d.oids_at + 4 * first;
                out[at..at + 4].copy_from_slice(&d.oid.to_le_bytes());
                rewritten += 1;
            }
        }
    }
    (out, rewritten)
}

/// A copy of the desktop section `bytes` in which the first object of `jcid` holding a byte
/// property (type 0x7) of at least `levels * 6` bytes has that property's value replaced by
/// property sets nested `levels` deep ([MS-ONESTORE] 2.6.7: each a count of 1 and one property of
/// type 0x11, whose value is the next set). None when no such object comes before any nested set
/// in its property set (the walk reads top-level properties only).
pub fn nesting_property_sets(bytes: &[u8], jcid: u32, levels: usize) -> Option<Vec<u8>> {
    const NESTED_SET: u32 = 0x11 << 26;
    let b = bytes;
    for d in declarations(b).into_iter().filter(|d| d.jcid == Some(jcid)) {
        let count = u16_at(b, d.prop_set_at)? as usize;
        let ids_at = d.prop_set_at + 2;
        let mut at = ids_at + 4 * count;
        for i in 0..count {
            let id = u32_at(b, ids_at + 4 * i)?;
            match (id >> 26) & 0x1f {
                0x7 => {
                    let len = u32_at(b, at)? as usize;
                    if len + 4 >= levels * 6 {
                        let mut out = b.to_vec();
                        let typed = (id & !(0x1f << 26)) | NESTED_SET;
                        out[ids_at + 4 * i..ids_at + 4 * i + 4]
                            .copy_from_slice(&typed.to_le_bytes());
                        for level in 0..levels {
                            let p = at + 6 * level;
                            out[p..p + 2].copy_from_slice(&1u16.to_le_bytes());
                            out[p + 2..p + 6].copy_from_slice(&(NESTED_SET | 1).to_le_bytes());
                        }
                        return Some(out);
                    }
                    at += 4 + len;
                }
                kind => match plain_value_size(b, at, kind) {
                    Some(n) => at += n,
                    // A nested set (or an unknown type): this object is not walked further.
                    None => break,
                },
            }
        }
    }
    None
}
