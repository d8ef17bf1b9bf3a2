//! The command line: argument parsing, logging set-up, and the one place where an error becomes a
//! message and an exit code. Each subcommand lives in its own file with a `run` function.

mod accounts;
mod completions;
mod convert;
mod doctor;
pub mod exit;
mod login;
mod migrate;
pub mod output;
mod progress;
mod report;
mod resolve;
mod scan;
mod scan_files;
mod scan_sources;
mod sources;
mod status;
mod sync;
mod tree;
mod verify;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::cli::exit::{CliResult, Exit, Failure};
use crate::settings::{FlagSettings, Settings};
use output::Printer;

/// Move OneNote notebooks into Notion, end to end and unattended.
#[derive(Debug, Parser)]
#[command(name = "notebridge", version, about, long_about = None, propagate_version = true)]
pub struct Cli {
    #[command(flatten)]
    global: GlobalArgs,
    #[command(subcommand)]
    command: Command,
}

/// The help heading of the flags every command takes: after each command's own.
const GLOBAL: &str = "Global options";

/// Flags accepted before or after the subcommand.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// The SQLite state file (its help names the real default path: see [`command`]).
    #[arg(long, global = true, value_name = "PATH", help_heading = GLOBAL)]
    pub db: Option<PathBuf>,
    /// Optional TOML config (its help names the real default path: see [`command`]).
    #[arg(long, global = true, value_name = "PATH", help_heading = GLOBAL)]
    pub config: Option<PathBuf>,
    /// Machine-readable output on stdout.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose", help_heading = GLOBAL)]
    pub quiet: bool,
    /// More detail on stderr (-vv for debug). NOTEBRIDGE_LOG / RUST_LOG filters also work.
    #[arg(short, long, global = true, action = clap::ArgAction::Count, help_heading = GLOBAL)]
    pub verbose: u8,
    /// No progress bars (they are also off when stderr is not a terminal).
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub no_progress: bool,
    /// Write every HTTP exchange, secrets redacted and page content left out, as JSON lines to FILE
    /// (NOTEBRIDGE_TRACE_BODIES=1 adds redacted bodies).
    #[arg(long, global = true, value_name = "FILE", env = crate::settings::env::TRACE, help_heading = GLOBAL)]
    pub trace: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Sign in to a Microsoft account with a device code.
    #[command(
        after_help = "Examples:\n  notebridge login\n  notebridge login --account work\n  notebridge --json login --account work   # the code as JSON, for a wrapper"
    )]
    Login(login::LoginArgs),
    /// List signed-in accounts.
    #[command(after_help = "Examples:\n  notebridge accounts\n  notebridge accounts --json")]
    Accounts(accounts::AccountsArgs),
    /// Forget an account's tokens (its inventory and jobs are kept).
    #[command(after_help = "Examples:\n  notebridge logout --account work")]
    Logout(accounts::LogoutArgs),
    /// Where the account can read notebooks: its own, its Microsoft 365 groups, its followed
    /// SharePoint sites (foreground lane; one notebook listing per group or site).
    #[command(
        after_help = "Examples:\n  notebridge sources\n  notebridge sources --account work --json\n\nGroups and sites need the delegated permission Notes.Read.All (followed sites also\nSites.Read.All): NOTEBRIDGE_SCOPES=\"offline_access User.Read Notes.Read.All Sites.Read.All\" notebridge login"
    )]
    Sources(sources::SourcesArgs),
    /// Read the account's notebooks, section groups, sections and pages into the inventory.
    #[command(
        after_help = "Examples:\n  notebridge scan\n  notebridge scan --account work --notebook \"Team notes\"\n  notebridge --json scan > inventory.json\n  notebridge scan --from Work.onepkg   # OneNote's own files, offline"
    )]
    Scan(scan::ScanArgs),
    /// Migrate notebooks into Notion (or `--resume` what is queued).
    #[command(
        after_help = "Examples:\n  notebridge migrate --to https://www.notion.so/Imports-0123456789abcdef0123456789abcdef\n  notebridge migrate --resume --max-duration 50m   # from cron: exit 75 means more to do\n  notebridge migrate --resume --retry-failed\n  notebridge migrate --from Work.onepkg --to https://www.notion.so/Imports-0123456789abcdef0123456789abcdef"
    )]
    Migrate(migrate::MigrateArgs),
    /// Keep Notion in step with OneNote after a migration: new and changed pages, renames,
    /// moves, order and deletions, never over what a person edited in Notion.
    #[command(
        after_help = "Examples:\n  notebridge sync --dry-run\n  notebridge sync --max-duration 50m   # from cron: exit 75 means more to do, 4 conflicts or failures\n  notebridge sync --from ~/OneNote/Work --deletions keep"
    )]
    Sync(sync::SyncArgs),
    /// Mark conflicts (pages left as a person edited them in Notion) as dealt with: runs no longer
    /// exit 4 for them, and notebridge still never writes to those pages.
    #[command(
        after_help = "Examples:\n  notebridge status   # lists the open conflicts with their Notion pages\n  notebridge resolve https://www.notion.so/Meeting-notes-0123456789abcdef0123456789abcdef\n  notebridge resolve --all"
    )]
    Resolve(resolve::ResolveArgs),
    /// Convert one saved OneNote page HTML file to Notion blocks, offline.
    #[command(
        after_help = "Examples:\n  notebridge convert page.html\n  notebridge convert page.html --json > blocks.json"
    )]
    Convert(convert::ConvertArgs),
    /// Per account: jobs by state, pages migrated, failures, changed pages and the limiter's state.
    #[command(
        after_help = "Examples:\n  notebridge status\n  notebridge status --account work --json"
    )]
    Status(status::StatusArgs),
    /// Prove the migration complete: reconcile what is in Notion with the OneNote inventory.
    #[command(
        after_help = "Examples:\n  notebridge verify\n  notebridge verify --account work --detail\n  notebridge --json verify > proof.json"
    )]
    Verify(verify::VerifyArgs),
    /// Check everything a migration needs (sign-in, permissions, Graph, Notion, the database).
    #[command(
        after_help = "Examples:\n  notebridge doctor\n  notebridge doctor --to https://www.notion.so/Imports-0123456789abcdef0123456789abcdef\n  notebridge doctor --all-accounts --json"
    )]
    Doctor(doctor::DoctorArgs),
    /// Write a self-contained HTML report of the migration (no network).
    #[command(
        after_help = "Examples:\n  notebridge report\n  notebridge report --account work --output work-report.html"
    )]
    Report(report::ReportArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell).
    #[command(
        after_help = "Examples:\n  notebridge completions bash > ~/.local/share/bash-completion/completions/notebridge\n  notebridge completions zsh > \"${fpath[1]}/_notebridge\""
    )]
    Completions(completions::CompletionsArgs),
    /// Print the man page (roff).
    Man,
}

