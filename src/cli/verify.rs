//! `notebridge verify`: the completeness report, per section, with a verdict and exit 0 or 4.

use std::sync::Arc;

use clap::Args;

use super::output::Printer;
use crate::cli::exit::{CliError, CliResult, Exit, Failure};
use crate::clock::{Clock, Jitter};
use crate::graph::sources::account_of_key;
use crate::notion::client::{NotionClient, NotionError, Refusal};
use crate::notion::rate::NotionRate;
use crate::notion::token::TokenKind;
use crate::settings::{env, Settings};
use crate::store::Db;
use crate::verify::{verify, AccountReport, Counts, ItemState, VerifyReport};

/// Arguments of `verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Only this account (default: every account in the database with a planned migration).
    #[arg(long, value_name = "NAME")]
    pub account: Option<String>,
    /// List every page's approximations (the summary counts them by kind).
    #[arg(long)]
    pub detail: bool,
    /// Only the import from OneNote's own files at this path (as given to `migrate --from`).
    #[arg(long = "from", value_name = "PATH", conflicts_with = "account")]
    pub from: Option<std::path::PathBuf>,
}

/// Runs the verification.
pub fn run(settings: &Settings, printer: &Printer, args: VerifyArgs) -> CliResult<Exit> {
    let Some(token) = settings.notion_token.clone() else {
        return Err(CliError::usage(format!(
            "{} is not set: verify reads the migrated pages back from Notion. Set it (or \
             notion.token in the config file) to the integration's secret",
            env::NOTION_TOKEN
        ))
        .into());
    };
    let db = Arc::new(Db::open(&settings.db_path)?);
    let accounts = match &args.from {
        Some(path) => vec![planned_import(&db, path)?],
        None => planned_accounts(&db, args.account.as_deref())?,
    };
    let report = super::runtime()?.block_on(async {
        let rate = Arc::new(NotionRate::open(
            db.clone(),
            &token,
            settings.notion_rate,
            Clock::system(),
        ));
        let client = NotionClient::new(&settings.notion_url, &token, rate, Jitter::from_entropy())
            .with_backoff_base(settings.retries.pause);
        // A token, sharing or network problem is that problem, never a verdict about pages.
        let me = client
            .me()
            .await
            .map_err(|e| notion_problem(e, "the integration"))?;
        // A personal access token's 404 is a page its creator cannot open, not one to share.
        let client = client.with_personal_token(TokenKind::of(&me).is_personal());
        for account in &accounts {
            for target in db.plan_targets(account)? {
                client.page(&target).await.map_err(|e| {
                    notion_problem(e, &format!("the target page {target} of {account}"))
                })?;
            }
        }
        // Alive on screen: about one Notion listing per migrated page, at Notion's 3 requests/s.
        let expected: u64 = accounts
            .iter()
            .map(|a| db.notion_items(a).map_or(0, |i| i.len() as u64))
            .sum();
        let ticker = {
            let c = client.clone();
            super::progress::Ticker::start(
                printer,
                "verify",
                std::time::Duration::from_secs(10),
                Arc::new(move || {
                    let n = c.counts();
                    super::progress::Frame {
                        done: n.requests,
                        total: Some(expected.max(n.requests)),
                        unit: "Notion reads",
                        eta: None,
                        waiting: None,
                        details: vec![format!("{} throttled", n.throttled)],
                    }
                }),
            )
        };
        let report = verify(&db, &client, &accounts).await;
        ticker.finish();
        let mut report = report?;
        // The checks above are requests of this verification too.
        report.notion_requests = client.counts().requests;
        Ok::<_, Failure>(report)
    })?;
    // Kept for `report`, which shows what Notion really held at the last verification.
    let now = crate::clock::Clock::system().now_ms();
    for a in &report.accounts {
        let json = serde_json::to_string(a).map_err(Failure::unexpected)?;
        db.save_verify_report(&a.account, now, &json)?;
    }
    if printer.json {
        printer.json_line(&serde_json::to_value(&report).map_err(Failure::unexpected)?);
    } else {
        // A group's or site's plan is named by the account and the source, not its key.
        let titles = report
            .accounts
            .iter()
            .map(|a| Ok((a.account.clone(), db.key_title(&a.account)?)))
            .collect::<CliResult<std::collections::HashMap<_, _>>>()?;
        print_human(printer, &report, &titles, args.detail);
    }
    Ok(if report.complete() {
        Exit::Done
    } else {
        Exit::SomeFailed
    })
}

