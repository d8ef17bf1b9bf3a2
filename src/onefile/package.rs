//! `.onepkg` packages: Microsoft cabinets holding a notebook's `.onetoc2` and `.one` files. The
//! cabinet is read through its file handle, and one entry at a time is decompressed, into memory:
//! nothing is extracted to disk (so no copy is ever left behind), and the package is never read whole.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

/// Largest entry decompressed from a package: a section is held in memory while it is parsed, so
/// this bounds what one package section can cost. Bigger sections are read from a notebook folder.
pub const MAX_ENTRY_BYTES: u64 = 512 * 1024 * 1024;

/// The first bytes of every cabinet.
pub const CAB_SIGNATURE: &[u8; 4] = b"MSCF";

/// One file in a package: its normalised name (`/`-separated, no `.` or `..`) and the name as the
/// cabinet spells it.
#[derive(Clone, Debug)]
pub struct Entry {
    /// `Group/Section 1.one`.
    pub name: String,
    /// The cabinet's own spelling (`Group\Section 1.one`).
    raw: String,
    /// Declared size once decompressed.
    pub size: u64,
}

/// Why an entry cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum EntryError {
    /// The package cannot be opened or read as a cabinet.
    #[error("the package cannot be read: {0}")]
    Package(io::Error),
    /// No entry by that name.
    #[error("the package has no entry {0}")]
    NoEntry(String),
    /// The entry is bigger than [`MAX_ENTRY_BYTES`].
    #[error(
        "{name} is {size} bytes once decompressed, more than the {max} MiB read from a package; \
         extract the package (it is a cabinet: `expand` on Windows, `cabextract` elsewhere) and \
         import the folder"
    )]
    TooBig {
        /// The entry.
        name: String,
        /// Its declared size.
        size: u64,
        /// The limit in MiB.
        max: u64,
    },
    /// Decompression failed.
    #[error("{name} cannot be decompressed: {source}")]
    Decompress {
        /// The entry.
        name: String,
        /// What the cabinet reader said.
        source: io::Error,
    },
}

fn open(path: &Path) -> io::Result<cab::Cabinet<BufReader<File>>> {
    cab::Cabinet::new(BufReader::new(File::open(path)?))
}

/// Whether the file starts like a cabinet.
pub fn looks_like_cab(head: &[u8]) -> bool {
    head.starts_with(CAB_SIGNATURE)
}

/// The package's entries, in the cabinet's order.
pub fn entries(path: &Path) -> io::Result<Vec<Entry>> {
    let cabinet = open(path)?;
    let mut out = Vec::new();
    for folder in cabinet.folder_entries() {
        for f in folder.file_entries() {
            let name = normalize(f.name());
            if !name.is_empty() {
                out.push(Entry {
                    name,
                    raw: f.name().to_string(),
                    size: u64::from(f.uncompressed_size()),
                });
            }
        }
    }
    Ok(out)
}

/// The bytes of one entry (by normalised name).
pub fn read_entry(path: &Path, name: &str) -> Result<Vec<u8>, EntryError> {
    let list = entries(path).map_err(EntryError::Package)?;
    let entry = list
        .iter()
        .find(|e| e.name == name)
        .ok_or_else(|| EntryError::NoEntry(name.to_string()))?;
    if entry.size > MAX_ENTRY_BYTES {
        return Err(EntryError::TooBig {
            name: name.to_string(),
            size: entry.size,
            max: MAX_ENTRY_BYTES / (1024 * 1024),
        });
    }
    let mut cabinet = open(path).map_err(EntryError::Package)?;
    let decompress = |source| EntryError::Decompress {
        name: name.to_string(),
        source,
    };
    let reader = cabinet.read_file(&entry.raw).map_err(decompress)?;
    let mut buf = Vec::with_capacity(entry.size as usize);
    // Never more than declared (plus one byte, to notice a lie): the declaration was checked.
    reader
        .take(entry.size + 1)
        .read_to_end(&mut buf)
        .map_err(decompress)?;
    if buf.len() as u64 != entry.size {
        return Err(decompress(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} bytes decompressed, {} declared", buf.len(), entry.size),
        )));
    }
    Ok(buf)
}

/// `a\b/./c` as `a/b/c`; `..` goes up but never above the package.
pub fn normalize(name: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in name.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    parts.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_normalised_inside_the_package() {
        assert_eq!(normalize(r"Group\Section 1.one"), "Group/Section 1.one");
        assert_eq!(normalize("../../a/./b.one"), "a/b.one");
        assert_eq!(normalize(""), "");
    }
}