/// The command tree, with this machine's real default paths in the help (not `<data dir>`).
pub fn command() -> clap::Command {
    use clap::CommandFactory;
    let d = crate::settings::default_dirs();
    let shown = |p: Option<std::path::PathBuf>| {
        p.map_or("none on this system".to_owned(), |p| {
            p.display().to_string()
        })
    };
    let (db, config) = (shown(d.db_file), shown(d.config_file));
    Cli::command()
        .mut_arg("db", |a| {
            a.help(format!(
                "The SQLite state file [env: NOTEBRIDGE_DB] [default: {db}]"
            ))
        })
        .mut_arg("config", |a| {
            a.help(format!(
                "Optional TOML config [env: NOTEBRIDGE_CONFIG] [default: {config}, if it exists]"
            ))
        })
}

/// Entry point used by `main.rs`.
pub fn main() -> ExitCode {
    main_from(std::env::args_os())
}

/// Runs the command line `args` (program name first) in this process, as the binary would.
pub fn main_from<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let args: Vec<std::ffi::OsString> = args.into_iter().map(Into::into).collect();
    let parsed = command()
        .try_get_matches_from(&args)
        .and_then(|m| <Cli as clap::FromArgMatches>::from_arg_matches(&m));
    let cli = match parsed {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => {
                    // A script that asked for JSON gets its error as JSON too.
                    if args.iter().any(|a| a == "--json") {
                        let message = e.kind().as_str().unwrap_or("invalid arguments").to_owned();
                        let detail = e.render().to_string();
                        let doc = serde_json::json!({
                            "version": env!("CARGO_PKG_VERSION"),
                            "error": {"message": message, "causes": [detail.trim()], "hint": "see `notebridge help`"},
                            "exit": Exit::Usage.code(),
                        });
                        println!("{doc}");
                    }
                    Exit::Usage.into()
                }
            };
        }
    };
    init_logging(&cli.global);
    let printer = Printer::new(&cli.global);
    if let Some(path) = &cli.global.trace {
        // Read beside the trace's path, before the other settings, so that their errors are traced.
        let bodies = std::env::var(crate::settings::env::TRACE_BODIES)
            .ok()
            .and_then(|v| (crate::settings::decl::TRACE_BODIES.parse)(&v).ok())
            .unwrap_or(false);
        if let Err(e) = crate::trace::install(path, bodies) {
            let err = anyhow::Error::new(exit::CliError::usage(format!(
                "--trace / NOTEBRIDGE_TRACE: cannot write {}: {e}",
                path.display()
            )));
            printer.error(&err, Exit::Usage, None);
            return Exit::Usage.into();
        }
    }
    let result = run(cli, &printer);
    crate::trace::flush();
    match result {
        Ok(exit) => exit.into(),
        Err(failure) => {
            printer.error(failure.error(), failure.exit(), failure.hint());
            failure.exit().into()
        }
    }
}

