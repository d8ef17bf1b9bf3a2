//! Planning one account: scan what the run selects (foreground lane), store the inventory, and put
//! every selected page that is not migrated yet into the job queue. With `--group`, `--site` or
//! `--all-sources` the sources are found as `scan` finds them (same names, same errors), each is
//! scanned, gets its one Notion page under the target ("Design (SharePoint site)"), and its
//! notebooks are planned under its own inventory key beneath that page.

use std::sync::Arc;

use super::events::{Event, Observer};
use super::way::Via;
use crate::clock::{Clock, UnixMillis};
use crate::drive::{DriveClient, DriveError};
use crate::failure::{Class, Classify, Meaning, Next, Scope};
use crate::graph::scan::{scan, scan_at, ScanProgress, ScanResult};
use crate::graph::sources::{
    discover, explain, find_group, find_site, Source, SourceError, SourceKind,
};
use crate::graph::{Caller, GraphClient, GraphError};
use crate::imports;
use crate::limiter::{Lane, ScanMeter};
use crate::notion::client::NotionClient;
use crate::queue::{source_page, RunError};
use crate::store::imports::is_files_key;
use crate::store::inventory::{ScanDiff, ScanScope};
use crate::store::jobs::Remaining;
use crate::store::jobs::RunToken;
use crate::store::layouts::Layout;
use crate::store::ways::FilesLeft;
use crate::store::{Db, StoreError};

/// What a run takes from OneNote: the account's own notebooks, or those of the sources named.
#[derive(Clone, Debug, Default)]
pub struct Picks {
    /// Only these notebooks (name or id); with sources, among the notebooks of all of them.
    pub notebooks: Vec<String>,
    /// Microsoft 365 groups (display name or id).
    pub groups: Vec<String>,
    /// SharePoint sites (URL or Graph id).
    pub sites: Vec<String>,
    /// The account's own notebooks and every group's and followed site's that holds any.
    pub all_sources: bool,
    /// The account's own notebooks too, beside the groups and sites named (`sync` of an account
    /// whose plans went to both).
    pub own: bool,
}

impl Picks {
    /// Whether groups or sites are asked for (otherwise only the account's own notebooks).
    pub fn team(&self) -> bool {
        !self.groups.is_empty() || !self.sites.is_empty() || self.all_sources
    }
}

/// Why planning could not be done.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    /// The state database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Graph failed beyond what one item's failure covers (a sign-in, the limiter).
    #[error(transparent)]
    Graph(#[from] GraphError),
    /// A group or site could not be found or read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// A group's or site's Notion page could not be made.
    #[error(transparent)]
    SourcePage(#[from] RunError),
    /// The plan could not be written.
    #[error("planning")]
    Planning(#[source] StoreError),
    /// OneNote's own files could not be read at all (not OneNote, none in a folder, gone).
    #[error(transparent)]
    Files(#[from] imports::ImportError),
    /// An import key with no path recorded (a database edited by hand).
    #[error("no path is recorded for the import {0}; run `notebridge migrate --from PATH` again")]
    UnknownImport(String),
    /// Finding a notebook's section files met a failure that is the run's (a sign-in, an outage,
    /// a throttle longer than the time left).
    #[error(transparent)]
    Drive(DriveError),
    /// The target was planned with another layout (a target is laid out one way).
    #[error(
        "the Notion page {target} was planned with --layout {recorded}; it cannot be laid out as \
         {asked} as well (run again with --layout {recorded}, or migrate to another page)"
    )]
    Layout {
        /// The target page.
        target: String,
        /// The layout recorded with its plan.
        recorded: Layout,
        /// The layout asked for now.
        asked: Layout,
    },
    /// A `--notebook` that the account does not have.
    #[error(
        "account {account} has no notebook named or with id {name:?} (run `notebridge scan \
         --account {account}` to list them)"
    )]
    NoNotebook {
        /// The account scanned.
        account: String,
        /// The name or id asked for.
        name: String,
    },
    /// A `--notebook` that none of the sources named has; nothing was planned.
    #[error(
        "account {account} has no notebook named or with id {name:?} in the sources named (run \
         `notebridge scan --account {account} --all-sources` to list them); nothing was planned"
    )]
    NoNotebookInSources {
        /// The account.
        account: String,
        /// The name or id asked for.
        name: String,
    },
}

