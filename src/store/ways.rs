//! Which way each section's pages are read (`migrate --via`): the permissions the account's token
//! was granted (what `auto` decides from), each notebook's web URL (where its section files are
//! found), and per section the way planned, why, its file when found, and whether it fell back to
//! the OneNote API and why.

use rusqlite::{params, Connection, OptionalExtension, Row};

use super::sources::KEY_OF_ACCOUNT;
use super::{Db, Result};
use crate::clock::UnixMillis;

/// How a section's pages are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Way {
    /// Its `.one` file, downloaded through the drive API and read locally.
    Files,
    /// Graph's OneNote API, page by page.
    Api,
}

impl Way {
    /// As stored and shown (`files`, `api`).
    pub fn as_str(self) -> &'static str {
        match self {
            Way::Files => "files",
            Way::Api => "api",
        }
    }

    fn parse(s: &str) -> Way {
        // The column's CHECK allows only the two.
        if s == "files" {
            Way::Files
        } else {
            Way::Api
        }
    }
}

/// A section's file in the drive, as planning found it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DriveFile {
    /// The drive.
    pub drive_id: String,
    /// The file's item id in it.
    pub item_id: String,
    /// Its size in bytes, as the drive announced it.
    pub size: u64,
    /// Its `cTag` (changes with its content), when the drive gave one.
    pub ctag: Option<String>,
    /// Its hash as the drive listed it, `{name}:{value}` (`quickXorHash:…`, `sha256Hash:…`).
    pub hash: Option<String>,
}

/// A notebook's links: where its folder of section files is.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NotebookUrls {
    /// The notebook's id.
    pub id: String,
    /// `links.oneNoteClientUrl.href`: its folder's address.
    pub client_url: Option<String>,
    /// `links.oneNoteWebUrl.href`: what the shares API resolves.
    pub web_url: Option<String>,
}

/// The way planned for one section.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct SectionWay {
    /// The inventory key (an account, or a group's or site's key).
    pub key: String,
    /// The section's id.
    pub section_id: String,
    /// The way planned.
    pub way: Way,
    /// Why that way.
    pub reason: String,
    /// Its file, when found.
    pub file: Option<DriveFile>,
    /// Why a `files` section went through the API after all.
    pub fell_back: Option<String>,
    /// Pages of a `files` section read through the API (missing from its file, or after the
    /// fall-back).
    pub pages_by_api: i64,
}

impl SectionWay {
    /// The way its pages actually take now: the API once it fell back.
    pub fn effective(&self) -> Way {
        if self.fell_back.is_some() {
            Way::Api
        } else {
            self.way
        }
    }

    fn from_row(r: &Row<'_>) -> rusqlite::Result<Self> {
        let drive_id: Option<String> = r.get("drive_id")?;
        let item_id: Option<String> = r.get("item_id")?;
        let size: Option<i64> = r.get("size")?;
        let file = match (drive_id, item_id) {
            (Some(drive_id), Some(item_id)) => Some(DriveFile {
                drive_id,
                item_id,
                size: u64::try_from(size.unwrap_or(0)).unwrap_or(0),
                ctag: r.get("ctag")?,
                hash: r.get("hash")?,
            }),
            _ => None,
        };
        Ok(SectionWay {
            key: r.get("account")?,
            section_id: r.get("section_id")?,
            way: Way::parse(&r.get::<_, String>("way")?),
            reason: r.get("reason")?,
            file,
            fell_back: r.get("fell_back")?,
            pages_by_api: r.get("pages_by_api")?,
        })
    }
}

/// A section's way with the names that show it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct ShownWay {
    /// The way.
    #[serde(flatten)]
    pub way: SectionWay,
    /// The section's name.
    pub section: String,
    /// Its notebook's name.
    pub notebook: String,
}

/// Sections of an account (with its groups and sites) by the way they take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct WayCounts {
    /// Sections read from their files.
    pub files: i64,
    /// Sections read through the OneNote API as planned.
    pub api: i64,
    /// Sections planned `files` that went through the API after all.
    pub fell_back: i64,
}

/// What is left to read from section files under one inventory key: pages not yet migrated in
/// sections whose way is `files` (and that did not fall back), those sections, their bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct FilesLeft {
    /// Pages.
    pub pages: i64,
    /// Sections (one download each).
    pub sections: i64,
    /// Bytes to download.
    pub bytes: i64,
}

