//! Signed-in accounts and their tokens. A token is stored in the platform's protected form
//! ([`crate::platform::seal`]: sealed with DPAPI on Windows, as it is on Unix) and read in either.

use rusqlite::{params, OptionalExtension, Row};

use super::{Db, Result};
use crate::clock::UnixMillis;

/// One account row. Tokens are secrets: this type's `Debug` never prints them.
#[derive(Clone, PartialEq, Eq)]
pub struct Account {
    /// Local label (`--account NAME`).
    pub name: String,
    /// Graph user id (`/me` `id`): the limiter's user.
    pub user_id: String,
    /// `userPrincipalName` from `/me`.
    pub user_principal_name: String,
    /// `displayName` from `/me`, when given.
    pub display_name: Option<String>,
    /// The refresh token; `None` after logout.
    pub refresh_token: Option<String>,
    /// The last access token.
    pub access_token: Option<String>,
    /// When that access token expires (unix ms).
    pub access_expires_at: Option<UnixMillis>,
    /// When the row last changed.
    pub updated_at: UnixMillis,
}

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("name", &self.name)
            .field("user_id", &self.user_id)
            .field("user_principal_name", &self.user_principal_name)
            .field("signed_in", &self.refresh_token.is_some())
            .finish_non_exhaustive()
    }
}

impl Account {
    /// Whether the account still holds a refresh token.
    pub fn signed_in(&self) -> bool {
        self.refresh_token.is_some()
    }

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Account {
            name: r.get("name")?,
            user_id: r.get("user_id")?,
            user_principal_name: r.get("user_principal_name")?,
            display_name: r.get("display_name")?,
            refresh_token: unsealed(r, "refresh_token")?,
            access_token: unsealed(r, "access_token")?,
            access_expires_at: r.get("access_expires_at")?,
            updated_at: r.get("updated_at")?,
        })
    }
}

