//! The command line: argument parsing, logging set-up, and the one place where an error becomes a
//! message and an exit code. Each subcommand lives in its own file with a `run` function.

mod accounts;
mod convert;
mod estimate;
pub mod exit;
mod login;
mod migrate;
pub mod output;
mod progress;
mod scan;
mod status;
mod verify;

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

use crate::cli::exit::{classify, Exit};
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

/// Flags accepted before or after the subcommand.
#[derive(Debug, Clone, Args)]
pub struct GlobalArgs {
    /// The SQLite state file [env: NOTEBRIDGE_DB] [default: <data dir>/notebridge/notebridge.db]
    #[arg(long, global = true, value_name = "PATH")]
    pub db: Option<PathBuf>,
    /// Optional TOML config [env: NOTEBRIDGE_CONFIG] [default: <config dir>/notebridge/config.toml]
    #[arg(long, global = true, value_name = "PATH")]
    pub config: Option<PathBuf>,
    /// Machine-readable output on stdout.
    #[arg(long, global = true)]
    pub json: bool,
    /// Only errors on stderr.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// More detail on stderr (-vv for debug). NOTEBRIDGE_LOG / RUST_LOG filters also work.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// No progress bars (they are also off when stderr is not a terminal).
    #[arg(long, global = true)]
    pub no_progress: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Sign in to a Microsoft account with a device code.
    Login(login::LoginArgs),
    /// List signed-in accounts.
    Accounts(accounts::AccountsArgs),
    /// Forget an account's tokens (its inventory and jobs are kept).
    Logout(accounts::LogoutArgs),
    /// Read the account's notebooks, section groups, sections and pages into the inventory.
    Scan(scan::ScanArgs),
    /// Migrate notebooks into Notion (or `--resume` what is queued).
    Migrate(migrate::MigrateArgs),
    /// Convert one saved OneNote page HTML file to Notion blocks, offline.
    Convert(convert::ConvertArgs),
    /// Per account: jobs by state, pages migrated, failures, changed pages and the limiter's state.
    Status(status::StatusArgs),
    /// Prove the migration complete: reconcile what is in Notion with the OneNote inventory.
    Verify(verify::VerifyArgs),
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
    let cli = match Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            return match e.kind() {
                clap::error::ErrorKind::DisplayHelp | clap::error::ErrorKind::DisplayVersion => {
                    ExitCode::SUCCESS
                }
                _ => Exit::Usage.into(),
            };
        }
    };
    init_logging(&cli.global);
    let printer = Printer::new(&cli.global);
    match run(cli, &printer) {
        Ok(exit) => exit.into(),
        Err(err) => {
            let exit = classify(&err);
            printer.error(&err);
            exit.into()
        }
    }
}

fn run(cli: Cli, printer: &Printer) -> anyhow::Result<Exit> {
    let flags = FlagSettings {
        db: cli.global.db.clone(),
        config: cli.global.config.clone(),
    };
    // Settings are loaded lazily: `convert` is offline and a broken config file must not stop it.
    let settings = || Settings::load(&flags);
    match cli.command {
        Command::Convert(a) => convert::run(printer, a),
        Command::Login(a) => login::run(&settings()?, printer, a),
        Command::Accounts(a) => accounts::run_list(&settings()?, printer, a),
        Command::Logout(a) => accounts::run_logout(&settings()?, printer, a),
        Command::Scan(a) => scan::run(&settings()?, printer, a),
        Command::Migrate(a) => migrate::run(&settings()?, printer, a),
        Command::Status(a) => status::run(&settings()?, printer, a),
        Command::Verify(a) => verify::run(&settings()?, printer, a),
    }
}

/// The async runtime for commands that talk to the network.
fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?)
}

fn init_logging(g: &GlobalArgs) {
    use tracing_subscriber::EnvFilter;
    let default = match (g.quiet, g.verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "notebridge=info,warn",
        (false, _) => "notebridge=debug,info",
    };
    let filter = std::env::var(crate::settings::env::LOG)
        .ok()
        .or_else(|| std::env::var("RUST_LOG").ok())
        .and_then(|f| EnvFilter::try_new(f).ok())
        .unwrap_or_else(|| EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .with_target(false)
        .try_init();
}
