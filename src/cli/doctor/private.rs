//! `doctor`'s checks that the state database and the tokens in it are private, each platform by
//! its own rule (`crate::platform`): the file's mode on Unix, its ACL and DPAPI-sealed tokens on
//! Windows.

use std::path::Path;

use super::Check;
use crate::cli::exit::Exit;
use crate::platform::{self, Privacy};
use crate::store::Db;

/// `database_mode`: only the owner can read the database file.
pub(super) fn database_private(path: &Path) -> Check {
    match platform::privacy(path) {
        Ok(Privacy::Private(how)) => {
            Check::pass("database_mode", format!("{how}: only you can read it"))
        }
        Ok(Privacy::Open { who, fix }) => Check::fail(
            "database_mode",
            Some(Exit::Usage),
            format!("{who} can read the tokens in it"),
            fix,
        ),
        Err(e) => Check::fail(
            "database_mode",
            Some(Exit::Usage),
            e.to_string(),
            format!("check {}", path.display()),
        ),
    }
}

/// `tokens_sealed` (Windows): every stored token is sealed with DPAPI. On Unix the file's mode is
/// the tokens' protection, which `database_mode` checks, so there is no second check.
pub(super) fn tokens_protected(db: &Db) -> Option<Check> {
    if !platform::seals_secrets() {
        return None;
    }
    Some(match db.accounts_with_unprotected_tokens() {
        Ok(open) if open.is_empty() => Check::pass(
            "tokens_sealed",
            "every stored token is sealed with DPAPI for this Windows user",
        ),
        Ok(open) => Check::fail(
            "tokens_sealed",
            Some(Exit::Usage),
            format!(
                "the tokens of {} are stored unsealed (written before notebridge sealed them)",
                open.join(", ")
            ),
            format!(
                "notebridge login --account {} (or any run that refreshes them) seals them",
                open[0]
            ),
        ),
        Err(e) => Check::fail("tokens_sealed", None, e.to_string(), "check the database"),
    })
}