impl Classify for PlanError {
    fn class(&self) -> Class {
        match self {
            PlanError::Store(e) | PlanError::Planning(e) => e.class(),
            PlanError::Graph(e) => e.class(),
            PlanError::Source(e) => e.class(),
            PlanError::SourcePage(e) => e.class(),
            PlanError::Files(e) => e.class(),
            PlanError::Drive(e) => e.class(),
            PlanError::UnknownImport(_) => {
                Class::new(Scope::Run, Next::Never).means(Meaning::Usage)
            }
            PlanError::Layout { .. } => Class::new(Scope::Run, Next::Never).means(Meaning::Usage),
            PlanError::NoNotebook { .. } | PlanError::NoNotebookInSources { .. } => {
                Class::new(Scope::Run, Next::Never).means(Meaning::Usage)
            }
        }
    }
}

/// The note for a folder (a section group) a notebook's table of contents names that is not on
/// disk: nothing of it can be read, by this run or a later one, so it is said and not failed.
pub fn missing_folder_note(path: &std::path::Path) -> String {
    format!(
        "the notebook's table of contents names the folder {}, which is not there: nothing of it \
         is migrated (put the folder back and run `notebridge migrate --from` again to add it)",
        path.display()
    )
}

/// The note for a table of contents that cannot be read: what stood in for it, and what that
/// costs.
pub fn unreadable_toc_note(toc: &crate::onefile::UnreadableToc) -> String {
    format!(
        "the table of contents {} cannot be read ({}): the notebook's sections were taken from its \
         folder, in the folder's order and under an id derived from the folder's path (repair the notebook \
         in OneNote and export it again to keep OneNote's order)",
        toc.path.display(),
        toc.reason
    )
}

/// What planning one account left: its work, and how many groups or sites could not be read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Planned {
    /// Work queued for the account (its groups' and sites' included); in a dry run, what would be.
    pub left: Remaining,
    /// Sources that could not be listed at all (nothing of them was planned).
    pub unreadable_sources: usize,
    /// What of `left` is read from section files (`--via`).
    pub files: FilesLeft,
}

/// Everything planning one account needs.
pub(super) struct Planner<'a> {
    pub db: &'a Arc<Db>,
    pub graph: &'a GraphClient,
    pub notion: &'a NotionClient,
    pub clock: &'a Clock,
    pub picks: &'a Picks,
    /// The Notion page everything goes under.
    pub target: String,
    /// `--update`: plan rewrites of pages changed since they were migrated.
    pub update: bool,
    /// The run lock's token, which every write presents; `None` for `--dry-run` (preview only:
    /// nothing is written to the queue or to Notion).
    pub owner: Option<&'a RunToken>,
    pub observer: &'a dyn Observer,
    /// How page content is read (`--via`).
    pub via: Via,
    /// Finds notebooks' section files (`--via files` and `auto`).
    pub drive: &'a DriveClient,
    /// How the target is laid out in Notion (`--layout`); recorded with its first plan. `None`:
    /// as recorded, or [`Layout::Pages`] for a target never planned.
    pub layout: Option<Layout>,
    /// What each key's plan recognised as moved (`store::moves`), by key, for the run's summary.
    pub moves: &'a std::sync::Mutex<Vec<(String, crate::store::moves::Moves)>>,
}

