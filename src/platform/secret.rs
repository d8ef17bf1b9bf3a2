//! A secret kept in the state database (a refresh or an access token), as the platform protects
//! it. On Unix the database file's mode 0600 is the protection and the value is kept as it is. On
//! Windows the value is sealed with DPAPI for the signed-in user (`CryptProtectData`) besides the
//! file's owner-only ACL: it stays sealed wherever its bytes go (the WAL, a backup, a copy of the
//! folder, a database put elsewhere with `--db`), which no ACL follows. A value stored plainly (by
//! a Unix build, or an older one) is still read, and sealed when it is next written.

use base64::Engine as _;

/// How a sealed value starts; no token does (they are JWTs or opaque `0.A...`/`M.C...` strings).
pub const SEALED_PREFIX: &str = "dpapi:";

/// Why a stored secret cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    /// DPAPI refused (another user's, or another machine's, database).
    #[error("the stored token cannot be unsealed by this Windows user on this machine: {0}")]
    Unseal(#[source] std::io::Error),
    /// DPAPI could not seal a value.
    #[error("the token cannot be sealed with DPAPI: {0}")]
    Seal(#[source] std::io::Error),
    /// A Windows database read on another platform.
    #[error("the stored token was sealed by Windows (DPAPI) and cannot be read here")]
    ForeignSeal,
    /// The sealed text is damaged.
    #[error("the stored token's sealed form is damaged")]
    Damaged,
}

impl crate::failure::Classify for SecretError {
    /// A token that cannot be unsealed here is as good as none: the account signs in again. One
    /// that cannot be sealed stops the run (nothing is stored in clear instead).
    fn class(&self) -> crate::failure::Class {
        use crate::failure::{Class, Meaning, Next, Scope};
        let c = Class::new(Scope::Run, Next::Never);
        match self {
            SecretError::Seal(_) => c,
            _ => c.means(Meaning::SignIn),
        }
    }
}

/// Whether this platform seals each stored secret beyond the database file's own protection
/// (DPAPI on Windows); elsewhere the file's mode is the tokens' only protection.
pub fn seals_secrets() -> bool {
    cfg!(windows)
}

/// `secret` in the form it is stored here.
pub fn seal(secret: &str) -> Result<String, SecretError> {
    #[cfg(windows)]
    {
        let sealed = super::sys::protect(secret.as_bytes()).map_err(SecretError::Seal)?;
        Ok(format!(
            "{SEALED_PREFIX}{}",
            base64::engine::general_purpose::STANDARD.encode(sealed)
        ))
    }
    #[cfg(not(windows))]
    {
        Ok(secret.to_owned())
    }
}

/// The secret `stored` holds, sealed or not.
pub fn unseal(stored: &str) -> Result<String, SecretError> {
    let Some(b64) = stored.strip_prefix(SEALED_PREFIX) else {
        return Ok(stored.to_owned());
    };
    let sealed = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .map_err(|_| SecretError::Damaged)?;
    #[cfg(windows)]
    {
        let plain = super::sys::unprotect(&sealed).map_err(SecretError::Unseal)?;
        String::from_utf8(plain).map_err(|_| SecretError::Damaged)
    }
    #[cfg(not(windows))]
    {
        let _ = sealed;
        Err(SecretError::ForeignSeal)
    }
}

/// Whether `stored` is in the form this platform stores secrets in (sealed on Windows).
pub fn is_protected_form(stored: &str) -> bool {
    stored.starts_with(SEALED_PREFIX) || !cfg!(windows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sealed_token_unseals_to_itself_and_a_plain_one_is_still_read() {
        let token = "0.AXoA-refresh-token-ünïcode";
        let stored = seal(token).unwrap();
        assert_eq!(unseal(&stored).unwrap(), token);
        assert!(is_protected_form(&stored));
        // As an older database holds it.
        assert_eq!(unseal(token).unwrap(), token);
        if cfg!(windows) {
            assert!(stored.starts_with(SEALED_PREFIX), "{stored}");
            assert!(!stored.contains("refresh"), "the value is not in clear");
            assert!(!is_protected_form(token));
        } else {
            assert_eq!(stored, token, "the file's mode protects it");
        }
    }

    #[test]
    fn a_damaged_or_foreign_seal_is_an_error_not_a_token() {
        assert!(matches!(
            unseal("dpapi:not base64!"),
            Err(SecretError::Damaged)
        ));
        let foreign = format!("{SEALED_PREFIX}AQAAANCMnd8BFdERjHoAwE/Cl+s=");
        assert!(unseal(&foreign).is_err());
    }
}
