//! Where each account can read notebooks ([`Source`]: its own, a group's or a site's, and the
//! inventory keys that name them), as the last discovery (`notebridge sources`) found them, so
//! `scan --group NAME` and later commands recognise a group or site without asking Graph again.

use rusqlite::params;
use serde::{Deserialize, Serialize};

use super::jobs::{JobCounts, Remaining};
use super::{Db, Result};

/// What kind of place holds notebooks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// The account's own notebooks.
    Personal,
    /// A Microsoft 365 group (every team in Microsoft Teams has one).
    Group,
    /// A SharePoint site.
    Site,
}

impl SourceKind {
    /// As stored and printed (`personal`, `group`, `site`).
    pub fn as_str(self) -> &'static str {
        match self {
            SourceKind::Personal => "personal",
            SourceKind::Group => "group",
            SourceKind::Site => "site",
        }
    }

    /// From [`SourceKind::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "personal" => Some(SourceKind::Personal),
            "group" => Some(SourceKind::Group),
            "site" => Some(SourceKind::Site),
            _ => None,
        }
    }

    /// What it is, in words ("Microsoft 365 group").
    pub fn what(self) -> &'static str {
        match self {
            SourceKind::Personal => "own notebooks",
            SourceKind::Group => "Microsoft 365 group",
            SourceKind::Site => "SharePoint site",
        }
    }
}

/// One place notebooks are read from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Source {
    /// Personal, group or site.
    pub kind: SourceKind,
    /// The group's or site's Graph id (the user's id for personal).
    pub id: String,
    /// Display name.
    pub name: String,
    /// The site's URL.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl Source {
    /// The account's own notebooks.
    pub fn personal(user_id: &str, name: &str) -> Self {
        Source {
            kind: SourceKind::Personal,
            id: user_id.to_owned(),
            name: name.to_owned(),
            url: None,
        }
    }

    /// The key its inventory is kept under in the state database: the account's name for its own
    /// notebooks, `{account}/group:{id}` or `{account}/site:{id}` for a team's, so a team's items
    /// never mix with the account's own even where Graph lists the same notebook in both.
    pub fn inventory_key(&self, account: &str) -> String {
        match self.kind {
            SourceKind::Personal => account.to_owned(),
            kind => format!("{account}/{}:{}", kind.as_str(), self.id),
        }
    }

    /// The title of its page in Notion ("Design (SharePoint site)").
    pub fn notion_title(&self) -> String {
        format!("{} ({})", self.name, self.kind.what())
    }

    /// For messages: `group "Marketing" (id)`.
    pub fn label(&self) -> String {
        match self.kind {
            SourceKind::Personal => "the account's own notebooks".to_owned(),
            SourceKind::Group => format!("group {:?} ({})", self.name, self.id),
            SourceKind::Site => format!(
                "site {:?} ({})",
                self.name,
                self.url.as_deref().unwrap_or(&self.id)
            ),
        }
    }
}

/// The account that an inventory key belongs to (see [`Source::inventory_key`]).
pub fn account_of_key(key: &str) -> &str {
    key.split_once('/').map_or(key, |(a, _)| a)
}

/// The kind and id of the group or site an inventory key names (`None` for an account's own).
pub fn source_of_key(key: &str) -> Option<(SourceKind, &str)> {
    let (_, rest) = key.split_once('/')?;
    let (kind, id) = rest.split_once(':')?;
    match SourceKind::parse(kind)? {
        SourceKind::Personal => None,
        kind => Some((kind, id)),
    }
}

/// One stored source.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredSource {
    /// The source.
    pub source: Source,
    /// Its notebook count, when it could be counted.
    pub notebooks: Option<i64>,
    /// Why it could not be, otherwise.
    pub problem: Option<String>,
}

/// SQL condition: the `account` column holds the account `?1` itself or one of its groups' or
/// sites' keys (`?1/group:...`, `?1/site:...`).
/// (A range rather than a prefix function, so SQLite can use the `account` indexes: under the
/// binary collation every `?1/...` sorts from `?1/` up to, not including, `?10`.)
pub(super) const KEY_OF_ACCOUNT: &str =
    "(account = ?1 OR (account >= ?1 || '/' AND account < ?1 || '0'))";

impl Db {
    /// Replaces what is known of `account`'s sources with a new discovery.
    pub fn save_sources(
        &self,
        account: &str,
        found: &[(Source, std::result::Result<usize, String>)],
    ) -> Result<()> {
        self.write("storing the sources", |tx| {
            tx.execute("DELETE FROM sources WHERE account = ?1", [account])?;
            let mut st = tx.prepare(
                "INSERT OR REPLACE INTO sources(account, kind, id, name, url, notebooks, problem)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for (s, n) in found {
                let (count, problem) = match n {
                    Ok(n) => (Some(*n as i64), None),
                    Err(p) => (None, Some(p.as_str())),
                };
                st.execute(params![
                    account,
                    s.kind.as_str(),
                    s.id,
                    s.name,
                    s.url,
                    count,
                    problem
                ])?;
            }
            Ok(())
        })
    }

    /// Records one group or site a command named (kept next to what discovery found).
    pub fn remember_source(&self, account: &str, s: &Source) -> Result<()> {
        self.write("storing a source", |tx| {
            tx.execute(
                "INSERT INTO sources(account, kind, id, name, url, notebooks, problem)
                 VALUES (?1, ?2, ?3, ?4, ?5, NULL, NULL)
                 ON CONFLICT(account, kind, id) DO UPDATE SET name = excluded.name,
                   url = COALESCE(excluded.url, url)",
                params![account, s.kind.as_str(), s.id, s.name, s.url],
            )?;
            Ok(())
        })
    }