impl Planner<'_> {
    /// Scans `account` (foreground), stores the inventory and plans its selected notebooks, or
    /// its sources'.
    pub(super) async fn plan(&self, account: &str) -> Result<Planned, PlanError> {
        if is_files_key(account) {
            return self.plan_files(account).await;
        }
        let who = Caller::of_account(self.db, account, Lane::Foreground).await?;
        if self.picks.team() {
            return self.plan_sources(&who).await;
        }
        self.observer.event(Event::Scanning {
            label: account.to_owned(),
        });
        let notebooks = &self.picks.notebooks;
        let meter = self.graph.limiter().scan_meter(&who.user_id);
        let mut result = scan(
            self.graph,
            &who,
            notebooks,
            Arc::new(ScanProgress::default()),
        )
        .await?;
        record_scan_cost(meter).await;
        check_wanted(account, notebooks, &result)?;
        let from_files = self.read_listed_empty(&who, account, &mut result).await?;
        let now = self.clock.now_ms();
        save_off(self.db, account, !notebooks.is_empty(), &result, now).await?;
        for n in result.notes.iter().chain(&from_files.notes) {
            self.observer.event(Event::Note(format!("{account}: {n}")));
        }
        self.record_unconfirmed(account, &result, &from_files)
            .await?;
        let ways = self
            .plan_ways(&who, account, account, &result.notebooks, &from_files.ways)
            .await?;
        let left = self
            .plan_key(account, account, &self.target, &Found::of_scan(&result))
            .await?;
        let files = self.files_left(account, ways).await?;
        Ok(Planned {
            left,
            unreadable_sources: 0,
            files,
        })
    }

    /// Reads the files of the import with inventory key `key` again (no account, no network),
    /// stores what they hold with where each section is, and plans it under the target. A section
    /// that cannot be read is planned and failed with the reader's reason; the rest goes on.
    async fn plan_files(&self, key: &str) -> Result<Planned, PlanError> {
        let k = key.to_owned();
        let path = self
            .db
            .call(move |db| db.import_path(&k))
            .await?
            .ok_or_else(|| PlanError::UnknownImport(key.to_owned()))?;
        self.observer.event(Event::Scanning {
            label: path.clone(),
        });
        let read = imports::read(std::path::Path::new(&path)).await?;
        let inv = imports::Inventory::of(&read);
        let notes: Vec<String> = read
            .missing_folders
            .iter()
            .map(|p| missing_folder_note(p))
            .chain(read.unreadable_tocs.iter().map(unreadable_toc_note))
            .collect();
        let (k, stored, now) = (key.to_owned(), inv.clone(), self.clock.now_ms());
        let kept = notes.clone();
        self.db
            .call(move |db| {
                imports::store(db, &k, &stored, now)?;
                db.save_import_notes(&k, &kept)
            })
            .await?;
        if let Some(bin) = &read.recycle_bin {
            self.observer
                .event(Event::Note(imports::recycle_bin_note(bin)));
        }
        for n in notes {
            self.observer.event(Event::Note(n));
        }
        let found = Found {
            notebooks: &inv.notebooks,
            unread: inv
                .problems
                .iter()
                .map(|p| Unread {
                    kind: "section",
                    id: p.section_id.clone(),
                    message: p.to_string(),
                    reason: p.to_string(),
                })
                .collect(),
            loose: inv.loose.then_some(imports::LOOSE_NOTEBOOK),
        };
        let left = self.plan_key(key, &path, &self.target, &found).await?;
        Ok(Planned {
            left,
            unreadable_sources: 0,
            files: FilesLeft::default(),
        })
    }

    /// Finds, scans and plans every source the picks name. A source that cannot be listed at all
    /// (a library over 5,000 items, a group left since discovery) is reported and counted; the
    /// others are planned regardless.
    async fn plan_sources(&self, who: &Caller) -> Result<Planned, PlanError> {
        let account = who.account.clone();
        let (sources, problems) =
            select(self.observer, self.db, self.graph, who, self.picks).await?;
        let mut unreadable = problems.len();
        for p in &problems {
            self.observer.event(Event::Problem(p.to_string()));
        }
        // Everything is scanned before anything is planned: a --notebook that matches nothing
        // stops the command with nothing planned or created.
        let meter = self.graph.limiter().scan_meter(&who.user_id);
        let mut scanned: Vec<(Source, ScanResult)> = Vec::new();
        for source in sources {
            self.observer.event(Event::Scanning {
                label: label(&account, &source),
            });
            let progress = Arc::new(ScanProgress::default());
            let result = scan_at(
                self.graph,
                who,
                &source.root(),
                &self.picks.notebooks,
                progress,
            )
            .await
            .map_err(|e| explain(&account, &source, e));
            match result {
                Ok(r) => scanned.push((source, r)),
                Err(e) if e.is_source_failure() => {
                    unreadable += 1;
                    self.observer
                        .event(Event::Problem(format!("{e} (nothing of it was planned)")));
                }
                Err(e) => return Err(e.into()),
            }
        }
        record_scan_cost(meter).await;
        for w in &self.picks.notebooks {
            let found = scanned
                .iter()
                .any(|(_, r)| r.notebooks.iter().any(|n| &n.id == w || &n.name == w));
            if !found {
                return Err(PlanError::NoNotebookInSources {
                    account,
                    name: w.clone(),
                });
            }
        }
        let mut planned = Planned {
            unreadable_sources: unreadable,
            ..Planned::default()
        };
        for (source, result) in &mut scanned {
            let key = source.inventory_key(&account);
            let from_files = self.read_listed_empty(who, &key, result).await?;
            let now = self.clock.now_ms();
            save_off(self.db, &key, !self.picks.notebooks.is_empty(), result, now).await?;
            for n in result.notes.iter().chain(&from_files.notes) {
                let shown = label(&account, source);
                self.observer.event(Event::Note(format!("{shown}: {n}")));
            }
            self.record_unconfirmed(&key, result, &from_files).await?;
            if source.kind != SourceKind::Personal && result.notebooks.is_empty() {
                // No page for a team with nothing selected in it.
                continue;
            }
            let under = self.page_of(source, &key).await?;
            let shown = label(&account, source);
            let ways = self
                .plan_ways(who, &key, &shown, &result.notebooks, &from_files.ways)
                .await?;
            let left = self
                .plan_key(&key, &shown, &under, &Found::of_scan(result))
                .await?;
            planned.left.pages += left.pages;
            planned.left.containers += left.containers;
            let files = self.files_left(&key, ways).await?;
            planned.files.pages += files.pages;
            planned.files.sections += files.sections;
            planned.files.bytes += files.bytes;
        }
        Ok(planned)
    }

    /// The Notion page a source's notebooks go under: the target for the account's own, the
    /// group's or site's page (made once) otherwise. A dry run creates nothing and previews
    /// under the target.
    async fn page_of(&self, source: &Source, key: &str) -> Result<String, PlanError> {
        let Some(owner) = self.owner.filter(|_| source.kind != SourceKind::Personal) else {
            return Ok(self.target.clone());
        };
        let k = key.to_owned();
        let earlier = self
            .db
            .call(move |db| db.notion_item(&k, source_page::SOURCE_ITEM))
            .await?;
        if let Some(earlier) = earlier {
            if earlier.parent_notion_id != *self.target {
                self.observer.event(Event::SourcePageElsewhere {
                    source: source.label(),
                    parent: earlier.parent_notion_id,
                });
            }
        }
        Ok(source_page::ensure(
            self.db,
            owner,
            self.notion,
            key,
            &self.target,
            &source.notion_title(),
        )
        .await?)
    }

    /// Records the layout with the target's first plan (a dry run only reads it) and returns the
    /// layout the target is planned with; a target planned with another than the one asked for is
    /// [`PlanError::Layout`].
    async fn check_layout(&self, target: &str) -> Result<Layout, PlanError> {
        let (t, asked, now, real) = (
            target.to_owned(),
            self.layout,
            self.clock.now_ms(),
            self.owner.is_some(),
        );
        let recorded = self
            .db
            .call(move |db| {
                let recorded = db.layout_of(&t)?;
                if real && recorded.is_none() {
                    db.record_layout(&t, asked.unwrap_or_default(), now)?;
                }
                Ok::<_, crate::store::StoreError>(recorded)
            })
            .await?;
        match (recorded, self.layout) {
            (Some(recorded), Some(asked)) if recorded != asked => Err(PlanError::Layout {
                target: target.to_owned(),
                recorded,
                asked,
            }),
            (Some(recorded), _) => Ok(recorded),
            (None, asked) => Ok(asked.unwrap_or_default()),
        }
    }

    /// Plans what a scan found under one inventory key (an account's own, or a group's or site's)
    /// beneath the Notion page `target`; `label` names it in events. Returns what is left of the
    /// key's work (in a dry run, what would be). The store's work runs off the runtime
    /// ([`Db::call`]) and the events are sent from here, after each step's answer: the observer
    /// is not the store's to call.
    async fn plan_key(
        &self,
        key: &str,
        label: &str,
        target: &str,
        result: &Found<'_>,
    ) -> Result<Remaining, PlanError> {
        let now = self.clock.now_ms();
        let (k, t) = (key.to_owned(), target.to_owned());
        self.check_layout(target).await?;
        let notebooks = result.notebooks.to_vec();
        let Some(owner) = self.owner else {
            let (planned, left) = self
                .db
                .call(move |db| db.preview_plan(&k, &t, &notebooks, now))
                .await?;
            for f in &result.unread {
                self.observer.event(Event::Problem(format!(
                    "{label}: {} (what is in it would not be planned)",
                    f.message
                )));
            }
            self.observer.event(Event::Planned {
                label: label.to_owned(),
                added: planned.added.saturating_sub(1),
                already: planned.already_planned,
                rewrites: None,
                preview: true,
            });
            return Ok(left);
        };
        // Items keep the Notion page they were first planned under; say so when that is not `--to`.
        let targets = {
            let k = k.clone();
            self.db.call(move |db| db.plan_targets(&k)).await?
        };
        let earlier: Vec<String> = targets.into_iter().filter(|t| t != target).collect();
        if !earlier.is_empty() {
            self.observer.event(Event::EarlierTarget {
                label: label.to_owned(),
                earlier,
                target: target.to_owned(),
            });
        }
        // A page that came back under a new id is the page already written: its records follow
        // it before anything is planned for the new id.
        let moves = {
            let (k, owner) = (k.clone(), owner.clone());
            self.db
                .call(move |db| db.rekey_moves(&owner, &k, now))
                .await?
        };
        if !moves.moved.is_empty() || !moves.recreated.is_empty() {
            self.moves
                .lock()
                .expect("moves poisoned")
                .push((k.clone(), moves));
        }
        let adopted = {
            let (k, t, owner, loose) = (k.clone(), t.clone(), owner.clone(), result.loose);
            let notebooks = notebooks.clone();
            self.db
                .call(move |db| {
                    if let Some(loose) = loose {
                        // Sections imported on their own go straight under the target: their
                        // notebook's page is the target itself.
                        imports::record_loose_notebook(db, &owner, &k, loose, &t)?;
                    }
                    // A page migrated another way (by Graph, or from files) is the same page:
                    // adopted, not created again.
                    db.adopt_migrated(&owner, &k, &notebooks)
                        .map_err(PlanError::Planning)
                })
                .await?
        };
        if adopted.pages > 0 {
            self.observer.event(Event::Note(format!(
                "{label}: {} pages ({} notebook/section pages) were migrated before from the same \
                 OneNote pages read another way; they are kept, not created again",
                adopted.pages, adopted.containers
            )));
        }
        let unread: Vec<(&'static str, String, String)> = result
            .unread
            .iter()
            .map(|f| (f.kind, f.id.clone(), f.reason.clone()))
            .collect();
        let update = self.update;
        let owner = owner.clone();
        let (planned, failed, rest) = self
            .db
            .call(move |db| {
                let planned = db
                    .create_plan(&owner, &k, &t, &notebooks, now)
                    .map_err(PlanError::Planning)?;
                crate::crash::point("engine.plan_created");
                // The scan records only failures of the item itself
                // ([`GraphError::is_item_failure`]).
                let class = Class::item_fails().code();
                let mut failed = 0;
                let rest = (|| {
                    for (kind, id, reason) in &unread {
                        failed += 1;
                        db.fail_planned_item(&owner, &k, kind, id, reason, &class, now)?;
                    }
                    let rewrites = if update {
                        Some(db.plan_rewrites(&owner, &k, now)?)
                    } else {
                        None
                    };
                    Ok::<_, StoreError>((rewrites, db.remaining_work(&k)?))
                })();
                Ok::<_, PlanError>((planned, failed, rest))
            })
            .await?;
        crate::crash::point("engine.planned");
        // What could not be listed is not silently left out: its job fails with the reason, so the
        // run ends with exit 4, `status` shows it, and the next `migrate --to` scans it again.
        for f in result.unread.iter().take(failed) {
            self.observer
                .event(Event::Problem(format!("{label}: {}", f.message)));
        }
        let (rewrites, left) = rest?;
        self.observer.event(Event::Planned {
            label: label.to_owned(),
            added: planned.added.saturating_sub(1),
            already: planned.already_planned,
            rewrites,
            preview: false,
        });
        Ok(left)
    }
}

