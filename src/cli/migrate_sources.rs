//! `migrate --group`, `--site` and `--all-sources`: the sources are named and found as `scan`
//! finds them (same names, same errors), each is scanned in the foreground, gets its one Notion page
//! under the target ("Design (SharePoint site)"), and its notebooks are planned under its own
//! inventory key beneath that page, laid out as the account's own are.

use std::sync::Arc;

use super::migrate::{plan_key, MigrateArgs, Planned};
use super::output::Printer;
use super::scan::{record_scan_cost, save_result, ScanArgs};
use crate::cli::exit::CliError;
use crate::clock::Clock;
use crate::graph::scan::{scan_at, ScanProgress, ScanResult};
use crate::graph::sources::{explain, Source, SourceKind};
use crate::graph::{Caller, GraphClient};
use crate::notion::client::NotionClient;
use crate::queue::source_page;
use crate::store::jobs::RunToken;
use crate::store::Db;

/// What planning the sources of one account needs.
pub(super) struct Planning<'a> {
    pub printer: &'a Printer,
    pub db: &'a Arc<Db>,
    pub graph: &'a GraphClient,
    pub notion: &'a NotionClient,
    /// The signed-in account, in the foreground lane.
    pub who: &'a Caller,
    /// The Notion page everything goes under.
    pub target: &'a str,
    pub clock: &'a Clock,
    /// `--update`: plan rewrites of pages changed since they were migrated.
    pub update: bool,
    /// The run lock's token, which every write presents; `None` for `--dry-run` (preview only; no
    /// source page is created).
    pub owner: Option<&'a RunToken>,
}

impl Planning<'_> {
    /// Finds, scans and plans every source the flags name. A source that cannot be listed at all
    /// (a library over 5,000 items, a group left since discovery) is reported and counted; the
    /// others are planned regardless.
    pub(super) async fn plan(&self, args: &MigrateArgs) -> anyhow::Result<Planned> {
        let account = self.who.account.clone();
        let selection = ScanArgs {
            account: account.clone(),
            notebooks: args.notebooks.clone(),
            groups: args.groups.clone(),
            sites: args.sites.clone(),
            all_sources: args.all_sources,
        };
        let (sources, problems) =
            super::scan_sources::select(self.printer, self.db, self.graph, self.who, &selection)
                .await?;
        let mut unreadable = problems.len();
        for p in &problems {
            self.printer.problem(p.to_string());
        }
        // Everything is scanned before anything is planned: a --notebook that matches nothing
        // stops the command with nothing planned or created.
        let meter = self.graph.limiter().scan_meter(&self.who.user_id);
        let mut scanned: Vec<(Source, ScanResult)> = Vec::new();
        for source in sources {
            self.printer
                .note(format!("scanning {}...", label(&account, &source)));
            let progress = Arc::new(ScanProgress::default());
            let result = scan_at(
                self.graph,
                self.who,
                &source.root(),
                &args.notebooks,
                progress,
            )
            .await
            .map_err(|e| explain(&account, &source, e));
            match result {
                Ok(r) => scanned.push((source, r)),
                Err(e) if e.is_source_failure() => {
                    unreadable += 1;
                    self.printer
                        .problem(format!("{e} (nothing of it was planned)"));
                }
                Err(e) => return Err(e.into()),
            }
        }
        record_scan_cost(meter);
        for w in &args.notebooks {
            let found = scanned
                .iter()
                .any(|(_, r)| r.notebooks.iter().any(|n| &n.id == w || &n.name == w));
            if !found {
                return Err(CliError::usage(format!(
                    "account {account} has no notebook named or with id {w:?} in the sources \
                     named (run `notebridge scan --account {account} --all-sources` to list them); \
                     nothing was planned"
                ))
                .into());
            }
        }
        let mut planned = Planned {
            unreadable_sources: unreadable,
            ..Planned::default()
        };
        for (source, result) in &scanned {
            let key = source.inventory_key(&account);
            let now = self.clock.now_ms();
            save_result(self.db, &key, !args.notebooks.is_empty(), result, now)?;
            if source.kind != SourceKind::Personal && result.notebooks.is_empty() {
                // No page for a team with nothing selected in it.
                continue;
            }
            let under = self.page_of(source, &key).await?;
            let left = plan_key(
                self.printer,
                self.db,
                &key,
                &label(&account, source),
                &under,
                result,
                self.clock,
                self.update,
                self.owner,
            )?;
            planned.left.pages += left.pages;
            planned.left.containers += left.containers;
        }
        Ok(planned)
    }

    /// The Notion page a source's notebooks go under: the target for the account's own, the
    /// group's or site's page (made once) otherwise. A dry run creates nothing and previews
    /// under the target.
    async fn page_of(&self, source: &Source, key: &str) -> anyhow::Result<String> {
        if source.kind == SourceKind::Personal || self.owner.is_none() {
            return Ok(self.target.to_owned());
        }
        if let Some(earlier) = self.db.notion_item(key, source_page::SOURCE_ITEM)? {
            if earlier.parent_notion_id != self.target {
                self.printer.note(format!(
                    "{}: its page was made under Notion page {} by an earlier migration; its \
                     notebooks stay under it",
                    source.label(),
                    earlier.parent_notion_id
                ));
            }
        }
        // A dry run returned above: only a run holding the lock makes a source's page.
        let owner = self.owner.expect("a dry run creates no source page");
        Ok(source_page::ensure(
            self.db,
            owner,
            self.notion,
            key,
            self.target,
            &source.notion_title(),
        )
        .await?)
    }
}

/// A source in messages: the account's name for its own notebooks, else the account and the
/// group or site.
fn label(account: &str, source: &Source) -> String {
    match source.kind {
        SourceKind::Personal => account.to_owned(),
        _ => format!("{account}, {}", source.label()),
    }
}
