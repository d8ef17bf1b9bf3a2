//! `notebridge doctor`: everything a migration needs, checked in one go before a long run, each with a
//! one-line verdict and, when it fails, what to do. It writes nothing to Notion and sends a known,
//! small number of requests: one device-code request to the sign-in service, one token refresh per
//! account, one Graph request per account (foreground lane, counted by the limiter) and one or two
//! Notion reads. Each request waits at most `--timeout` for its service, so doctor always ends. With
//! nothing of Microsoft's set up (no client id, no account) it checks what a migration of OneNote's
//! own files needs and says the Microsoft checks were skipped.

mod network;

use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use serde::Serialize;
use serde_json::json;

mod private;

use super::output::Printer;

#[path = "doctor_notion.rs"]
mod doctor_notion;
use crate::auth::{check_app, AuthError, Identity, TokenSource};
use crate::cli::exit::{CliResult, Exit};
use crate::clock::{Clock, Jitter};
use crate::engine::estimate;
use crate::engine::way::{decide, Via};
use crate::failure::Classify;
use crate::graph::sources::SourceKind;
use crate::graph::{Caller, GraphClient, GraphError};
use crate::limiter::budget;
use crate::limiter::Lane;
use crate::notion::client::{NotionClient, NotionError, Refusal};
use crate::notion::pace::DOCUMENTED_PER_SECOND;
use crate::notion::rate::NotionRate;
use crate::settings::{env, parse_duration, NotionPace, Settings, Window};
use crate::store::inventory::totals;
use crate::store::jobs::Remaining;
use crate::store::ways::Way;
use crate::store::Db;

/// Free space below this on the database's file system fails the check: the ledger and the job
/// queue grow during a run, and SQLite needs room for its journal.
const MIN_FREE_BYTES: u64 = 200 * 1024 * 1024;

/// Arguments of `doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// Check this account only (default: every account in the database).
    #[arg(long, value_name = "NAME", conflicts_with = "all_accounts")]
    pub account: Option<String>,
    /// Check every account in the database (the default when no account is named).
    #[arg(long)]
    pub all_accounts: bool,
    /// The Notion page a migration would write under (id or URL): checks it is shared.
    #[arg(long, value_name = "NOTION_PAGE")]
    pub to: Option<String>,
    /// How long each check may wait for its service (e.g. 10s, 30s): one that does not answer in
    /// time fails with what it tried, so doctor always ends.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_timeout)]
    pub timeout: Duration,
}

fn parse_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_duration(s).map_err(|e| format!("{e}; for example: 10s"))?;
    if d.is_zero() {
        return Err("must be longer than zero; for example: 10s".into());
    }
    Ok(d)
}

/// `fut`, or `None` when it has not finished within `limit`.
async fn within<T>(limit: Duration, fut: impl std::future::Future<Output = T>) -> Option<T> {
    tokio::time::timeout(limit, fut).await.ok()
}

/// A check whose service did not answer in time: what was tried, and what usually causes it.
fn no_answer(name: &str, service: &str, tried: &str, limit: Duration, fix: String) -> Check {
    Check::fail(
        name,
        None,
        format!(
            "{service} did not answer within {limit:?} ({tried}): the address refuses \
             connections, does not exist, or accepts and never answers"
        ),
        format!("{fix}; a slow network may need more time: doctor --timeout 30s"),
    )
}

/// One check's verdict.
#[derive(Debug, Serialize)]
pub struct Check {
    /// What was checked (`client_id`, `account:alice`, ...).
    pub name: String,
    /// Whether it passed.
    pub ok: bool,
    /// What was found.
    pub detail: String,
    /// What to do when it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
    /// The exit code this failure stands for (none for a pass or an unclassified failure).
    #[serde(skip)]
    exit: Option<Exit>,
}

impl Check {
    fn pass(name: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            name: name.into(),
            ok: true,
            detail: detail.into(),
            fix: None,
            exit: None,
        }
    }

    fn fail(
        name: impl Into<String>,
        exit: Option<Exit>,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check {
            name: name.into(),
            ok: false,
            detail: detail.into(),
            fix: Some(fix.into()),
            exit,
        }
    }
}