/// What a Notion refusal before any page was read means: a bad token (401), a page not shared with
/// the integration or one a personal access token's creator cannot open (404), a missing
/// capability (403) are the user's to fix (exit 2); anything else (the network, Notion's own
/// failures) stays what it is.
fn notion_problem(e: NotionError, what: &str) -> Failure {
    match &e {
        // A refused token answers nothing about itself, so the advice names both kinds.
        NotionError::Refused { kind: Refusal::BadToken, .. } => CliError::usage(format!(
            "Notion rejected {}: {e}; a personal access token that expired or was revoked: make a \
             new one (https://www.notion.so/developers/tokens); an integration's secret: copy it \
             into {} again",
            env::NOTION_TOKEN,
            env::NOTION_TOKEN
        ))
        .into(),
        NotionError::Refused { kind: Refusal::NotVisible, .. } => CliError::usage(format!(
            "{what} does not exist, or the person whose personal access token this is cannot open \
             it: open it in Notion as that person (no Connections are needed); nothing was verified"
        ))
        .into(),
        NotionError::Refused { kind: Refusal::NotShared, .. } => CliError::usage(format!(
            "{what} is not shared with the integration (or was deleted): open it in Notion, ... menu > \
             Connections > add the integration; nothing was verified"
        ))
        .into(),
        NotionError::Refused { .. } => CliError::usage(format!(
            "Notion refused to show {what}: {e}; give the integration the Read content capability"
        ))
        .into(),
        _ => Failure::from(e).context(format!(
            "verify could not read {what} from Notion, so it says nothing about the pages"
        )),
    }
}

/// The accounts to verify: the named one (which must exist and have a plan), or every account with a
/// plan. Nothing to verify is a usage error (exit 2), never "complete".
fn planned_accounts(db: &Db, name: Option<&str>) -> CliResult<Vec<String>> {
    let known: Vec<String> = db.accounts()?.into_iter().map(|a| a.name).collect();
    if known.is_empty() && name.is_none() {
        // With nobody signed in, what there is to verify is what was imported from files.
        let imports = planned_imports(db)?;
        if !imports.is_empty() {
            return Ok(imports);
        }
    }
    if known.is_empty() {
        return Err(nothing_yet().into());
    }
    let with_plans: Vec<String> = db
        .accounts_with_jobs()?
        .into_iter()
        .filter(|a| db.plan_targets(a).is_ok_and(|t| !t.is_empty()))
        .collect();
    match name {
        // The account's own plan and its groups' and sites' (planned under their own keys).
        Some(n) if with_plans.iter().any(|a| account_of_key(a) == n) => Ok(with_plans
            .into_iter()
            .filter(|a| account_of_key(a) == n)
            .collect()),
        Some(n) if known.iter().any(|a| a == n) => Err(CliError::usage(format!(
            "nothing to verify for account {n}: no migration was planned for it; plan one with \
             `notebridge migrate --account {n} --to PAGE`"
        ))
        .into()),
        Some(n) => Err(CliError::usage(format!(
            "no account named {n} in this database; accounts: {}",
            list_or_none(&known)
        ))
        .into()),
        None if with_plans.is_empty() => Err(CliError::usage(format!(
            "nothing to verify: no migration was planned in this database yet (accounts: {}); \
             plan one with `notebridge migrate --to PAGE` (or, from OneNote's own files, \
             `notebridge migrate --from PATH --to PAGE`)",
            list_or_none(&known)
        ))
        .into()),
        None => Ok(with_plans),
    }
}

/// The inventory key of the import of `path`, which must have a plan.
fn planned_import(db: &Db, path: &std::path::Path) -> CliResult<String> {
    let shown = crate::imports::absolute(path)?.display().to_string();
    match db.import_key(&shown)? {
        Some(key) if db.plan_targets(&key).is_ok_and(|t| !t.is_empty()) => Ok(key),
        _ => Err(CliError::usage(format!(
            "nothing to verify for {shown}: no migration from it was planned; plan one with \
             `notebridge migrate --from PATH --to PAGE`"
        ))
        .into()),
    }
}

/// The inventory keys of the imports from files that have a plan, in the order they were made.
pub(super) fn planned_imports(db: &Db) -> Result<Vec<String>, crate::store::StoreError> {
    let mut out = Vec::new();
    for i in db.file_imports()? {
        if !db.plan_targets(&i.key)?.is_empty() {
            out.push(i.key);
        }
    }
    Ok(out)
}

/// Names for a message, or "none".
pub(super) fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_owned()
    } else {
        names.join(", ")
    }
}

/// A database with no account and nothing imported from files: how to start, either way. Exit 3,
/// the contract's code for "no account": there is nothing to show until one way has begun.
fn nothing_yet() -> CliError {
    CliError::sign_in(
        "no accounts and no imports from files in this database yet. Start either way: migrate \
         OneNote's own files (.one, .onepkg or a notebook folder) with only NOTION_TOKEN set: \
         `notebridge migrate --from PATH --to PAGE`; or sign in with `notebridge login` to read \
         notebooks through Microsoft Graph",
    )
}