/// What a read of one inventory key found, as planning takes it: the notebooks, the containers
/// whose contents could not be read, and the notebook that stands for sections imported on their
/// own (whose page is the target).
struct Found<'a> {
    notebooks: &'a [crate::store::inventory::Notebook],
    unread: Vec<Unread>,
    loose: Option<&'static str>,
}

/// A container whose contents could not be read: planned, and its job failed with the reason.
struct Unread {
    /// The job kind.
    kind: &'static str,
    /// Its inventory id.
    id: String,
    /// What the plan shows.
    message: String,
    /// What its job's failure says.
    reason: String,
}

impl<'a> Found<'a> {
    /// What a Graph scan found.
    fn of_scan(result: &'a ScanResult) -> Self {
        Found {
            notebooks: &result.notebooks,
            unread: result
                .failures
                .iter()
                .map(|f| match f.listed_empty {
                    true => {
                        let message = format!("{}: {}", f.label, f.error.reason());
                        Unread {
                            kind: f.kind,
                            id: f.id.clone(),
                            reason: format!(
                                "{message}; its pages were not planned (run `notebridge migrate \
                                 --resume --retry-failed` to read its section file again)"
                            ),
                            message,
                        }
                    }
                    false => Unread {
                        kind: f.kind,
                        id: f.id.clone(),
                        message: f.to_string(),
                        reason: format!(
                            "{f}; what is in it was not planned (run `notebridge migrate --to \
                             PAGE` again to re-scan)"
                        ),
                    },
                })
                .collect(),
            loose: None,
        }
    }
}