fn run(cli: Cli, printer: &Printer) -> CliResult<Exit> {
    crate::crash::arm()?;
    let flags = FlagSettings {
        db: cli.global.db.clone(),
        config: cli.global.config.clone(),
    };
    // Settings are loaded lazily: `convert` is offline and a broken config file must not stop it.
    let settings = || Settings::load(&flags);
    match cli.command {
        Command::Convert(a) => convert::run(printer, a),
        Command::Completions(a) => completions::run_completions(a),
        Command::Man => completions::run_man(printer),
        Command::Login(a) => login::run(&settings()?, printer, a),
        Command::Accounts(a) => accounts::run_list(&settings()?, printer, a),
        Command::Logout(a) => accounts::run_logout(&settings()?, printer, a),
        // Offline: no settings, no database, no network.
        Command::Scan(a) if a.from.is_some() => scan_files::run(printer, a),
        Command::Scan(a) => scan::run(&settings()?, printer, a),
        Command::Sources(a) => sources::run(&settings()?, printer, a),
        Command::Migrate(a) => migrate::run(&settings()?, printer, a),
        Command::Sync(a) => sync::run(&settings()?, printer, a),
        Command::Resolve(a) => resolve::run(&settings()?, printer, a),
        Command::Status(a) => status::run(&settings()?, printer, a),
        Command::Verify(a) => verify::run(&settings()?, printer, a),
        Command::Doctor(a) => doctor::run(&settings()?, printer, a),
        Command::Report(a) => report::run(&settings()?, printer, a),
    }
}

/// The async runtime for commands that talk to the network.
fn runtime() -> CliResult<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(Failure::unexpected)
}

fn init_logging(g: &GlobalArgs) {
    use tracing_subscriber::EnvFilter;
    let default = match (g.quiet, g.verbose) {
        (true, _) => "error",
        // The OneNote file parser's warnings are about a file's internals, which the reader
        // reports as a section's reason when they matter.
        (false, 0) => "warn,onenote_parser=error",
        (false, 1) => "notebridge=info,warn,onenote_parser=error",
        (false, _) => "notebridge=debug,info",
    };
    let filter = std::env::var(crate::settings::env::LOG)
        .ok()
        .or_else(|| std::env::var("RUST_LOG").ok())
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(output::log_line)
        .with_ansi(output::stderr_colour())
        .with_target(false)
        .try_init();
}
