//! `notebridge accounts` and `notebridge logout`.

use clap::Args;
use serde_json::json;

use super::output::Printer;
use crate::cli::exit::{CliError, CliResult, Exit, Failure};
use crate::clock::Clock;
use crate::settings::Settings;
use crate::store::Db;

/// Arguments of `accounts`.
#[derive(Debug, Args)]
pub struct AccountsArgs {}

/// Arguments of `logout`.
#[derive(Debug, Args)]
pub struct LogoutArgs {
    /// The account to forget.
    #[arg(long, default_value = "default", value_name = "NAME")]
    pub account: String,
}

/// Lists accounts (never their tokens).
pub fn run_list(settings: &Settings, printer: &Printer, _args: AccountsArgs) -> CliResult<Exit> {
    let db = Db::open(&settings.db_path)?;
    let accounts = db
        .accounts()
        .map_err(|e| Failure::from(e).context("listing accounts"))?;
    if printer.json {
        let list: Vec<_> = accounts
            .iter()
            .map(|a| {
                json!({
                    "name": a.name,
                    "user_id": a.user_id,
                    "user_principal_name": a.user_principal_name,
                    "display_name": a.display_name,
                    "signed_in": a.signed_in(),
                })
            })
            .collect();
        printer.json_line(&json!({ "accounts": list }));
    } else if accounts.is_empty() {
        printer.out("no accounts; sign in with `notebridge login [--account NAME]`");
    } else {
        for a in &accounts {
            let state = if a.signed_in() {
                "signed in"
            } else {
                "signed out"
            };
            printer.out(format!("{}\t{}\t{}", a.name, a.user_principal_name, state));
        }
    }
    Ok(Exit::Done)
}

/// Forgets an account's tokens; inventory and jobs stay.
pub fn run_logout(settings: &Settings, printer: &Printer, args: LogoutArgs) -> CliResult<Exit> {
    let db = Db::open(&settings.db_path)?;
    let now = Clock::system().now_ms();
    if !db.forget_tokens(&args.account, now)? {
        return Err(CliError::usage(format!(
            "no account named {:?} (see `notebridge accounts`)",
            args.account
        ))
        .into());
    }
    if printer.json {
        printer.json_line(&json!({ "account": args.account, "signed_in": false }));
    } else {
        printer.note(format!(
            "signed out {}: tokens deleted, inventory and jobs kept",
            args.account
        ));
    }
    Ok(Exit::Done)
}
