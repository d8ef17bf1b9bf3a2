//! `notebridge sources`: where the account can read notebooks (its own, its Microsoft 365 groups,
//! its followed SharePoint sites), found in the foreground lane and remembered in the state database.

use std::sync::Arc;

use clap::Args;
use serde_json::json;

use super::output::Printer;
use crate::cli::exit::{CliResult, Exit};
use crate::clock::{Clock, Jitter};
use crate::graph::sources::{discover, SourceKind};
use crate::graph::{Caller, GraphClient};
use crate::limiter::Lane;
use crate::settings::Settings;
use crate::store::Db;

/// Arguments of `sources`.
#[derive(Debug, Args)]
pub struct SourcesArgs {
    /// The signed-in account to look for.
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub account: String,
}

/// Runs the discovery.
pub fn run(settings: &Settings, printer: &Printer, args: SourcesArgs) -> CliResult<Exit> {
    let db = Arc::new(Db::open(&settings.db_path)?);
    super::runtime()?.block_on(async {
        let clock = Clock::system();
        let graph = GraphClient::open(db.clone(), settings, clock.clone(), Jitter::from_entropy())?;
        let who = Caller::for_account(&db, &args.account, Lane::Foreground)?;
        let own_name = db
            .account(&args.account)?
            .map(|a| a.display_name.unwrap_or(a.user_principal_name))
            .unwrap_or_else(|| args.account.clone());
        let d = discover(&graph, &who, &own_name).await?;
        let requests = graph.counts().requests;
        db.save_sources(&args.account, &d.to_store())?;
        let failed = d.found.iter().filter(|f| f.notebooks.is_err()).count();
        if printer.json {
            let sources: Vec<_> = d
                .found
                .iter()
                .map(|f| {
                    let mut v = json!({
                        "kind": f.source.kind,
                        "id": f.source.id,
                        "name": f.source.name,
                    });
                    if let Some(u) = &f.source.url {
                        v["url"] = json!(u);
                    }
                    match &f.notebooks {
                        Ok(n) => v["notebooks"] = json!(n),
                        Err(e) => {
                            v["notebooks"] = serde_json::Value::Null;
                            v["problem"] = json!(e.to_string());
                        }
                    }
                    v
                })
                .collect();
            printer.json_line(&json!({"account": args.account, "sources": sources}));
        } else {
            printer.out(format!("{:<9} {:>9}  {:<40} WHERE", "KIND", "NOTEBOOKS", "NAME"));
            for f in &d.found {
                let count = match &f.notebooks {
                    Ok(n) => n.to_string(),
                    Err(_) => "-".into(),
                };
                let place = match f.source.kind {
                    SourceKind::Personal => "--notebook NAME (the default)".to_owned(),
                    SourceKind::Group => format!("--group {}", f.source.id),
                    SourceKind::Site => {
                        format!("--site {}", f.source.url.as_deref().unwrap_or(&f.source.id))
                    }
                };
                printer.out(format!(
                    "{:<9} {count:>9}  {:<40} {place}",
                    f.source.kind.as_str(),
                    f.source.name
                ));
            }
        }
        if d.personal_account {
            printer.note(format!(
                "{}: a personal Microsoft account has no Microsoft 365 groups or SharePoint sites; \
                 only its own notebooks can be migrated",
                args.account
            ));
        }
        if d.sites_need_permission {
            printer.note(format!(
                "{}: followed SharePoint sites were not listed: that needs the delegated permission \
                 Sites.Read.All (a site can still be named by its Graph id with --site)",
                args.account
            ));
        }
        printer.note(format!(
            "{}: {} sources found with {requests} Graph requests from the account's OneNote budget \
             (one notebook listing per source)",
            args.account,
            d.found.len()
        ));
        for f in &d.found {
            if let Err(e) = &f.notebooks {
                printer.problem(e.to_string());
            }
        }
        Ok(if failed > 0 {
            Exit::SomeFailed
        } else {
            Exit::Done
        })
    })
}