/// A source in events: the account's name for its own notebooks, else the account and the group
/// or site.
fn label(account: &str, source: &Source) -> String {
    match source.kind {
        SourceKind::Personal => account.to_owned(),
        _ => format!("{account}, {}", source.label()),
    }
}

/// The sources `picks` name for `who`: the account's own notebooks with `all_sources` (with every
/// group and followed site discovery finds), then each group and site, once each; and the sources
/// discovery found but could not list.
pub async fn select(
    observer: &dyn Observer,
    db: &Arc<Db>,
    graph: &GraphClient,
    who: &Caller,
    picks: &Picks,
) -> Result<(Vec<Source>, Vec<SourceError>), PlanError> {
    let account = &who.account;
    let mut out: Vec<Source> = Vec::new();
    let mut problems = Vec::new();
    if picks.all_sources {
        let d = discover(graph, who, account).await?;
        let (a, found) = (account.clone(), d.to_store());
        db.call(move |db| db.save_sources(&a, &found)).await?;
        if d.personal_account {
            observer.event(Event::NoTeams {
                account: account.clone(),
            });
        }
        if d.sites_need_permission {
            observer.event(Event::SitesNeedPermission {
                account: account.clone(),
            });
        }
        for f in d.found {
            match f.notebooks {
                Ok(_) => out.push(f.source),
                Err(e) => problems.push(e),
            }
        }
    }
    if picks.own && !picks.all_sources {
        out.push(Source::personal(&who.user_id, account));
    }
    for g in &picks.groups {
        let s = find_group(graph, who, g).await?;
        remember(db, account, &s).await?;
        out.push(s);
    }
    let known = {
        let a = account.clone();
        db.call(move |db| db.sources(&a)).await?
    };
    for s in &picks.sites {
        let mut s = find_site(graph, who, s).await?;
        // A site named by its id has no name of its own here (reading it by id needs only
        // Notes.Read.All); what discovery found names it.
        if s.url.is_none() {
            if let Some(k) = known
                .iter()
                .find(|k| k.source.kind == SourceKind::Site && k.source.id == s.id)
            {
                s = k.source.clone();
            }
        }
        remember(db, account, &s).await?;
        out.push(s);
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|s| seen.insert((s.kind, s.id.clone())));
    Ok((out, problems))
}