/// The named account, or every account; exit 3 when there is none and nothing was imported from
/// files either.
pub(super) fn select_accounts(db: &Db, name: Option<&str>) -> CliResult<Vec<String>> {
    match name {
        Some(n) => match db.account(n)? {
            Some(a) => Ok(vec![a.name]),
            None => Err(CliError::sign_in(format!(
                "no account named {n}; sign in with `notebridge login --account {n}`"
            ))
            .into()),
        },
        None => {
            let all: Vec<String> = db.accounts()?.into_iter().map(|a| a.name).collect();
            // With nobody signed in, imports from files are still reported (by the caller).
            if all.is_empty() && planned_imports(db)?.is_empty() {
                return Err(nothing_yet().into());
            }
            Ok(all)
        }
    }
}

/// The widest line of the human output: it reads in a 100-column terminal.
const WIDTH: usize = 100;

fn print_human(
    printer: &Printer,
    report: &VerifyReport,
    titles: &std::collections::HashMap<String, String>,
    detail: bool,
) {
    let mut t = Counts::default();
    let mut containers_bad = 0;
    for a in &report.accounts {
        t.add(&a.totals);
        containers_bad += a
            .containers
            .iter()
            .filter(|c| !c.check.state.is_good())
            .count()
            + a.sections
                .iter()
                .filter(|s| !s.section_page.state.is_good())
                .count();
    }
    // The verdict first: it is what a person reads the output for.
    if report.complete() {
        printer.out(format!(
            "COMPLETE: all {} planned pages are in Notion exactly once and complete ({} Notion \
             requests)",
            t.planned, report.notion_requests
        ));
    } else {
        printer.out(format!(
            "INCOMPLETE: of {} planned pages {} are complete; {} missing ({} failed, {} blocked by a \
             failed parent, {} not run yet), {} partly written, {} extra copies; {} notebook, group or \
             section pages with problems ({} Notion requests)",
            t.planned,
            t.ok,
            t.missing,
            t.failed,
            t.blocked,
            t.pending,
            t.partial,
            t.duplicates,
            containers_bad,
            report.notion_requests
        ));
    }
    for a in &report.accounts {
        printer.out("");
        let title = titles.get(&a.account).unwrap_or(&a.account);
        print_account(printer, a, title, detail);
    }
}