/// The exit code for a set of checks: 0 when all pass, else the first classified failure's code
/// (2, 3 or 5), else 1 (something failed that says nothing about the set-up, such as a network error).
pub fn exit_for(checks: &[Check]) -> Exit {
    if checks.iter().all(|c| c.ok) {
        return Exit::Done;
    }
    checks
        .iter()
        .filter(|c| !c.ok)
        .find_map(|c| c.exit)
        .unwrap_or(Exit::Unexpected)
}

/// Runs `doctor`.
pub fn run(settings: &Settings, printer: &Printer, args: DoctorArgs) -> CliResult<Exit> {
    let checks = super::runtime()?.block_on(checks(settings, &args));
    if printer.json {
        printer.json_line(&json!({
            "checks": checks,
            "ok": checks.iter().all(|c| c.ok),
        }));
    } else {
        for c in &checks {
            let mark = if c.ok { "ok  " } else { "FAIL" };
            printer.out(format!("{mark}  {:<22} {}", c.name, c.detail));
            if let Some(fix) = &c.fix {
                printer.out(format!("      {:<22} fix: {fix}", ""));
            }
        }
        let failed = checks.iter().filter(|c| !c.ok).count();
        printer.out(if failed == 0 {
            format!("all {} checks passed", checks.len())
        } else {
            format!("{failed} of {} checks failed", checks.len())
        });
    }
    Ok(exit_for(&checks))
}

async fn checks(settings: &Settings, args: &DoctorArgs) -> Vec<Check> {
    let mut out = Vec::new();
    let db = match database(settings, &mut out) {
        Some(db) => db,
        None => return out,
    };
    let files_only = files_only(settings, &db, args);
    out.push(network::check(settings, files_only.is_none()));
    match files_only {
        Some(why) => out.push(Check::pass("microsoft", why)),
        None => microsoft(settings, &db, args, &mut out).await,
    }
    notion(settings, &db, args, &mut out).await;
    out.push(migration_lock(&db));
    out
}

/// The state database: opens and migrates, passes `PRAGMA quick_check`, is private, has room.
fn database(settings: &Settings, out: &mut Vec<Check>) -> Option<Arc<Db>> {
    let path = &settings.db_path;
    let db = match Db::open(path) {
        Ok(db) => Arc::new(db),
        Err(e) => {
            out.push(Check::fail(
                "database",
                e.meaning().map(Exit::from),
                e.to_string(),
                format!("check {} (or set {} / --db)", path.display(), env::DB),
            ));
            return None;
        }
    };
    let integrity = db.read("checking the database", |c| {
        c.query_row("PRAGMA quick_check", [], |r| r.get::<_, String>(0))
    });
    out.push(match integrity {
        Ok(s) if s == "ok" => {
            Check::pass("database", format!("{} passes quick_check", path.display()))
        }
        Ok(s) => Check::fail(
            "database",
            Some(Exit::Usage),
            format!("{} is damaged: {s}", path.display()),
            "restore it from a backup, or move it away and plan the migration again",
        ),
        Err(e) => Check::fail(
            "database",
            Some(Exit::Usage),
            e.to_string(),
            "restore it from a backup, or move it away and plan the migration again",
        ),
    });
    out.push(private::database_private(path));
    out.extend(private::tokens_protected(&db));
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    out.push(match free_bytes(dir) {
        Some(free) if free >= MIN_FREE_BYTES => Check::pass(
            "disk_space",
            format!("{} free in {}", human_bytes(free), dir.display()),
        ),
        Some(free) => Check::fail(
            "disk_space",
            Some(Exit::Usage),
            format!("only {} free in {}", human_bytes(free), dir.display()),
            format!(
                "free some space, or put the database elsewhere with {} / --db",
                env::DB
            ),
        ),
        None => Check::fail(
            "disk_space",
            None,
            format!("could not read the free space of {}", dir.display()),
            "check the folder exists and is readable",
        ),
    });
    Some(db)
}