/// Remembers a group or site named on the command line for `account`, off the runtime.
async fn remember(db: &Arc<Db>, account: &str, source: &Source) -> Result<(), StoreError> {
    let (a, s) = (account.to_owned(), source.clone());
    db.call(move |db| db.remember_source(&a, &s)).await
}

/// Records what a finished scan cost: the foreground reserve the limiter keeps for the account's
/// next scan. A failure to record it costs only the reserve's accuracy.
pub async fn record_scan_cost(meter: ScanMeter) {
    match meter.finish().await {
        Ok(n) => tracing::debug!(requests = n, "scan cost recorded"),
        Err(e) => tracing::warn!(error = %e, "could not record the scan's cost"),
    }
}

/// Stores what a scan of `account` found. Every notebook asked for by name or id must be there.
/// Deletions are inferred only from a complete listing: never from one that had failures, and only
/// inside the notebooks scanned.
pub fn store_scan(
    db: &Db,
    account: &str,
    wanted: &[String],
    result: &ScanResult,
    now: UnixMillis,
) -> Result<ScanDiff, PlanError> {
    check_wanted(account, wanted, result)?;
    Ok(save_result(db, account, !wanted.is_empty(), result, now)?)
}

/// Every notebook asked for by name or id is in what the scan of `account` found.
fn check_wanted(account: &str, wanted: &[String], result: &ScanResult) -> Result<(), PlanError> {
    for w in wanted {
        if !result.notebooks.iter().any(|n| &n.id == w || &n.name == w) {
            return Err(PlanError::NoNotebook {
                account: account.to_owned(),
                name: w.clone(),
            });
        }
    }
    Ok(())
}

