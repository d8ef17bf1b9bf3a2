//! The SQLite state: opening, securing and migrating the database file.
//!
//! One file holds accounts and tokens, the OneNote inventory, the job queue, the Notion ids of what was
//! migrated and the limiter's ledger. It is opened once per process and shared (`Arc<Db>`). Every state
//! change is one transaction, so a `kill -9` at any moment leaves a consistent database. Async code
//! never calls it on a runtime thread: it goes through [`Db::call`] (or [`Db::submit`]), which runs
//! its calls in order on tokio's blocking pool.

pub mod accounts;
mod calls;
pub mod conflicts;
pub use calls::Priority;
pub mod drive_ledger;
pub mod history;
pub mod identity;
pub mod import_key;
pub mod import_notes;
pub mod imports;
pub mod inventory;
pub mod jobs;
pub mod layouts;
pub mod listed_empty;
pub mod moves;
pub mod notion_items;
pub mod pending_runs;
pub mod sources;
pub mod sync;
pub mod ways;
pub mod write_journal;

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, Transaction, TransactionBehavior};

use crate::failure::{Class, Classify, Meaning, Next, Scope};

/// The schema, one entry per version, in order. Entries are never edited once released, removed or
/// reordered; a change is a new file appended here.
pub const MIGRATIONS: &[(&str, &str)] = &[
    (
        "0001_initial",
        include_str!("../../migrations/0001_initial.sql"),
    ),
    ("0002_jobs", include_str!("../../migrations/0002_jobs.sql")),
    (
        "0003_limiter",
        include_str!("../../migrations/0003_limiter.sql"),
    ),
    (
        "0004_page_guids",
        include_str!("../../migrations/0004_page_guids.sql"),
    ),
    (
        "0005_body_shape",
        include_str!("../../migrations/0005_body_shape.sql"),
    ),
    (
        "0006_scan_costs",
        include_str!("../../migrations/0006_scan_costs.sql"),
    ),
    (
        "0007_history",
        include_str!("../../migrations/0007_history.sql"),
    ),
    (
        "0008_network_wait",
        include_str!("../../migrations/0008_network_wait.sql"),
    ),
    (
        "0009_error_class",
        include_str!("../../migrations/0009_error_class.sql"),
    ),
    (
        "0010_sources",
        include_str!("../../migrations/0010_sources.sql"),
    ),
    (
        "0011_one_owner",
        include_str!("../../migrations/0011_one_owner.sql"),
    ),
    (
        "0012_unread_columns",
        include_str!("../../migrations/0012_unread_columns.sql"),
    ),
    (
        "0013_write_journal",
        include_str!("../../migrations/0013_write_journal.sql"),
    ),
    (
        "0014_file_imports",
        include_str!("../../migrations/0014_file_imports.sql"),
    ),
    (
        "0015_notion_pace",
        include_str!("../../migrations/0015_notion_pace.sql"),
    ),
    (
        "0016_drive",
        include_str!("../../migrations/0016_drive.sql"),
    ),
    ("0017_via", include_str!("../../migrations/0017_via.sql")),
    (
        "0018_layout",
        include_str!("../../migrations/0018_layout.sql"),
    ),
    (
        "0019_import_notes",
        include_str!("../../migrations/0019_import_notes.sql"),
    ),
    (
        "0020_page_author_link",
        include_str!("../../migrations/0020_page_author_link.sql"),
    ),
    (
        "0021_breaker_inferred",
        include_str!("../../migrations/0021_breaker_inferred.sql"),
    ),
    (
        "0022_section_file_hash",
        include_str!("../../migrations/0022_section_file_hash.sql"),
    ),
    (
        "0023_conflicts",
        include_str!("../../migrations/0023_conflicts.sql"),
    ),
    ("0024_sync", include_str!("../../migrations/0024_sync.sql")),
    (
        "0025_upload_refusals",
        include_str!("../../migrations/0025_upload_refusals.sql"),
    ),
    (
        "0026_conflicts_resolved",
        include_str!("../../migrations/0026_conflicts_resolved.sql"),
    ),
    (
        "0027_body_digest",
        include_str!("../../migrations/0027_body_digest.sql"),
    ),
    (
        "0028_listed_empty",
        include_str!("../../migrations/0028_listed_empty.sql"),
    ),
    (
        "0029_row_moves",
        include_str!("../../migrations/0029_row_moves.sql"),
    ),
    (
        "0030_pending_runs",
        include_str!("../../migrations/0030_pending_runs.sql"),
    ),
    (
        "0031_recreated_pages",
        include_str!("../../migrations/0031_recreated_pages.sql"),
    ),
];