/// Why the Microsoft checks are skipped, when nothing of Microsoft's is set up: no client id, no
/// account named and none in the database. A migration of OneNote's own files needs none of it.
fn files_only(settings: &Settings, db: &Db, args: &DoctorArgs) -> Option<String> {
    let no_app = settings
        .client_id
        .as_deref()
        .is_none_or(|c| c.trim().is_empty());
    let no_account =
        args.account.is_none() && !args.all_accounts && db.accounts().is_ok_and(|a| a.is_empty());
    (no_app && no_account).then(|| {
        format!(
            "skipped: no client id ({}) and no account, which a migration of OneNote's own files \
             (`migrate --from`) does not need; for notebooks in OneDrive or SharePoint, register \
             an app (README, \"Using it with real accounts\") and run `notebridge login`",
            env::CLIENT_ID
        )
    })
}

/// Client id, the sign-in service, each account's refresh, the scopes, and Graph for each account.
async fn microsoft(settings: &Settings, db: &Arc<Db>, args: &DoctorArgs, out: &mut Vec<Check>) {
    let id = match Identity::from_settings(settings) {
        Ok(id) => {
            out.push(Check::pass("client_id", "set"));
            id
        }
        Err(e) => {
            out.push(Check::fail(
                "client_id",
                e.meaning().map(Exit::from),
                e.to_string(),
                format!(
                    "register an app (README, \"Using it with real accounts\") and set {}",
                    env::CLIENT_ID
                ),
            ));
            return;
        }
    };
    let sign_in_fix = format!(
        "check the network, any proxy (HTTPS_PROXY) and {} ({})",
        env::AUTHORITY_URL,
        settings.authority_url
    );
    out.push(match within(args.timeout, check_app(&id)).await {
        None => no_answer(
            "sign_in_service",
            "the Microsoft sign-in service",
            &format!("a device-code request to {}", settings.authority_url),
            args.timeout,
            sign_in_fix.clone(),
        ),
        Some(Ok(())) => Check::pass(
            "sign_in_service",
            format!(
                "{} accepts the app for tenant {} (device-code sign-in allowed)",
                settings.authority_url, settings.tenant
            ),
        ),
        Some(Err(e)) => auth_failure("sign_in_service", &e),
    });
    out.push(scopes(settings));

    let accounts = match &args.account {
        Some(name) => vec![name.clone()],
        None => db
            .accounts()
            .map(|a| a.into_iter().map(|a| a.name).collect())
            .unwrap_or_default(),
    };
    if accounts.is_empty() {
        out.push(Check::fail(
            "accounts",
            Some(Exit::SignIn),
            "no account has signed in with this database",
            "notebridge login --account NAME",
        ));
        return;
    }
    let clock = Clock::system();
    let tokens = match TokenSource::new(db.clone(), settings, clock.clone()) {
        Ok(t) => t,
        Err(e) => {
            out.push(auth_failure("accounts", &e));
            return;
        }
    };
    let graph = match GraphClient::open(db.clone(), settings, clock, Jitter::from_entropy()) {
        Ok(g) => Some(g),
        Err(e) => {
            out.push(Check::fail(
                "graph",
                e.meaning().map(Exit::from),
                e.to_string(),
                "check the Graph settings",
            ));
            None
        }
    };
    for account in &accounts {
        let name = format!("account:{account}");
        match within(args.timeout, tokens.refresh_now(account)).await {
            Some(Ok(_)) => out.push(Check::pass(&name, "signed in; its token refreshes")),
            Some(Err(e)) => {
                out.push(auth_failure(&name, &e));
                continue;
            }
            None => {
                out.push(no_answer(
                    &name,
                    "the Microsoft sign-in service",
                    &format!("a token refresh at {}", settings.authority_url),
                    args.timeout,
                    sign_in_fix.clone(),
                ));
                continue;
            }
        }
        if let Some(graph) = &graph {
            let check = within(args.timeout, graph_check(db, graph, account))
                .await
                .unwrap_or_else(|| {
                    no_answer(
                        &format!("graph:{account}"),
                        "Microsoft Graph",
                        &format!("GET {}/me/onenote/notebooks", settings.graph_url),
                        args.timeout,
                        format!(
                            "check the network, any proxy (HTTPS_PROXY) and {} ({})",
                            env::GRAPH_URL,
                            settings.graph_url
                        ),
                    )
                });
            out.push(check);
            out.push(via_check(settings, db, graph, account));
        }
    }
}

