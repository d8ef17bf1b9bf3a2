//! `scan --group`, `--site` and `--all-sources`: the notebooks of Microsoft 365 groups and
//! SharePoint sites, scanned like the account's own (same API, same budget, same inventory rules),
//! each stored under its source's own inventory key.

use std::sync::Arc;

use serde_json::{json, Value};

use super::output::Printer;
use super::tree::print_tree;
use crate::cli::exit::{CliError, CliResult, Exit};
use crate::clock::Clock;
use crate::engine::plan::{save_result, select, Picks};
use crate::graph::scan::{scan_at, ScanProgress, ScanResult};
use crate::graph::sources::{explain, Source, SourceError, SourceKind};
use crate::graph::{Caller, GraphClient};
use crate::store::inventory::{totals, Totals};
use crate::store::Db;

/// One source's scan, or why it could not be read.
struct Scanned {
    source: Source,
    result: Result<ScanResult, SourceError>,
}

/// Scans and stores every selected source, prints the tree or the contract's document, and returns
/// exit 4 when a source or an item in one could not be read (the others are scanned regardless).
pub(super) async fn run(
    printer: &Printer,
    db: &Arc<Db>,
    graph: &GraphClient,
    who: &Caller,
    picks: &Picks,
    progress: Arc<ScanProgress>,
    clock: &Clock,
) -> CliResult<Exit> {
    let notes = super::progress::Notes(printer);
    let (sources, problems) = select(&notes, db, graph, who, picks).await?;
    let mut scanned = Vec::new();
    for source in sources {
        let result = scan_at(
            graph,
            who,
            &source.root(),
            &picks.notebooks,
            progress.clone(),
        )
        .await
        .map(|mut r| {
            r.note_listed_empty();
            r
        })
        .map_err(|e| explain(&who.account, &source, e));
        match result {
            Err(e) if !e.is_source_failure() => return Err(e.into()),
            result => scanned.push(Scanned { source, result }),
        }
    }
    // Every --notebook must be somewhere among what was scanned.
    for w in &picks.notebooks {
        let found = scanned.iter().any(|s| {
            s.result
                .as_ref()
                .is_ok_and(|r| r.notebooks.iter().any(|n| &n.id == w || &n.name == w))
        });
        if !found {
            return Err(CliError::usage(format!(
                "account {} has no notebook named or with id {w:?} in the sources scanned (run \
                 `notebridge scan --account {} --all-sources` to list them)",
                who.account, who.account
            ))
            .into());
        }
    }
    let mut failures = 0usize;
    let mut all = Totals::default();
    let mut doc_groups: Vec<Value> = Vec::new();
    let mut doc_sites: Vec<Value> = Vec::new();
    let mut doc_own: Value = json!([]);
    for s in &scanned {
        let key = s.source.inventory_key(&who.account);
        match &s.result {
            Ok(r) => {
                save_result(db, &key, !picks.notebooks.is_empty(), r, clock.now_ms())?;
                let t = totals(&r.notebooks);
                all.notebooks += t.notebooks;
                all.section_groups += t.section_groups;
                all.sections += t.sections;
                all.pages += t.pages;
                failures += r.failures.len();
                for f in &r.failures {
                    printer.problem(format!("{}: {f}", s.source.label()));
                }
            }
            Err(e) => {
                failures += 1;
                printer.problem(e.to_string());
            }
        }
        let notebooks = match &s.result {
            Ok(r) => json!(r.notebooks),
            Err(_) => json!([]),
        };
        let mut entry = json!({"id": s.source.id, "name": s.source.name, "notebooks": notebooks});
        if let Err(e) = &s.result {
            entry["problem"] = json!(e.to_string());
        }
        match s.source.kind {
            SourceKind::Personal => doc_own = notebooks,
            SourceKind::Group => doc_groups.push(entry),
            SourceKind::Site => {
                entry["url"] = json!(s.source.url);
                doc_sites.push(entry)
            }
        }
        if !printer.json {
            let heading = match s.source.kind {
                SourceKind::Personal => format!("{} (own notebooks)", who.account),
                _ => s.source.notion_title(),
            };
            printer.out(format!("== {heading}"));
            if let Ok(r) = &s.result {
                for nb in &r.notebooks {
                    print_tree(printer, nb);
                }
            }
        }
    }
    for p in &problems {
        printer.problem(p.to_string());
    }
    failures += problems.len();
    if printer.json {
        printer.json_line(&json!({
            "account": who.account,
            "notebooks": doc_own,
            "groups": doc_groups,
            "sites": doc_sites,
            "totals": all,
        }));
    } else {
        printer.out(format!(
            "{} notebooks, {} section groups, {} sections, {} pages in {} sources",
            all.notebooks,
            all.section_groups,
            all.sections,
            all.pages,
            scanned.len()
        ));
    }
    printer.note(format!(
        "scanned {} sources of {} with {} Graph requests ({} throttled)",
        scanned.len(),
        who.account,
        graph.counts().requests,
        graph.counts().throttled
    ));
    Ok(if failures == 0 {
        Exit::Done
    } else {
        Exit::SomeFailed
    })
}