    /// The inventory keys of `account` that have jobs in the queue: its own name (when it has
    /// any) and each group's or site's key (see [`Source::inventory_key`]), in that order.
    pub fn queued_keys(&self, account: &str) -> Result<Vec<String>> {
        self.read("listing an account's queued sources", |c| {
            let mut st = c.prepare(&format!(
                "SELECT DISTINCT account FROM jobs WHERE {KEY_OF_ACCOUNT}
                 ORDER BY account <> ?1, account"
            ))?;
            let rows = st.query_map([account], |r| r.get(0))?;
            rows.collect()
        })
    }

    /// [`Db::job_counts`] of `account` with its groups' and sites' summed in.
    pub fn account_job_counts(&self, account: &str) -> Result<JobCounts> {
        let mut all = JobCounts::default();
        for key in self.queued_keys(account)? {
            let c = self.job_counts(&key)?;
            all.queued += c.queued;
            all.running += c.running;
            all.done += c.done;
            all.failed += c.failed;
            all.blocked += c.blocked;
            all.pages_total += c.pages_total;
            all.pages_done += c.pages_done;
        }
        Ok(all)
    }

    /// [`Db::remaining_work`] of `account` with its groups' and sites' summed in.
    pub fn account_remaining(&self, account: &str) -> Result<Remaining> {
        let mut all = Remaining::default();
        for key in self.queued_keys(account)? {
            let r = self.remaining_work(&key)?;
            all.pages += r.pages;
            all.containers += r.containers;
        }
        Ok(all)
    }

    /// The group or site an inventory key names, as discovery or a command stored it.
    pub fn source_of_key(&self, key: &str) -> Result<Option<Source>> {
        let Some((kind, id)) = source_of_key(key) else {
            return Ok(None);
        };
        let account = account_of_key(key);
        Ok(self
            .sources(account)?
            .into_iter()
            .map(|s| s.source)
            .find(|s| s.kind == kind && s.id == id))
    }

    /// How reports name an inventory key: the account itself, or the account and its group's or
    /// site's Notion title (`alice · Marketing (Microsoft 365 group)`), or an import's path
    /// (`OneNote files /home/me/Work`); the key when the source is no longer stored.
    pub fn key_title(&self, key: &str) -> Result<String> {
        if super::import_key::is_files_key(key) {
            return Ok(match self.import_path(key)? {
                Some(path) => format!("OneNote files {path}"),
                None => key.to_owned(),
            });
        }
        Ok(match self.source_of_key(key)? {
            Some(s) => format!("{} · {}", account_of_key(key), s.notion_title()),
            None => key.to_owned(),
        })
    }

    /// The sources known for `account`: its own first, then groups, then sites, by name.
    pub fn sources(&self, account: &str) -> Result<Vec<StoredSource>> {
        self.read("reading the sources", |c| {
            let mut st = c.prepare(
                "SELECT kind, id, name, url, notebooks, problem FROM sources
                 WHERE account = ?1
                 ORDER BY CASE kind WHEN 'personal' THEN 0 WHEN 'group' THEN 1 ELSE 2 END,
                          name COLLATE NOCASE, id",
            )?;
            let rows = st.query_map([account], |r| {
                let kind: String = r.get(0)?;
                Ok(StoredSource {
                    source: Source {
                        kind: SourceKind::parse(&kind).unwrap_or(SourceKind::Site),
                        id: r.get(1)?,
                        name: r.get(2)?,
                        url: r.get(3)?,
                    },
                    notebooks: r.get(4)?,
                    problem: r.get(5)?,
                })
            })?;
            rows.collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accounts_keys_are_its_own_and_its_sources_only() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let lock = db
            .acquire_run_lock(1, "run", 0, std::time::Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
        for key in [
            "alice/site:h,1,2",
            "alice-x",
            "alice0",
            "alice/group:g1",
            "alice",
            "alicea/group:g1",
            "bob/group:g1",
        ] {
            db.create_plan(&lock, key, "target", &[], 1).unwrap();
        }
        assert_eq!(
            db.queued_keys("alice").unwrap(),
            vec!["alice", "alice/group:g1", "alice/site:h,1,2"]
        );
        assert_eq!(db.queued_keys("bob").unwrap(), vec!["bob/group:g1"]);
        assert!(db.queued_keys("ali").unwrap().is_empty());
        // Each key's plan holds one link pass: the account's counts sum its three.
        assert_eq!(db.account_job_counts("alice").unwrap().queued, 3);
    }

    #[test]
    fn discovery_replaces_and_named_sources_are_kept() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let g = Source {
            kind: SourceKind::Group,
            id: "g1".into(),
            name: "Marketing".into(),
            url: None,
        };
        let s = Source {
            kind: SourceKind::Site,
            id: "h,1,2".into(),
            name: "Design".into(),
            url: Some("https://contoso.sharepoint.com/sites/Design".into()),
        };
        let me = Source::personal("u1", "alice");
        db.save_sources(
            "alice",
            &[
                (s.clone(), Err("10008".into())),
                (g.clone(), Ok(2)),
                (me.clone(), Ok(1)),
            ],
        )
        .unwrap();
        let got = db.sources("alice").unwrap();
        let kinds: Vec<_> = got.iter().map(|x| x.source.kind).collect();
        assert_eq!(
            kinds,
            vec![SourceKind::Personal, SourceKind::Group, SourceKind::Site]
        );
        assert_eq!(got[1].notebooks, Some(2));
        assert_eq!(got[2].problem.as_deref(), Some("10008"));
        assert!(db.sources("bob").unwrap().is_empty());
        db.save_sources("alice", &[(me, Ok(1))]).unwrap();
        assert_eq!(db.sources("alice").unwrap().len(), 1);
        db.remember_source("alice", &g).unwrap();
        assert_eq!(db.sources("alice").unwrap()[1].source, g);
    }
}