/// Which way each source of `account` takes under `--via auto` (from the permissions its token
/// was just granted), and, where a missing permission forces the OneNote API, what adding it would
/// save by the budget model, for the pages of the source's last scan. Informational: either way
/// migrates.
fn via_check(settings: &Settings, db: &Db, graph: &GraphClient, account: &str) -> Check {
    let name = format!("via:{account}");
    let granted = match db.granted_scopes(account) {
        Ok(g) => g,
        Err(e) => {
            return Check::fail(
                &name,
                e.meaning().map(Exit::from),
                e.to_string(),
                "see the message",
            )
        }
    };
    let user_id = match db.account(account) {
        Ok(Some(a)) => a.user_id,
        Ok(None) => return Check::pass(&name, "no such account"),
        Err(e) => {
            return Check::fail(
                &name,
                e.meaning().map(Exit::from),
                e.to_string(),
                "see the message",
            )
        }
    };
    let mut sources = vec![(
        account.to_owned(),
        "own notebooks".to_owned(),
        SourceKind::Personal,
    )];
    for s in db.sources(account).unwrap_or_default() {
        if s.source.kind != SourceKind::Personal {
            sources.push((
                s.source.inventory_key(account),
                s.source.label(),
                s.source.kind,
            ));
        }
    }
    // Notion's documented average unless a pace is fixed: doctor reads no learned budget.
    let notion_rate = match settings.notion_rate {
        NotionPace::Fixed(w) => w,
        NotionPace::Auto => Window {
            count: DOCUMENTED_PER_SECOND as u32,
            length: std::time::Duration::from_secs(1),
        },
    };
    let fpp = estimate::files_per_page(db).unwrap_or((estimate::ASSUMED_FILES_PER_PAGE, false));
    let mut parts = Vec::new();
    let mut fixes = Vec::new();
    for (key, label, kind) in sources {
        let d = decide(Via::Auto, kind, granted.as_deref());
        let way = match d.way {
            Way::Files => "section files",
            Way::Api => "the OneNote API",
        };
        let mut part = format!("{label}: {way} ({})", d.reason);
        if let Some(missing) = d.missing {
            let t = db.inventory(&key).map(|n| totals(&n)).unwrap_or_default();
            if t.pages > 0 {
                let left = Remaining {
                    pages: t.pages as i64,
                    containers: (t.notebooks + t.section_groups + t.sections) as i64,
                };
                if let Ok((api, files)) = estimate::by_way(
                    graph.limiter(),
                    notion_rate,
                    fpp,
                    &user_id,
                    left,
                    t.sections as i64,
                ) {
                    part.push_str(&format!(
                        "; adding {missing} would save time for its {} pages: {} -> {}",
                        t.pages,
                        budget::human(std::time::Duration::from_secs(api)),
                        budget::human(std::time::Duration::from_secs(files))
                    ));
                }
            }
            if !fixes.iter().any(|f: &String| f.contains(missing)) {
                fixes.push(format!(
                    "add {missing} to the app's API permissions and to {}, then notebridge login \
                     --account {account}",
                    env::SCOPES
                ));
            }
        }
        parts.push(part);
    }
    let mut check = Check::pass(&name, parts.join("; "));
    if !fixes.is_empty() {
        // Either way migrates: a pass, with what would make it faster.
        check.fix = Some(fixes.join("; "));
    }
    check
}

