//! The inventory key of an import from files (`files:{id}`), apart from the rest of the store so
//! that every part of it can tell such a key from an account's.

/// How an import's inventory key starts. No account key can: an account name is one word without
/// `:` (see [`is_files_key`]), and groups' and sites' keys start with their account's name.
pub(super) const PREFIX: &str = "files:";

/// The inventory key of the import with table id `id`.
pub fn key_of(id: i64) -> String {
    format!("{PREFIX}{id}")
}

/// Whether an inventory key names an import from files (rather than an account or its group or
/// site).
pub fn is_files_key(key: &str) -> bool {
    key.starts_with(PREFIX)
}