/// How long a writer waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Errors of the state database. Each names the file.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The file or its folder could not be created or secured.
    #[error("state database {path}: {action}: {source}")]
    Io {
        /// The database file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The OS error.
        source: std::io::Error,
    },
    /// SQLite refused an operation.
    #[error("state database {path}: {action}: {source}")]
    Sqlite {
        /// The database file.
        path: PathBuf,
        /// What was being done.
        action: String,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file was written by a newer notebridge; we refuse to touch it.
    #[error(
        "state database {path} has schema version {found}, but this notebridge knows only up to \
         version {known}: it was written by a newer notebridge. Upgrade notebridge, or point --db / \
         NOTEBRIDGE_DB at another file. The file was not modified."
    )]
    NewerSchema {
        /// The database file.
        path: PathBuf,
        /// The version found in the file.
        found: i64,
        /// The newest version this build knows.
        known: i64,
    },
    /// A job was not in the state a transition starts from: this run's idea of the queue and the
    /// database differ (a bug), so nothing more is written.
    #[error("state database {path}: {job} cannot go from {from} to {to}: it is not {from}")]
    Transition {
        /// The database file.
        path: PathBuf,
        /// Which job.
        job: String,
        /// The state the transition starts from.
        from: jobs::JobState,
        /// The state it was to reach.
        to: jobs::JobState,
    },
    /// An item's Notion record was not in the state a transition starts from (or a write about it
    /// changed no row): this run's idea of what Notion holds and the database differ (a bug), so
    /// nothing of the transition is written.
    #[error("state database {path}: {item} cannot go from {from} to {to}: it is not {from}")]
    Item {
        /// The database file.
        path: PathBuf,
        /// Which record.
        item: String,
        /// The stage the transition starts from.
        from: notion_items::Stage,
        /// The stage it was to reach.
        to: notion_items::Stage,
    },
    /// This process no longer holds the migration lock (another one took it over while this one
    /// was paused): it changes nothing more in the queue.
    #[error(
        "state database {path}: another notebridge took over the migration lock; this process \
         stopped changing the queue"
    )]
    LockLost {
        /// The database file.
        path: PathBuf,
    },
}

impl Classify for StoreError {
    fn class(&self) -> Class {
        let run = Class::new(Scope::Run, Next::Never);
        match self {
            // The user's to fix: another --db, an upgrade, a folder's permissions or space.
            StoreError::NewerSchema { .. } | StoreError::Io { .. } => run.means(Meaning::Usage),
            StoreError::Sqlite { .. } | StoreError::Transition { .. } | StoreError::Item { .. } => {
                run
            }
            StoreError::LockLost { .. } => run.means(Meaning::Busy),
        }
    }
}

/// Result alias for store operations.
pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// The open state database.
#[derive(Debug)]
pub struct Db {
    path: PathBuf,
    conn: Mutex<Connection>,
    /// What async code asks of it, run in order off the runtime ([`Db::call`]).
    calls: calls::Calls,
}

impl Db {
    /// Opens (creating when missing, with mode 0600 in a folder created when missing) and migrates the
    /// database at `path`. A database from a newer notebridge is refused and left untouched.
    pub fn open(path: &Path) -> Result<Db> {
        Self::open_to(path, MIGRATIONS.len())
    }

    /// A private database in memory, migrated: for a client of one process that keeps nothing
    /// (a Notion pace nobody else shares, in tests and one-off checks).
    pub fn open_in_memory() -> Result<Db> {
        let path = PathBuf::from(":memory:");
        let conn = Connection::open_in_memory().map_err(sql(&path, "opening"))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(sql(&path, "enabling foreign keys"))?;
        let mut db = Db {
            path,
            conn: Mutex::new(conn),
            calls: calls::Calls::default(),
        };
        db.migrate(MIGRATIONS.len())?;
        Ok(db)
    }