/// [`save_result`] from async code: a copy of what the store keeps is written off the runtime.
async fn save_off(
    db: &Arc<Db>,
    key: &str,
    filtered: bool,
    result: &ScanResult,
    now: UnixMillis,
) -> Result<ScanDiff, StoreError> {
    let key = key.to_owned();
    let scope = scan_scope(filtered, result);
    let notebooks = result.notebooks.clone();
    let guids = result.page_guids.clone();
    let urls = result.notebook_urls.clone();
    db.call(move |db| {
        let diff = db.save_scan(&key, &notebooks, &scope, now)?;
        db.save_page_guids(&key, &guids)?;
        db.save_notebook_urls(&key, &urls)?;
        Ok(diff)
    })
    .await
}

/// Stores a scan's result under an inventory key (an account, or a group's or site's key).
pub fn save_result(
    db: &Db,
    key: &str,
    filtered: bool,
    result: &ScanResult,
    now: UnixMillis,
) -> Result<ScanDiff, StoreError> {
    let scope = scan_scope(filtered, result);
    let diff = db.save_scan(key, &result.notebooks, &scope, now)?;
    db.save_page_guids(key, &result.page_guids)?;
    db.save_notebook_urls(key, &result.notebook_urls)?;
    // The report, `status` and the run's summary name them, as they do an import's.
    db.save_import_notes(key, &result.notes)?;
    Ok(diff)
}

/// What deletions a scan's result may show: none after failures, only inside the notebooks
/// scanned when they were picked.
fn scan_scope(filtered: bool, result: &ScanResult) -> ScanScope {
    if !result.failures.is_empty() {
        ScanScope::Notebooks(Vec::new())
    } else if !filtered {
        ScanScope::All
    } else {
        ScanScope::Notebooks(result.notebooks.iter().map(|n| n.id.clone()).collect())
    }
}
