//! `notebridge scan`: the account's notebooks in the foreground lane, stored in the inventory and
//! printed as a tree (or the contract's JSON document).

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use serde_json::json;

use super::output::Printer;
use super::progress::{Frame, Ticker};
use crate::cli::exit::{CliResult, Exit};
use crate::clock::{Clock, Jitter};
use crate::engine::plan::{record_scan_cost, store_scan, Picks};
use crate::graph::scan::{scan, ScanProgress};
use crate::graph::{Caller, GraphClient};
use crate::limiter::Lane;
use crate::settings::Settings;
use crate::store::inventory::totals;
use crate::store::Db;

/// Arguments of `scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// The signed-in account to scan.
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub account: String,
    /// Only these notebooks (name or id); repeat for several. With --group, --site or
    /// --all-sources it picks among the notebooks of every source scanned.
    #[arg(long = "notebook", value_name = "NAME_OR_ID")]
    pub notebooks: Vec<String>,
    /// A Microsoft 365 group's notebooks (its display name or id); repeat for several. Needs the
    /// delegated permission Notes.Read.All.
    #[arg(long = "group", value_name = "NAME_OR_ID")]
    pub groups: Vec<String>,
    /// A SharePoint site's notebooks (its URL, e.g. https://contoso.sharepoint.com/sites/Design, or
    /// its Graph id); repeat for several. Needs Notes.Read.All; a URL also Sites.Read.All.
    #[arg(long = "site", value_name = "URL_OR_ID")]
    pub sites: Vec<String>,
    /// The account's own notebooks and those of every group and followed site that holds any.
    #[arg(long)]
    pub all_sources: bool,
    /// OneNote's own files instead of an account, offline: a section file (.one), a notebook's
    /// table of contents (.onetoc2) or its folder, or a notebook package (.onepkg).
    #[arg(
        long = "from",
        value_name = "PATH",
        conflicts_with_all = ["account", "notebooks", "groups", "sites", "all_sources"]
    )]
    pub from: Option<std::path::PathBuf>,
}

impl ScanArgs {
    /// Whether groups or sites are asked for (otherwise only the account's own notebooks).
    pub fn team(&self) -> bool {
        !self.groups.is_empty() || !self.sites.is_empty() || self.all_sources
    }
}

/// Runs the scan.
pub fn run(settings: &Settings, printer: &Printer, args: ScanArgs) -> CliResult<Exit> {
    let db = Arc::new(Db::open(&settings.db_path)?);
    super::runtime()?.block_on(async {
        let clock = Clock::system();
        let graph = GraphClient::open(db.clone(), settings, clock.clone(), Jitter::from_entropy())?;
        let who = Caller::for_account(&db, &args.account, Lane::Foreground)?;
        let started = Instant::now();
        let progress = Arc::new(ScanProgress::default());
        let ticker = {
            let (p, g) = (progress.clone(), graph.clone());
            let names = super::progress::AccountNames::load(&db);
            Ticker::start(
                printer,
                "scan",
                Duration::from_secs(10),
                Arc::new(move || {
                    Frame {
                        done: p.sections_done.load(Ordering::Relaxed),
                        total: Some(p.sections_total.load(Ordering::Relaxed)),
                        unit: "sections listed",
                        eta: None,
                        waiting: g
                            .reachability()
                            .waiting()
                            .or_else(|| names.current_wait(g.limiter())),
                        details: vec![
                            format!("{} items found", p.items.load(Ordering::Relaxed)),
                            format!("{} requests", g.counts().requests),
                        ],
                    }
                }),
            )
        };
        let meter = graph.limiter().scan_meter(&who.user_id);
        if args.team() {
            let picks = Picks {
                notebooks: args.notebooks.clone(),
                groups: args.groups.clone(),
                sites: args.sites.clone(),
                all_sources: args.all_sources,
                own: false,
            };
            let done = super::scan_sources::run(
                printer,
                &db,
                &graph,
                &who,
                &picks,
                progress,
                &clock,
            )
            .await;
            ticker.finish();
            record_scan_cost(meter).await;
            return done;
        }
        let result = scan(&graph, &who, &args.notebooks, progress).await;
        ticker.finish();
        let mut result = result?;
        record_scan_cost(meter).await;
        result.note_listed_empty();

        let diff = store_scan(&db, &args.account, &args.notebooks, &result, clock.now_ms())?;
        let t = totals(&result.notebooks);
        let requests = graph.counts().requests;
        if printer.json {
            printer.json_line(&json!({
                "account": args.account,
                "notebooks": result.notebooks,
                "totals": t,
            }));
        } else {
            for nb in &result.notebooks {
                super::tree::print_tree(printer, nb);
            }
            printer.out(format!(
                "{} notebooks, {} section groups, {} sections, {} pages",
                t.notebooks, t.section_groups, t.sections, t.pages
            ));
        }
        printer.note(format!(
            "scanned {} in {:.1}s with {requests} Graph requests ({} throttled); {} new, {} renamed, \
             {} moved, {} deleted since the last scan",
            args.account,
            started.elapsed().as_secs_f64(),
            graph.counts().throttled,
            diff.new,
            diff.renamed,
            diff.moved,
            diff.deleted
        ));
        for n in &result.notes {
            printer.note(n.clone());
        }
        for f in &result.failures {
            printer.problem(f.to_string());
        }
        Ok(if result.failures.is_empty() {
            Exit::Done
        } else {
            Exit::SomeFailed
        })
    })
}