const COLUMNS: &str =
    "account, section_id, way, reason, drive_id, item_id, size, ctag, hash, fell_back, pages_by_api";

impl Db {
    /// Records the permissions a token response granted to `account` (its `scope` field).
    pub fn save_granted_scopes(&self, account: &str, scopes: &[String]) -> Result<()> {
        self.write("storing the granted permissions", |tx| {
            tx.execute(
                "UPDATE accounts SET granted_scopes = ?2 WHERE name = ?1",
                params![account, scopes.join(" ")],
            )?;
            Ok(())
        })
    }

    /// The permissions `account`'s last token was granted; `None` when not known yet.
    pub fn granted_scopes(&self, account: &str) -> Result<Option<Vec<String>>> {
        self.read("reading the granted permissions", |c| {
            let s: Option<Option<String>> = c
                .query_row(
                    "SELECT granted_scopes FROM accounts WHERE name = ?1",
                    [account],
                    |r| r.get(0),
                )
                .optional()?;
            Ok(s.flatten()
                .map(|s| s.split_whitespace().map(str::to_owned).collect()))
        })
    }

    /// Records the links of notebooks of `key`, as a scan read them.
    pub fn save_notebook_urls(&self, key: &str, urls: &[NotebookUrls]) -> Result<()> {
        self.write("storing notebook links", |tx| {
            let mut st = tx.prepare(
                "UPDATE notebooks SET client_url = ?3, web_url = ?4 WHERE account = ?1 AND id = ?2",
            )?;
            for u in urls {
                st.execute(params![key, u.id, u.client_url, u.web_url])?;
            }
            Ok(())
        })
    }

    /// A notebook's links, as the last scan recorded them.
    pub fn notebook_urls(&self, key: &str, notebook_id: &str) -> Result<NotebookUrls> {
        self.read("reading a notebook's links", |c| {
            c.query_row(
                "SELECT client_url, web_url FROM notebooks WHERE account = ?1 AND id = ?2",
                params![key, notebook_id],
                |r| {
                    Ok(NotebookUrls {
                        id: notebook_id.to_owned(),
                        client_url: r.get(0)?,
                        web_url: r.get(1)?,
                    })
                },
            )
            .optional()
            .map(|u| {
                u.unwrap_or(NotebookUrls {
                    id: notebook_id.to_owned(),
                    ..NotebookUrls::default()
                })
            })
        })
    }

    /// Records the way planned for sections (replacing what an earlier plan said of them: a new
    /// plan tries their files again).
    pub fn save_section_ways(&self, ways: &[SectionWay], now: UnixMillis) -> Result<()> {
        self.write("storing the sections' ways", |tx| {
            save_ways_in(tx, ways, now)
        })
    }

    /// The way planned for one section, if any was.
    pub fn section_way(&self, key: &str, section_id: &str) -> Result<Option<SectionWay>> {
        self.read("reading a section's way", |c| {
            c.query_row(
                &format!(
                    "SELECT {COLUMNS} FROM section_ways WHERE account = ?1 AND section_id = ?2"
                ),
                params![key, section_id],
                SectionWay::from_row,
            )
            .optional()
        })
    }

    /// Records that a `files` section goes through the API from now on, and why (the first reason
    /// is kept).
    pub fn record_fall_back(
        &self,
        key: &str,
        section_id: &str,
        reason: &str,
        now: UnixMillis,
    ) -> Result<()> {
        self.write("recording a section's fall-back", |tx| {
            tx.execute(
                "UPDATE section_ways SET fell_back = COALESCE(fell_back, ?3), updated_at = ?4
                 WHERE account = ?1 AND section_id = ?2",
                params![key, section_id, reason, now],
            )?;
            Ok(())
        })
    }

    /// Counts one page of a `files` section read through the API.
    pub fn count_page_by_api(&self, key: &str, section_id: &str) -> Result<()> {
        self.write("counting a page read through the API", |tx| {
            tx.execute(
                "UPDATE section_ways SET pages_by_api = pages_by_api + 1
                 WHERE account = ?1 AND section_id = ?2",
                params![key, section_id],
            )?;
            Ok(())
        })
    }

