//! Damage made on purpose in a real desktop section file ([MS-ONESTORE] revision store): the
//! file's object declarations found (`onestore_walk`), and one reference in an object's property
//! set rewritten, so that a test can give the reader a file whose objects refer to each other in
//! a way no random bit flip is likely to reach.

use crate::onestore_walk::{declarations, plain_value_size, references_of, u16_at, u32_at};

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