/// The configured scopes hold a OneNote read permission and `offline_access` (for unattended runs).
fn scopes(settings: &Settings) -> Check {
    let has = |s: &str| settings.scopes.iter().any(|x| x.eq_ignore_ascii_case(s));
    let notes = has("Notes.Read")
        || has("Notes.Read.All")
        || has("Notes.ReadWrite")
        || has("Notes.ReadWrite.All");
    let shown = settings.scopes.join(" ");
    if !notes {
        return Check::fail(
            "scopes",
            Some(Exit::Usage),
            format!("{shown:?} has no OneNote permission"),
            format!(
                "set {}=\"offline_access User.Read Notes.Read\" and sign in again",
                env::SCOPES
            ),
        );
    }
    if !has("offline_access") {
        return Check::fail(
            "scopes",
            Some(Exit::Usage),
            format!("{shown:?} lacks offline_access: no refresh token, so no unattended run"),
            format!("add offline_access to {} and sign in again", env::SCOPES),
        );
    }
    Check::pass("scopes", shown)
}

/// One foreground Graph request: the OneNote API answers for the account with its permissions.
async fn graph_check(db: &Db, graph: &GraphClient, account: &str) -> Check {
    let name = format!("graph:{account}");
    let who = match Caller::for_account(db, account, Lane::Foreground) {
        Ok(w) => w,
        Err(e) => return graph_failure(&name, &e),
    };
    let listing: Result<serde_json::Value, GraphError> = graph
        .get_json(
            &who,
            "/me/onenote/notebooks?$select=id",
            "the notebook list",
        )
        .await;
    match listing {
        Ok(v) => {
            let n = v["value"].as_array().map_or(0, Vec::len);
            let more = if v.get("@odata.nextLink").is_some() {
                " or more"
            } else {
                ""
            };
            let noun = if n == 1 && more.is_empty() {
                "notebook"
            } else {
                "notebooks"
            };
            Check::pass(
                &name,
                format!("OneNote answers: {n}{more} {noun} (1 request)"),
            )
        }
        Err(e) => graph_failure(&name, &e),
    }
}

fn graph_failure(name: &str, e: &GraphError) -> Check {
    match e {
        GraphError::Item { status: 401 | 403, .. } => Check::fail(
            name,
            Some(Exit::SignIn),
            e.to_string(),
            "the token lacks Notes.Read: add it to the app's API permissions (a work tenant's admin \
             may have to consent), then notebridge login again",
        ),
        GraphError::Auth(a) => auth_failure(name, a),
        other => Check::fail(
            name,
            other.meaning().map(Exit::from),
            other.to_string(),
            "check the network and NOTEBRIDGE_GRAPH_URL; run doctor again",
        ),
    }
}

fn auth_failure(name: &str, e: &AuthError) -> Check {
    let fix = match e {
        AuthError::MissingClientId => format!("set {}", env::CLIENT_ID),
        AuthError::ClientRejected { .. } => format!(
            "check {} and {}, and in the app registration: Authentication > Allow public client \
             flows: Yes",
            env::CLIENT_ID,
            env::TENANT
        ),
        AuthError::NoAccount { account } | AuthError::RefreshRejected { account, .. } => {
            format!("notebridge login --account {account}")
        }
        AuthError::Transport { .. } | AuthError::Service { .. } => {
            format!(
                "check the network and {}; run doctor again",
                env::AUTHORITY_URL
            )
        }
        _ => "see the message".to_owned(),
    };
    Check::fail(name, e.meaning().map(Exit::from), e.to_string(), fix)
}