    /// A page's OneNote GUID (`{lowercase}`), which finds it in its section file.
    pub fn page_guid(&self, key: &str, page_id: &str) -> Result<Option<String>> {
        self.read("reading a page's GUID", |c| {
            c.query_row(
                "SELECT onenote_guid FROM pages WHERE account = ?1 AND id = ?2",
                params![key, page_id],
                |r| r.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
        })
    }

    /// The sections, of every key, whose file is still to be read: way `files`, not fallen back,
    /// with a page job queued or running. Their downloads are kept; any other is stale.
    pub fn sections_to_download(&self) -> Result<Vec<SectionWay>> {
        self.read("listing the section files still to read", |c| {
            let mut st = c.prepare(&format!(
                "SELECT {COLUMNS} FROM section_ways w
                 WHERE w.way = 'files' AND w.fell_back IS NULL AND EXISTS (
                    SELECT 1 FROM pages p JOIN jobs j ON j.account = p.account AND j.item_id = p.id
                    WHERE p.account = w.account AND p.section_id = w.section_id
                      AND j.kind = 'page' AND j.state IN ('queued', 'running'))"
            ))?;
            let rows = st.query_map([], SectionWay::from_row)?;
            rows.collect()
        })
    }

    /// Every section way of `account` and its groups and sites, with names, in inventory order.
    pub fn section_ways_of(&self, account: &str) -> Result<Vec<ShownWay>> {
        self.read("listing the sections' ways", |c| {
            let cols = COLUMNS
                .split(", ")
                .map(|col| format!("w.{col}"))
                .collect::<Vec<_>>()
                .join(", ");
            let key_of = KEY_OF_ACCOUNT.replace("account", "w.account");
            let mut st = c.prepare(&format!(
                "SELECT {cols}, s.name AS section_name, n.name AS notebook_name
                 FROM section_ways w
                 JOIN sections s ON s.account = w.account AND s.id = w.section_id
                 JOIN notebooks n ON n.account = s.account AND n.id = s.notebook_id
                 WHERE {key_of} AND s.deleted_at IS NULL
                 ORDER BY w.account, n.position, s.position"
            ))?;
            let rows = st.query_map([account], |r| {
                Ok(ShownWay {
                    way: SectionWay::from_row(r)?,
                    section: r.get("section_name")?,
                    notebook: r.get("notebook_name")?,
                })
            })?;
            rows.collect()
        })
    }

    /// What is left to read from section files under the inventory key `key`: its queued page
    /// jobs in `files` sections.
    pub fn files_left(&self, key: &str) -> Result<FilesLeft> {
        self.read("counting the work left in section files", |c| {
            files_left_in(c, key, LeftOf::Queue)
        })
    }

    /// [`Db::files_left`] of `account` with its groups' and sites' summed in.
    pub fn account_files_left(&self, account: &str) -> Result<FilesLeft> {
        let mut all = FilesLeft::default();
        for key in self.queued_keys(account)? {
            let f = self.files_left(&key)?;
            all.pages += f.pages;
            all.sections += f.sections;
            all.bytes += f.bytes;
        }
        Ok(all)
    }

    /// What would be left to read from section files under `key` with the ways `ways` (a dry
    /// run: nothing is stored): its pages not migrated yet in those `files` sections.
    pub fn preview_files_left(&self, key: &str, ways: &[SectionWay]) -> Result<FilesLeft> {
        self.rehearse("previewing the work left in section files", |tx| {
            save_ways_in(tx, ways, 0)?;
            files_left_in(tx, key, LeftOf::Inventory)
        })
    }

    /// Sections of `account` (with its groups and sites) by the way they take.
    pub fn way_counts(&self, account: &str) -> Result<WayCounts> {
        let mut n = WayCounts::default();
        for w in self.section_ways_of(account)? {
            match (w.way.way, w.way.fell_back.is_some()) {
                (Way::Files, false) => n.files += 1,
                (Way::Files, true) => n.fell_back += 1,
                (Way::Api, _) => n.api += 1,
            }
        }
        Ok(n)
    }
}

fn save_ways_in(c: &Connection, ways: &[SectionWay], now: UnixMillis) -> rusqlite::Result<()> {
    let mut st = c.prepare_cached(
        "INSERT INTO section_ways(account, section_id, way, reason, drive_id, item_id, size,
                ctag, fell_back, pages_by_api, updated_at, hash)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 0, ?10, ?11)
         ON CONFLICT(account, section_id) DO UPDATE SET
            way = excluded.way, reason = excluded.reason, drive_id = excluded.drive_id,
            item_id = excluded.item_id, size = excluded.size, ctag = excluded.ctag,
            hash = excluded.hash,
            fell_back = excluded.fell_back, pages_by_api = 0, updated_at = excluded.updated_at",
    )?;
    for w in ways {
        let f = w.file.as_ref();
        st.execute(params![
            w.key,
            w.section_id,
            w.way.as_str(),
            w.reason,
            f.map(|f| f.drive_id.as_str()),
            f.map(|f| f.item_id.as_str()),
            f.map(|f| i64::try_from(f.size).unwrap_or(i64::MAX)),
            f.and_then(|f| f.ctag.as_deref()),
            w.fell_back,
            now,
            f.and_then(|f| f.hash.as_deref())
        ])?;
    }
    Ok(())
}