    /// Opens and migrates only up to `version` (tests use it to write databases of earlier versions).
    pub fn open_to(path: &Path, version: usize) -> Result<Db> {
        let io = |action: &'static str| {
            let path = path.to_owned();
            move |source| StoreError::Io {
                path,
                action,
                source,
            }
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            if !dir.exists() {
                create_private_dir(dir).map_err(io("creating its folder"))?;
            }
        }
        // Create the file ourselves so it is private from its first byte, not after a chmod; but never
        // open an existing one: closing any descriptor of a database file releases every POSIX lock
        // this process holds on it, SQLite's included ("How To Corrupt An SQLite Database File",
        // 2.2). A second `Db` opened beside one already open would drop the first's lock, and
        // another process closing its connection could then take this file for its own and delete
        // the WAL under the first ("database disk image is malformed", seen in the suite).
        {
            match crate::platform::open_private(
                OpenOptions::new().write(true).create_new(true),
                path,
            ) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io("creating the file")(e)),
            }
        }
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql(path, "opening"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sql(path, "setting the busy timeout"))?;

        // Check the version before anything writes to the file (even switching to WAL does).
        let found: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql(path, "reading the schema version"))?;
        let known = MIGRATIONS.len() as i64;
        if found > known {
            return Err(StoreError::NewerSchema {
                path: path.to_owned(),
                found,
                known,
            });
        }

        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql(path, "enabling WAL"))?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql(path, "setting synchronous"))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(sql(path, "enabling foreign keys"))?;

        let mut db = Db {
            path: path.to_owned(),
            conn: Mutex::new(conn),
            calls: calls::Calls::default(),
        };
        db.migrate(version)?;
        Ok(db)
    }

    /// Applies every migration above the file's version, up to `target`, in one exclusive transaction.
    fn migrate(&mut self, target: usize) -> Result<()> {
        let path = self.path.clone();
        let conn = self.conn.get_mut().expect("db mutex poisoned");
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Exclusive)
            .map_err(sql(&path, "starting the schema migration"))?;
        // Re-read inside the lock: another process may have migrated meanwhile.
        let current: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql(&path, "reading the schema version"))?;
        if current > MIGRATIONS.len() as i64 {
            return Err(StoreError::NewerSchema {
                path,
                found: current,
                known: MIGRATIONS.len() as i64,
            });
        }
        for (i, (name, sql_text)) in MIGRATIONS.iter().enumerate().take(target) {
            let version = i as i64 + 1;
            if version <= current {
                continue;
            }
            tx.execute_batch(sql_text).map_err(|e| StoreError::Sqlite {
                path: path.clone(),
                action: format!("applying migration {name}"),
                source: e,
            })?;
            tx.pragma_update(None, "user_version", version)
                .map_err(sql(&path, "recording the schema version"))?;
        }
        tx.commit()
            .map_err(sql(&path, "committing the schema migration"))?;
        Ok(())
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The schema version of the open file.
    pub fn schema_version(&self) -> Result<i64> {
        self.read("reading the schema version", |c| {
            c.query_row("PRAGMA user_version", [], |r| r.get(0))
        })
    }

    /// Locks the connection for a sequence of reads (keep it short: other tasks wait on it).
    pub fn conn(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().expect("db mutex poisoned")
    }

    /// Runs `f` on the connection; `action` names it in errors.
    pub fn read<T>(
        &self,
        action: &str,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let conn = self.conn();
        f(&conn).map_err(|e| StoreError::Sqlite {
            path: self.path.clone(),
            action: action.to_owned(),
            source: e,
        })
    }

    /// Runs `f` in one immediate (write-locked) transaction and commits it: one state change.
    pub fn write<T>(
        &self,
        action: &str,
        f: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let mut conn = self.conn();
        let err = |e| StoreError::Sqlite {
            path: self.path.clone(),
            action: action.to_owned(),
            source: e,
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(err)?;
        let out = f(&tx).map_err(err)?;
        tx.commit().map_err(err)?;
        Ok(out)
    }

    /// Runs `f` in a write transaction that is always rolled back: what a change would do,
    /// without doing it (`migrate --dry-run`).
    pub fn rehearse<T>(
        &self,
        action: &str,
        f: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T> {
        let mut conn = self.conn();
        let err = |e| StoreError::Sqlite {
            path: self.path.clone(),
            action: action.to_owned(),
            source: e,
        };
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(err)?;
        let out = f(&tx).map_err(err)?;
        tx.rollback().map_err(err)?;
        Ok(out)
    }
}

fn sql<'a>(path: &'a Path, action: &'a str) -> impl Fn(rusqlite::Error) -> StoreError + 'a {
    move |source| StoreError::Sqlite {
        path: path.to_owned(),
        action: action.to_owned(),
        source,
    }
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    crate::platform::create_private_dir(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether some open file description holds a lock on SQLite's shared-lock bytes of the file
    /// open as `f` that a write lock would conflict with. Asked through an OFD lock query, which
    /// sees this process's own POSIX locks as another owner's. (`f` stays open for the whole test:
    /// closing it would release those locks, the very fault tested.) Linux alone has OFD locks;
    /// macOS's `F_GETLK` never reports the asking process's own locks, and the fault itself (a
    /// closed descriptor dropping POSIX locks) does not exist with Windows' `LockFileEx`.
    #[cfg(target_os = "linux")]
    fn shared_lock_held(f: &std::fs::File) -> bool {
        use std::os::fd::AsRawFd;
        // SQLite's lock bytes: PENDING_BYTE (1 GiB), RESERVED, then 510 shared bytes.
        const SHARED_FIRST: i64 = 0x4000_0000 + 2;
        let mut l: libc::flock = unsafe { std::mem::zeroed() };
        l.l_type = libc::F_WRLCK as i16;
        l.l_whence = libc::SEEK_SET as i16;
        l.l_start = SHARED_FIRST;
        l.l_len = 510;
        // SAFETY: a lock query on an open descriptor, filling a valid struct.
        let r = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_GETLK, &mut l) };
        assert_eq!(r, 0, "{}", std::io::Error::last_os_error());
        l.l_type != libc::F_UNLCK as i16
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn opening_the_database_again_keeps_the_locks_of_a_connection_already_open() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("s.db");
        let first = Db::open(&path).unwrap();
        let probe = std::fs::File::open(&path).unwrap();
        let conn = first.conn();
        conn.execute_batch("BEGIN; SELECT count(*) FROM sqlite_schema;")
            .unwrap();
        assert!(
            shared_lock_held(&probe),
            "a read transaction holds its lock"
        );
        // A second handle in the same process (as `status` beside a test's, or the demo's) must
        // not drop the first's lock by opening and closing the file itself.
        let second = Db::open(&path).unwrap();
        assert!(
            shared_lock_held(&probe),
            "the first connection's lock is still held"
        );
        conn.execute_batch("COMMIT").unwrap();
        drop(conn);
        drop((first, second, probe));
    }

    #[test]
    fn creates_folder_and_file_private_to_their_owner() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("a/b/state.db");
        let db = Db::open(&path).unwrap();
        assert_eq!(db.schema_version().unwrap(), MIGRATIONS.len() as i64);
        for p in [
            &path,
            path.parent().unwrap(),
            &path.with_extension("db-wal"),
        ] {
            let privacy = crate::platform::privacy(p).unwrap();
            assert!(
                matches!(privacy, crate::platform::Privacy::Private(_)),
                "{}: {privacy:?}",
                p.display()
            );
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&path), 0o600);
            assert_eq!(mode(path.parent().unwrap()), 0o700);
        }
    }

    #[test]
    fn wal_foreign_keys_and_busy_timeout_are_on() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let c = db.conn();
        let mode: String = c
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        let fk: i64 = c
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .unwrap();
        assert_eq!(fk, 1);
        let bt: i64 = c
            .query_row("PRAGMA busy_timeout", [], |r| r.get(0))
            .unwrap();
        assert_eq!(bt, BUSY_TIMEOUT.as_millis() as i64);
    }

    #[test]
    fn reopening_is_idempotent() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("s.db");
        drop(Db::open(&p).unwrap());
        let db = Db::open(&p).unwrap();
        assert_eq!(db.schema_version().unwrap(), MIGRATIONS.len() as i64);
    }

    #[test]
    fn newer_database_is_refused_and_untouched() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("s.db");
        {
            let c = Connection::open(&p).unwrap();
            c.execute_batch("CREATE TABLE future(x); PRAGMA user_version = 999;")
                .unwrap();
        }
        let before = std::fs::read(&p).unwrap();
        let err = Db::open(&p).unwrap_err();
        assert!(matches!(err, StoreError::NewerSchema { found: 999, .. }));
        assert_eq!(err.meaning(), Some(Meaning::Usage));
        assert!(err.to_string().contains("newer notebridge"));
        assert_eq!(std::fs::read(&p).unwrap(), before, "file modified");
        assert!(!t.path().join("s.db-wal").exists());
    }

    #[test]
    fn every_earlier_version_migrates_forward_keeping_data() {
        for v in 1..=MIGRATIONS.len() {
            let t = tempfile::tempdir().unwrap();
            let p = t.path().join("s.db");
            {
                let db = Db::open_to(&p, v).unwrap();
                assert_eq!(db.schema_version().unwrap(), v as i64);
                // Version 12 dropped `created_at`, which every earlier version requires.
                let seed = if v < 12 {
                    "INSERT INTO accounts(name,user_id,user_principal_name,created_at,updated_at)
                     VALUES('alice','u1','alice@example.com',1,1)"
                } else {
                    "INSERT INTO accounts(name,user_id,user_principal_name,updated_at)
                     VALUES('alice','u1','alice@example.com',1)"
                };
                db.write("seed", |tx| tx.execute(seed, [])).unwrap();
            }
            let db = Db::open(&p).unwrap();
            assert_eq!(db.schema_version().unwrap(), MIGRATIONS.len() as i64);
            let upn: String = db
                .read("check", |c| {
                    c.query_row(
                        "SELECT user_principal_name FROM accounts WHERE name='alice'",
                        [],
                        |r| r.get(0),
                    )
                })
                .unwrap();
            assert_eq!(upn, "alice@example.com");
        }
    }

    #[test]
    fn version_12_drops_the_unread_columns_and_keeps_their_rows() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("s.db");
        {
            let db = Db::open_to(&p, 11).unwrap();
            db.write("seed", |tx| {
                tx.execute_batch(
                    "INSERT INTO accounts(name,user_id,user_principal_name,created_at,updated_at)
                       VALUES('alice','u1','alice@example.com',1,2);
                     INSERT INTO plans(id,account,target_page_id,created_at) VALUES(1,'alice','t',3);
                     INSERT INTO notebooks(account,id,name,position,scanned_at)
                       VALUES('alice','nb','NB',0,4);
                     INSERT INTO sections(account,id,notebook_id,name,position,scanned_at)
                       VALUES('alice','s','nb','S',0,4);
                     INSERT INTO pages(account,id,section_id,title,\"order\",scanned_at)
                       VALUES('alice','p','s','P',0,4);
                     INSERT INTO notion_items(account,item_id,kind,parent_notion_id,title,updated_at)
                       VALUES('alice','p','page','t','P',5);
                     INSERT INTO sources(account,kind,id,name,discovered_at)
                       VALUES('alice','group','g','G',6);",
                )
            })
            .unwrap();
        }
        let db = Db::open(&p).unwrap();
        let gone = [
            ("accounts", "created_at"),
            ("plans", "created_at"),
            ("notebooks", "scanned_at"),
            ("section_groups", "scanned_at"),
            ("sections", "scanned_at"),
            ("pages", "scanned_at"),
            ("notion_items", "updated_at"),
            ("sources", "discovered_at"),
        ];
        for (table, column) in gone {
            let (columns, rows): (i64, i64) = db
                .read("check", |c| {
                    let columns = c.query_row(
                        &format!(
                            "SELECT count(*) FROM pragma_table_info('{table}') WHERE name = ?1"
                        ),
                        [column],
                        |r| r.get(0),
                    )?;
                    let rows =
                        c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))?;
                    Ok((columns, rows))
                })
                .unwrap();
            assert_eq!(columns, 0, "{table}.{column}");
            let want = i64::from(table != "section_groups");
            assert_eq!(rows, want, "{table} keeps its rows");
        }
        assert_eq!(db.account("alice").unwrap().unwrap().updated_at, 2);
    }

    #[test]
    fn a_failed_transaction_changes_nothing() {
        let t = tempfile::tempdir().unwrap();
        let db = Db::open(&t.path().join("s.db")).unwrap();
        let r: Result<()> = db.write("half", |tx| {
            tx.execute(
                "INSERT INTO accounts(name,user_id,user_principal_name,updated_at)
                 VALUES('a','u','a@x',1)",
                [],
            )?;
            tx.execute("INSERT INTO nonexistent VALUES(1)", [])?;
            Ok(())
        });
        assert!(r.is_err());
        let n: i64 = db
            .read("count", |c| {
                c.query_row("SELECT count(*) FROM accounts", [], |r| r.get(0))
            })
            .unwrap();
        assert_eq!(n, 0);
    }
}