/// The token in column `col` of `r`, unsealed.
fn unsealed(r: &Row<'_>, col: &str) -> rusqlite::Result<Option<String>> {
    let Some(stored) = r.get::<_, Option<String>>(col)? else {
        return Ok(None);
    };
    crate::platform::unseal(&stored).map(Some).map_err(|e| {
        let i = r.as_ref().column_index(col).unwrap_or_default();
        rusqlite::Error::FromSqlConversionFailure(i, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// `token` as it is stored.
fn sealed(token: Option<&str>) -> rusqlite::Result<Option<String>> {
    token
        .map(crate::platform::seal)
        .transpose()
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

/// What [`Db::save_sign_in`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SignInSaved {
    /// A new account.
    Created,
    /// The same user signed in again: tokens replaced.
    Renewed,
    /// Another user took over the name (`--force`).
    ReplacedOtherUser {
        /// The principal name that was replaced.
        previous: String,
    },
    /// Another user holds the name; nothing was written.
    RefusedOtherUser {
        /// The principal name stored under the name.
        existing: String,
    },
}

/// Inserts `a`, or replaces the account with its name.
fn upsert(tx: &rusqlite::Transaction<'_>, a: &Account) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO accounts(name, user_id, user_principal_name, display_name, refresh_token,
              access_token, access_expires_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT(name) DO UPDATE SET
            user_id = excluded.user_id,
            user_principal_name = excluded.user_principal_name,
            display_name = excluded.display_name,
            refresh_token = excluded.refresh_token,
            access_token = excluded.access_token,
            access_expires_at = excluded.access_expires_at,
            updated_at = excluded.updated_at",
        params![
            a.name,
            a.user_id,
            a.user_principal_name,
            a.display_name,
            sealed(a.refresh_token.as_deref())?,
            sealed(a.access_token.as_deref())?,
            a.access_expires_at,
            a.updated_at
        ],
    )?;
    Ok(())
}

const COLUMNS: &str =
    "name, user_id, user_principal_name, display_name, refresh_token, access_token, \
                       access_expires_at, updated_at";

impl Db {
    /// Every account, signed in or not, by name.
    pub fn accounts(&self) -> Result<Vec<Account>> {
        self.read("listing accounts", |c| {
            let mut st = c.prepare(&format!("SELECT {COLUMNS} FROM accounts ORDER BY name"))?;
            let rows = st.query_map([], Account::from_row)?;
            rows.collect()
        })
    }

    /// One account by name.
    pub fn account(&self, name: &str) -> Result<Option<Account>> {
        self.read("reading an account", |c| {
            c.query_row(
                &format!("SELECT {COLUMNS} FROM accounts WHERE name = ?1"),
                [name],
                Account::from_row,
            )
            .optional()
        })
    }

    /// Inserts or replaces an account with its tokens (one transaction).
    pub fn save_account(&self, a: &Account) -> Result<()> {
        self.write("storing an account", |tx| upsert(tx, a))
    }

    /// Stores a fresh sign-in under `a.name` in one transaction. An existing account of the same user
    /// gets the new tokens; one of another user is left untouched unless `replace_other_user`.
    pub fn save_sign_in(&self, a: &Account, replace_other_user: bool) -> Result<SignInSaved> {
        self.write("storing a sign-in", |tx| {
            let existing: Option<(String, String)> = tx
                .query_row(
                    "SELECT user_id, user_principal_name FROM accounts WHERE name = ?1",
                    [&a.name],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()?;
            let outcome = match existing {
                None => SignInSaved::Created,
                Some((uid, _)) if uid == a.user_id => SignInSaved::Renewed,
                Some((_, upn)) if !replace_other_user => {
                    return Ok(SignInSaved::RefusedOtherUser { existing: upn })
                }
                Some((_, upn)) => SignInSaved::ReplacedOtherUser { previous: upn },
            };
            upsert(tx, a)?;
            Ok(outcome)
        })
    }

    /// Stores refreshed tokens for an account (the rotated refresh token replaces the old one at once).
    pub fn update_tokens(
        &self,
        name: &str,
        refresh_token: &str,
        access_token: &str,
        access_expires_at: UnixMillis,
        now: UnixMillis,
    ) -> Result<()> {
        self.write("storing refreshed tokens", |tx| {
            tx.execute(
                "UPDATE accounts SET refresh_token = ?2, access_token = ?3, access_expires_at = ?4,
                        updated_at = ?5 WHERE name = ?1",
                params![
                    name,
                    sealed(Some(refresh_token))?,
                    sealed(Some(access_token))?,
                    access_expires_at,
                    now
                ],
            )?;
            Ok(())
        })
    }

    /// The accounts whose stored tokens are not in the platform's protected form (on Windows,
    /// stored before tokens were sealed; each is sealed when it is next written).
    pub fn accounts_with_unprotected_tokens(&self) -> Result<Vec<String>> {
        self.read("reading how tokens are stored", |c| {
            let mut st =
                c.prepare("SELECT name, refresh_token, access_token FROM accounts ORDER BY name")?;
            let rows = st.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, Option<String>>(1)?,
                    r.get::<_, Option<String>>(2)?,
                ))
            })?;
            let mut out = Vec::new();
            for row in rows {
                let (name, refresh, access) = row?;
                let open = [refresh, access]
                    .iter()
                    .flatten()
                    .any(|t| !crate::platform::is_protected_form(t));
                if open {
                    out.push(name);
                }
            }
            Ok(out)
        })
    }

    /// Forgets an account's tokens; its inventory and jobs stay. Returns whether it existed.
    pub fn forget_tokens(&self, name: &str, now: UnixMillis) -> Result<bool> {
        self.write("forgetting tokens", |tx| {
            let n = tx.execute(
                "UPDATE accounts SET refresh_token = NULL, access_token = NULL,
                        access_expires_at = NULL, updated_at = ?2 WHERE name = ?1",
                params![name, now],
            )?;
            Ok(n > 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> Account {
        Account {
            name: "alice".into(),
            user_id: "u-1".into(),
            user_principal_name: "alice@contoso.com".into(),
            display_name: Some("Alice".into()),
            refresh_token: Some("rt-secret-1".into()),
            access_token: Some("at-secret-1".into()),
            access_expires_at: Some(10),
            updated_at: 1,
        }
    }

    #[test]
    fn save_update_forget_round_trip() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        db.save_account(&alice()).unwrap();
        assert_eq!(db.account("alice").unwrap().unwrap(), alice());
        db.update_tokens("alice", "rt-2", "at-2", 99, 5).unwrap();
        let a = db.account("alice").unwrap().unwrap();
        assert_eq!(a.refresh_token.as_deref(), Some("rt-2"));
        assert!(db.forget_tokens("alice", 6).unwrap());
        let a = db.account("alice").unwrap().unwrap();
        assert!(!a.signed_in() && a.access_token.is_none());
        assert!(!db.forget_tokens("nobody", 7).unwrap());
    }

    /// The token columns as they are in the file.
    fn stored(db: &Db) -> (String, String) {
        db.read("raw tokens", |c| {
            c.query_row(
                "SELECT refresh_token, access_token FROM accounts WHERE name = 'alice'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
        })
        .unwrap()
    }

    #[test]
    fn tokens_are_stored_in_the_platforms_protected_form_and_plain_ones_still_read() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        db.save_account(&alice()).unwrap();
        let (rt, at) = stored(&db);
        if cfg!(windows) {
            assert!(rt.starts_with(crate::platform::SEALED_PREFIX), "{rt}");
            assert!(!rt.contains("secret") && !at.contains("secret"));
        } else {
            assert_eq!((rt.as_str(), at.as_str()), ("rt-secret-1", "at-secret-1"));
        }
        assert!(db.accounts_with_unprotected_tokens().unwrap().is_empty());
        // A database written before tokens were sealed (or on Unix) holds them plainly.
        db.write("plain tokens", |tx| {
            tx.execute(
                "UPDATE accounts SET refresh_token = 'rt-plain', access_token = 'at-plain'",
                [],
            )
        })
        .unwrap();
        let a = db.account("alice").unwrap().unwrap();
        assert_eq!(a.refresh_token.as_deref(), Some("rt-plain"));
        assert_eq!(
            db.accounts_with_unprotected_tokens().unwrap(),
            if cfg!(windows) {
                vec!["alice".to_owned()]
            } else {
                vec![]
            }
        );
        // The next refresh stores them protected again.
        db.update_tokens("alice", "rt-3", "at-3", 99, 5).unwrap();
        assert!(db.accounts_with_unprotected_tokens().unwrap().is_empty());
        assert_eq!(
            db.account("alice")
                .unwrap()
                .unwrap()
                .refresh_token
                .as_deref(),
            Some("rt-3")
        );
    }

    #[test]
    fn sign_in_replaces_same_user_and_refuses_another_without_force() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        assert_eq!(
            db.save_sign_in(&alice(), false).unwrap(),
            SignInSaved::Created
        );
        let mut again = alice();
        again.refresh_token = Some("rt-new".into());
        assert_eq!(
            db.save_sign_in(&again, false).unwrap(),
            SignInSaved::Renewed
        );
        let a = db.account("alice").unwrap().unwrap();
        assert_eq!(a.refresh_token.as_deref(), Some("rt-new"));
        let mut bob = alice();
        bob.user_id = "u-2".into();
        bob.user_principal_name = "bob@contoso.com".into();
        bob.refresh_token = Some("rt-bob".into());
        assert_eq!(
            db.save_sign_in(&bob, false).unwrap(),
            SignInSaved::RefusedOtherUser {
                existing: "alice@contoso.com".into()
            }
        );
        assert_eq!(db.account("alice").unwrap().unwrap().user_id, "u-1");
        assert_eq!(
            db.save_sign_in(&bob, true).unwrap(),
            SignInSaved::ReplacedOtherUser {
                previous: "alice@contoso.com".into()
            }
        );
        assert_eq!(db.account("alice").unwrap().unwrap().user_id, "u-2");
    }

    #[test]
    fn debug_never_prints_tokens() {
        let text = format!("{:?}", alice());
        assert!(!text.contains("secret"), "{text}");
    }
}