/// The Notion token, what the integration can do, the target page, and the upload limit.
async fn notion(settings: &Settings, db: &Arc<Db>, args: &DoctorArgs, out: &mut Vec<Check>) {
    let Some(token) = settings.notion_token.as_deref() else {
        out.push(Check::fail(
            "notion_token",
            Some(Exit::Usage),
            format!("{} is not set", env::NOTION_TOKEN),
            "create a personal access token or an internal connection (README step 2) and export NOTION_TOKEN",
        ));
        return;
    };
    let rate = Arc::new(NotionRate::open(
        db.clone(),
        token,
        settings.notion_rate,
        Clock::system(),
    ));
    let client = NotionClient::new(&settings.notion_url, token, rate, Jitter::from_entropy())
        .with_backoff_base(settings.retries.pause);
    let base = settings.notion_url.trim_end_matches('/');
    let unanswered = |name: &str, tried: String| {
        no_answer(
            name,
            "Notion",
            &tried,
            args.timeout,
            format!(
                "check the network, any proxy (HTTPS_PROXY) and {} ({base})",
                env::NOTION_URL
            ),
        )
    };
    let me = match within(args.timeout, client.me()).await {
        Some(Ok(me)) => me,
        Some(Err(e)) => {
            out.push(notion_failure("notion_token", &e, "the token"));
            return;
        }
        None => {
            out.push(unanswered(
                "notion_token",
                format!("GET {base}/v1/users/me"),
            ));
            return;
        }
    };
    let (kind, token_check) = doctor_notion::token_kind(&me);
    out.push(token_check);
    // What an earlier run learned from a refusal; a database that cannot say is the database
    // check's to report.
    let refused = client.rate().refused_upload().await.ok().flatten();
    out.push(doctor_notion::upload_limit(
        &me,
        &kind,
        refused.as_ref(),
        Clock::system().now_ms(),
    ));
    let client = client.with_personal_token(kind.is_personal());
    let Some(to) = &args.to else {
        out.push(Check::pass(
            "notion_target",
            "not checked (give --to PAGE to check the page a migration writes under)",
        ));
        return;
    };
    let page = match super::migrate::parse_page_id(to) {
        Ok(p) => p,
        Err(e) => {
            out.push(Check::fail(
                "notion_target",
                Some(Exit::Usage),
                e.to_string(),
                "give the page's URL or id",
            ));
            return;
        }
    };
    let target = match within(args.timeout, client.page(&page)).await {
        None => unanswered("notion_target", format!("GET {base}/v1/pages/{page}")),
        Some(Ok(_)) => Check::pass(
            "notion_target",
            format!("{page} is readable by the {}", kind.describe()),
        ),
        Some(Err(NotionError::Refused {
            kind: Refusal::NotVisible,
            ..
        })) => doctor_notion::not_visible("notion_target", &format!("page {page}")),
        Some(Err(e)) => notion_failure("notion_target", &e, &format!("page {page}")),
    };
    let readable = target.ok;
    out.push(target);
    if readable {
        out.push(
            match within(
                args.timeout,
                doctor_notion::capabilities(&client, &page, &kind),
            )
            .await
            {
                Some(c) => c,
                None => unanswered(
                    "notion_capabilities",
                    format!("PATCH {base}/v1/pages/{page}"),
                ),
            },
        );
    }
}

fn notion_failure(name: &str, e: &NotionError, what: &str) -> Check {
    match e {
        NotionError::Refused {
            kind: Refusal::BadToken,
            ..
        } => Check::fail(
            name,
            Some(Exit::Usage),
            format!("Notion rejected {}: {e}", env::NOTION_TOKEN),
            "a personal access token that expired or was revoked: make a new one at \
             https://www.notion.so/developers/tokens; an integration's secret: copy it again into \
             NOTION_TOKEN",
        ),
        NotionError::Refused {
            kind: Refusal::NotShared,
            ..
        } => Check::fail(
            name,
            Some(Exit::Usage),
            format!("{what} is not shared with the integration (or does not exist)"),
            "open the page in Notion, ... menu > Connections > add the integration",
        ),
        NotionError::Refused { .. } => Check::fail(
            name,
            Some(Exit::Usage),
            e.to_string(),
            "give the integration the Read and Insert content capabilities, and share the page",
        ),
        other => Check::fail(
            name,
            None,
            other.to_string(),
            format!(
                "check the network and {}; run doctor again",
                env::NOTION_URL
            ),
        ),
    }
}