/// Which pages count as left: queued page jobs, or (before a plan) pages not migrated yet.
#[derive(Clone, Copy)]
enum LeftOf {
    Queue,
    Inventory,
}

fn files_left_in(c: &Connection, key: &str, of: LeftOf) -> rusqlite::Result<FilesLeft> {
    let left = match of {
        LeftOf::Queue => {
            "EXISTS (SELECT 1 FROM jobs j WHERE j.account = p.account AND j.item_id = p.id
                     AND j.kind = 'page' AND j.state IN ('queued', 'running'))"
        }
        LeftOf::Inventory => {
            "p.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM notion_items n
                     WHERE n.account = p.account AND n.item_id = p.id AND n.body_state = 'done')"
        }
    };
    let mut st = c.prepare(&format!(
        "SELECT w.section_id, COALESCE(w.size, 0), COUNT(*) FROM pages p
         JOIN section_ways w ON w.account = p.account AND w.section_id = p.section_id
         WHERE p.account = ?1 AND w.way = 'files' AND w.fell_back IS NULL AND {left}
         GROUP BY w.section_id"
    ))?;
    let rows = st.query_map([key], |r| Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))?;
    let mut out = FilesLeft::default();
    for row in rows {
        let (size, pages) = row?;
        out.sections += 1;
        out.bytes += size;
        out.pages += pages;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::accounts::Account;
    use crate::store::inventory::{Notebook, ScanScope, Section};

    fn db_with_notebook() -> (tempfile::TempDir, Db) {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        db.save_account(&Account {
            name: "alice".into(),
            user_id: "u1".into(),
            user_principal_name: "alice@example.com".into(),
            display_name: None,
            refresh_token: Some("rt".into()),
            access_token: None,
            access_expires_at: None,
            updated_at: 0,
        })
        .unwrap();
        let section = |id: &str, name: &str| Section {
            id: id.into(),
            name: name.into(),
            created: None,
            last_modified: None,
            pages: Vec::new(),
        };
        let nb = Notebook {
            id: "nb".into(),
            name: "Work".into(),
            created: None,
            last_modified: None,
            section_groups: Vec::new(),
            sections: vec![section("s1", "Plans"), section("s2", "Notes")],
        };
        db.save_scan("alice", &[nb], &ScanScope::All, 0).unwrap();
        (t, db)
    }

    #[test]
    fn granted_scopes_are_unknown_until_a_token_says_them_then_replaced_by_each() {
        let (_t, db) = db_with_notebook();
        assert_eq!(db.granted_scopes("alice").unwrap(), None);
        db.save_granted_scopes("alice", &["Notes.Read".into(), "Files.Read".into()])
            .unwrap();
        assert_eq!(
            db.granted_scopes("alice").unwrap().unwrap(),
            vec!["Notes.Read".to_owned(), "Files.Read".to_owned()]
        );
        db.save_granted_scopes("alice", &["Notes.Read".into()])
            .unwrap();
        assert_eq!(
            db.granted_scopes("alice").unwrap().unwrap(),
            vec!["Notes.Read".to_owned()]
        );
        assert_eq!(db.granted_scopes("nobody").unwrap(), None);
    }

    #[test]
    fn what_is_left_in_section_files_counts_their_pages_and_bytes_once_each() {
        use crate::store::inventory::Page;
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let page = |id: &str, order| Page {
            id: id.into(),
            title: id.into(),
            level: 0,
            order,
            last_modified: None,
            created: None,
            content_url: None,
            author: None,
            web_url: None,
        };
        let section = |id: &str, pages| Section {
            id: id.into(),
            name: id.into(),
            created: None,
            last_modified: None,
            pages,
        };
        let nb = Notebook {
            id: "nb".into(),
            name: "Work".into(),
            created: None,
            last_modified: None,
            section_groups: Vec::new(),
            sections: vec![
                section("s1", vec![page("p1", 0), page("p2", 1)]),
                section("s2", vec![page("p3", 0)]),
                section("s3", vec![page("p4", 0)]),
            ],
        };
        db.save_scan("alice", &[nb], &ScanScope::All, 0).unwrap();
        let way = |id: &str, way, size, fell_back: Option<&str>| SectionWay {
            key: "alice".into(),
            section_id: id.into(),
            way,
            reason: "test".into(),
            file: Some(DriveFile {
                drive_id: "d".into(),
                item_id: id.into(),
                size,
                ctag: None,
                hash: None,
            }),
            fell_back: fell_back.map(str::to_owned),
            pages_by_api: 0,
        };
        let ways = [
            way("s1", Way::Files, 1000, None),
            way("s2", Way::Files, 500, Some("gone")),
            way("s3", Way::Api, 7, None),
        ];
        assert_eq!(
            db.preview_files_left("alice", &ways).unwrap(),
            FilesLeft {
                pages: 2,
                sections: 1,
                bytes: 1000
            }
        );
        // A preview stores nothing; nothing is queued either.
        assert_eq!(db.section_way("alice", "s1").unwrap(), None);
        db.save_section_ways(&ways, 1).unwrap();
        assert_eq!(db.files_left("alice").unwrap(), FilesLeft::default());
    }

    #[test]
    fn a_notebooks_links_are_kept_with_it() {
        let (_t, db) = db_with_notebook();
        let none = NotebookUrls {
            id: "nb".into(),
            ..NotebookUrls::default()
        };
        assert_eq!(db.notebook_urls("alice", "nb").unwrap(), none);
        let urls = NotebookUrls {
            id: "nb".into(),
            client_url: Some("onenote:https://x/Work".into()),
            web_url: Some("https://x/Work".into()),
        };
        db.save_notebook_urls("alice", std::slice::from_ref(&urls))
            .unwrap();
        assert_eq!(db.notebook_urls("alice", "nb").unwrap(), urls);
    }

    #[test]
    fn a_fall_back_keeps_its_first_reason_and_a_new_plan_tries_the_file_again() {
        let (_t, db) = db_with_notebook();
        let file = DriveFile {
            drive_id: "d".into(),
            item_id: "i1".into(),
            size: 1234,
            ctag: Some("c1".into()),
            hash: None,
        };
        let way = |id: &str, way, file| SectionWay {
            key: "alice".into(),
            section_id: id.into(),
            way,
            reason: "test".into(),
            file,
            fell_back: None,
            pages_by_api: 0,
        };
        db.save_section_ways(
            &[
                way("s1", Way::Files, Some(file.clone())),
                way("s2", Way::Api, None),
            ],
            1,
        )
        .unwrap();
        assert_eq!(
            db.way_counts("alice").unwrap(),
            WayCounts {
                files: 1,
                api: 1,
                fell_back: 0
            }
        );
        db.record_fall_back("alice", "s1", "first", 2).unwrap();
        db.record_fall_back("alice", "s1", "second", 3).unwrap();
        db.count_page_by_api("alice", "s1").unwrap();
        let s1 = db.section_way("alice", "s1").unwrap().unwrap();
        assert_eq!(s1.fell_back.as_deref(), Some("first"));
        assert_eq!(s1.effective(), Way::Api);
        assert_eq!(s1.pages_by_api, 1);
        assert_eq!(s1.file, Some(file.clone()));
        let shown = db.section_ways_of("alice").unwrap();
        assert_eq!(
            shown
                .iter()
                .map(|w| (w.section.as_str(), w.notebook.as_str()))
                .collect::<Vec<_>>(),
            [("Plans", "Work"), ("Notes", "Work")]
        );
        assert_eq!(db.way_counts("alice").unwrap().fell_back, 1);
        db.save_section_ways(&[way("s1", Way::Files, Some(file))], 4)
            .unwrap();
        let s1 = db.section_way("alice", "s1").unwrap().unwrap();
        assert_eq!((s1.fell_back, s1.pages_by_api), (None, 0));
    }
}