fn print_account(printer: &Printer, a: &AccountReport, label: &str, detail: bool) {
    printer.out(format!(
        "account {label} (under Notion page{} {}; layout {})",
        if a.targets.len() == 1 { "" } else { "s" },
        if a.targets.is_empty() {
            "-".to_owned()
        } else {
            a.targets.join(", ")
        },
        a.layout
    ));
    let header = ["ONENOTE", "NOTION", "MISSING", "EXTRA", "PARTIAL", "FAILED"];
    // Name column: what is left of 100 columns after the indent and six 8-wide number columns.
    let width = WIDTH - 2 - header.len() * 8;
    printer.out(format!(
        "  {:width$}{}",
        "SECTION",
        header.map(|h| format!("{h:>8}")).join("")
    ));
    let line = |name: &str, c: &Counts| {
        let cells = [
            c.onenote_pages,
            c.in_notion,
            c.missing,
            c.duplicates + c.foreign,
            c.partial,
            c.failed,
        ];
        format!(
            "  {:width$}{}",
            truncate(name, width - 1),
            cells.map(|n| format!("{n:>8}")).join("")
        )
    };
    for s in &a.sections {
        printer.out(line(&s.path.join(" / "), &s.counts));
    }
    printer.out(line("TOTAL", &a.totals));

    let mut problems = Vec::new();
    for c in &a.containers {
        if !c.check.state.is_good() {
            problems.push(problem(
                &format!("{} {}", c.kind.replace('_', " "), c.path.join(" / ")),
                c.check.state,
                c.check.reason.as_deref(),
            ));
        }
    }
    for s in &a.sections {
        if !s.section_page.state.is_good() {
            let what = if s.database.is_some() {
                "database of section"
            } else {
                "section"
            };
            problems.push(problem(
                &format!("{what} {}", s.path.join(" / ")),
                s.section_page.state,
                s.section_page.reason.as_deref(),
            ));
        }
        for p in &s.pages {
            if !p.check.state.is_good() {
                problems.push(problem(
                    &format!("{} / {}", s.path.join(" / "), title(&p.title)),
                    p.check.state,
                    p.check.reason.as_deref(),
                ));
            }
        }
        for f in &s.foreign {
            problems.push(format!(
                "  extra: {:?} ({}) under {} was not created by notebridge",
                f.title,
                f.notion_page_id,
                f.under.join(" / ")
            ));
        }
    }
    for f in &a.foreign {
        problems.push(format!(
            "  extra: {:?} ({}) under {} was not created by notebridge",
            f.title,
            f.notion_page_id,
            f.under.join(" / ")
        ));
    }
    if !problems.is_empty() {
        printer.out("pages that are not complete:");
        for p in problems {
            printer.out(p);
        }
    }

    // Approximations by kind, in words; the per-page list only on request.
    let mut kinds: Vec<(String, usize, usize)> = Vec::new();
    let mut pages_with = 0;
    for p in a.sections.iter().flat_map(|s| &s.pages) {
        if p.approximations.is_empty() {
            continue;
        }
        pages_with += 1;
        let mut seen_here = std::collections::HashSet::new();
        for x in &p.approximations {
            let words = plain_words(&x.element, &x.action);
            let first_on_page = seen_here.insert(words.clone());
            match kinds.iter_mut().find(|(w, _, _)| *w == words) {
                Some(k) => {
                    k.1 += x.count;
                    k.2 += usize::from(first_on_page);
                }
                None => kinds.push((words, x.count, 1)),
            }
        }
    }
    if !kinds.is_empty() {
        kinds.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.cmp(&a.1)));
        printer.out(format!(
            "approximated on {pages_with} page{} (what could not be carried over exactly):",
            if pages_with == 1 { "" } else { "s" }
        ));
        for (words, count, pages) in &kinds {
            let tail = format!(
                " {count}x on {pages} page{}",
                if *pages == 1 { "" } else { "s" }
            );
            printer.out(format!(
                "  {}{tail}",
                truncate(words, WIDTH - 2 - tail.chars().count())
            ));
        }
        if detail {
            for s in &a.sections {
                for p in s.pages.iter().filter(|p| !p.approximations.is_empty()) {
                    printer.out(format!("  {} / {}:", s.path.join(" / "), title(&p.title)));
                    for x in &p.approximations {
                        printer.out(format!(
                            "    {} {}x",
                            truncate(&plain_words(&x.element, &x.action), WIDTH - 12),
                            x.count
                        ));
                    }
                }
            }
        } else {
            printer.out("  (each page's list: notebridge verify --detail, or --json)");
        }
    }
}

/// An approximation in words a user knows. The converter names the source element precisely (for
/// `--json` and bug reports); people read what happened to their page.
fn plain_words(element: &str, action: &str) -> String {
    let known = match element {
        "<img> width/height" => Some("image size not kept (Notion sizes images itself)"),
        "CSS color" => Some("text colour changed to the nearest Notion colour"),
        "CSS background-color" => Some("highlight changed to the nearest Notion colour"),
        "font-size" => Some("font size not kept (Notion text has one size)"),
        "list numbering (start/value)" => Some("list numbering restarts at 1"),
        "absolutely positioned outline" => Some("note containers placed top to bottom"),
        "U+FFFC object placeholder" => Some("embedded-object marker removed"),
        "table cell span (colspan/rowspan)" => Some("merged table cells split"),
        "table cell background" => Some("table cell colour not kept"),
        "<math>" => Some("equation converted to Notion's LaTeX"),
        "text directly inside a list" => Some("loose text in a list kept as a paragraph"),
        "<sup>" => Some("superscript shown as plain text"),
        "<sub>" => Some("subscript shown as plain text"),
        "<cite>" => Some("citation style not kept"),
        "<h5>" | "<h6>" => Some("heading level 5 or 6 shown as level 4"),
        _ => None,
    };
    if let Some(k) = known {
        return k.to_owned();
    }
    if element.starts_with("list-style-type:") {
        return "list marker style not kept (Notion picks it by depth)".to_owned();
    }
    if element == "ink (recognised handwriting, words)" {
        return format!("words OneNote recognised in handwriting: {action}");
    }
    if element.starts_with("ink") {
        return format!("handwriting or drawing: {action}");
    }
    if element.starts_with("data-tag") {
        return format!(
            "OneNote tag {}: {action}",
            element.trim_start_matches("data-tag=")
        );
    }
    format!("{element}: {action}")
}

fn problem(what: &str, state: ItemState, reason: Option<&str>) -> String {
    match reason {
        Some(r) => format!("  {}: {what}: {r}", state.label()),
        None => format!("  {}: {what}", state.label()),
    }
}

fn title(t: &str) -> String {
    crate::notion::writer::display_title(t)
}

fn truncate(s: &str, width: usize) -> String {
    if s.chars().count() <= width {
        s.to_owned()
    } else {
        let mut t: String = s.chars().take(width.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}