/// Whether another process is migrating with this database now.
fn migration_lock(db: &Db) -> Check {
    match super::status::run_lock(db) {
        Ok(None) => Check::pass("migration_lock", "free: no other process is migrating"),
        Ok(Some(m)) => Check::fail(
            "migration_lock",
            Some(Exit::Busy),
            format!("process {} is migrating with this database", m.pid),
            "wait for it to finish (notebridge status), or stop it",
        ),
        Err(e) => Check::fail("migration_lock", None, e.to_string(), "check the database"),
    }
}

/// Free bytes for this user on the volume holding `dir`.
fn free_bytes(dir: &std::path::Path) -> Option<u64> {
    crate::platform::free_bytes(dir)
}

fn human_bytes(n: u64) -> String {
    const MB: f64 = 1024.0 * 1024.0;
    if n as f64 >= 1024.0 * MB {
        format!("{:.1} GB", n as f64 / (1024.0 * MB))
    } else {
        format!("{:.0} MB", n as f64 / MB)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{DefaultDirs, FlagSettings};

    /// Settings of a files-only user (a Notion token, nothing of Microsoft's) whose Notion is at
    /// `notion_url`, with the database in `dir`.
    fn files_user(dir: &std::path::Path, notion_url: &str) -> Settings {
        let flags = FlagSettings {
            db: Some(dir.join("s.db")),
            config: None,
        };
        let env = [
            (env::NOTION_TOKEN, "ntn_test"),
            (env::NOTION_URL, notion_url),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        Settings::resolve(&flags, &env, DefaultDirs::default()).unwrap()
    }

    fn args(timeout: Duration) -> DoctorArgs {
        DoctorArgs {
            account: None,
            all_accounts: false,
            to: Some("0123456789abcdef0123456789abcdef".into()),
            timeout,
        }
    }

    fn named<'a>(checks: &'a [Check], name: &str) -> &'a Check {
        checks
            .iter()
            .find(|c| c.name == name)
            .unwrap_or_else(|| panic!("no {name} in {checks:?}"))
    }

    /// On the paused clock the timeout is reached as soon as nothing else can happen: the check
    /// ends at its limit, not at the network's.
    async fn ends_within_its_limit(notion_url: &str) {
        let dir = tempfile::tempdir().unwrap();
        let settings = files_user(dir.path(), notion_url);
        let limit = Duration::from_secs(10);
        let started = tokio::time::Instant::now();
        let checks = checks(&settings, &args(limit)).await;
        assert!(started.elapsed() >= limit, "it waited its limit");
        assert!(
            started.elapsed() < limit * 2,
            "and no longer: {:?}",
            started.elapsed()
        );
        let n = named(&checks, "notion_token");
        assert!(!n.ok);
        assert!(
            n.detail.starts_with("Notion did not answer within 10s"),
            "{}",
            n.detail
        );
        assert!(
            n.detail.contains(&format!("GET {notion_url}/v1/users/me")),
            "{}",
            n.detail
        );
        assert!(n.fix.as_deref().unwrap().contains(env::NOTION_URL), "{n:?}");
        // What does not need Notion is still checked; the Microsoft checks are skipped, saying why.
        assert!(named(&checks, "database").ok);
        assert!(named(&checks, "migration_lock").ok);
        let ms = named(&checks, "microsoft");
        assert!(
            ms.ok && ms.detail.starts_with("skipped: no client id"),
            "{ms:?}"
        );
        assert_eq!(exit_for(&checks), Exit::Unexpected);
    }

    #[tokio::test(start_paused = true)]
    async fn a_notion_that_accepts_and_never_answers_fails_at_the_timeout() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let held = tokio::spawn(async move {
            let mut open = Vec::new();
            while let Ok((sock, _)) = listener.accept().await {
                open.push(sock);
            }
        });
        ends_within_its_limit(&url).await;
        held.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn a_notion_port_that_refuses_fails_at_the_timeout() {
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        ends_within_its_limit(&format!("http://127.0.0.1:{port}")).await;
    }
}
