//! What a file's first bytes tell before any parse: whether a section is password-protected.
//! Shared by the scan (`inventory`) and the section reader (`section`), below both.

use std::fs::File;
use std::io::Read;
use std::path::Path;

/// `EncryptionData.Header` (MS-ONESTORE 2.5.19, stored little-endian): the start of the key data a
/// password-protected section's `ObjectDataEncryptionKeyV2FNDX` node points at.
const ENCRYPTION_HEADER: [u8; 8] = 0xFB6B_A385_DAD1_A067u64.to_le_bytes();
/// `EncryptionData.Footer`, which closes it.
const ENCRYPTION_FOOTER: [u8; 8] = 0x2649_294F_8E19_8B3Cu64.to_le_bytes();
/// How much of a section is searched for its encryption data (it is written near the start).
pub(super) const ENCRYPTION_SCAN_BYTES: u64 = 4 * 1024 * 1024;

/// Whether the bytes hold a password-protected section's encryption data (its header, then its
/// footer): the structure the format defines for it, not a guess from a parser message.
pub(super) fn is_encrypted(bytes: &[u8]) -> bool {
    let find = |from: usize, pat: &[u8; 8]| {
        bytes
            .get(from..)?
            .windows(8)
            .position(|w| w == pat)
            .map(|i| from + i)
    };
    find(0, &ENCRYPTION_HEADER).is_some_and(|h| find(h + 8, &ENCRYPTION_FOOTER).is_some())
}

/// The first [`ENCRYPTION_SCAN_BYTES`] of a file, to look for encryption data in.
pub(super) fn prefix(path: &Path) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Ok(f) = File::open(path) {
        let _ = f.take(ENCRYPTION_SCAN_BYTES).read_to_end(&mut buf);
    }
    buf
}
