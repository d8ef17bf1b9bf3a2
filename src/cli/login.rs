//! `notebridge login`: device-code sign-in, then `/me`, then the account is stored.

use std::sync::Arc;

use clap::Args;
use serde_json::json;

use super::output::Printer;
use crate::auth::{fetch_me, sign_in, AuthError, DevicePrompt, Identity};
use crate::cli::exit::{CliResult, Exit, Failure};
use crate::clock::Clock;
use crate::settings::Settings;
use crate::store::accounts::{Account, SignInSaved};
use crate::store::Db;

/// Arguments of `login`.
#[derive(Debug, Args)]
pub struct LoginArgs {
    /// The local name of the account to sign in.
    #[arg(long, default_value = "default", value_name = "NAME", value_parser = account_name)]
    pub account: String,
    /// Replace an account of that name that belongs to another user.
    #[arg(long)]
    pub force: bool,
}

/// Longest local account name: it is shown in progress lines, reports and Notion pages' labels.
const MAX_ACCOUNT_NAME: usize = 64;

/// A new account's local name. A group's or site's work is queued under `{account}/group:{id}`
/// (see `graph::sources::account_of_key`), so a `/` in a name would make one account's key read
/// as another's source; control characters would garble every line that shows the name.
fn account_name(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        return Err("an account name cannot be empty".into());
    }
    if s.chars().count() > MAX_ACCOUNT_NAME {
        return Err(format!(
            "an account name has at most {MAX_ACCOUNT_NAME} characters"
        ));
    }
    if let Some(c) = s.chars().find(|c| *c == '/' || c.is_control()) {
        return Err(format!(
            "an account name cannot contain {c:?} (use letters, digits, '-', '_', '.', '@')"
        ));
    }
    Ok(s.to_owned())
}

/// Runs the sign-in; Ctrl-C stops it cleanly with nothing stored.
pub fn run(settings: &Settings, printer: &Printer, args: LoginArgs) -> CliResult<Exit> {
    // Configuration problems surface before anything touches the network or the database.
    let id = Identity::from_settings(settings)?;
    let db = Arc::new(Db::open(&settings.db_path)?);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(Failure::unexpected)?;
    rt.block_on(async {
        tokio::select! {
            r = login(&id, &db, printer, &args) => r,
            _ = tokio::signal::ctrl_c() => Err(AuthError::Cancelled.into()),
        }
    })
}

async fn login(id: &Identity, db: &Db, printer: &Printer, args: &LoginArgs) -> CliResult<Exit> {
    let clock = Clock::system();
    let tokens = sign_in(id, &clock, |p| show_prompt(printer, p)).await?;
    let me = fetch_me(id, &tokens.access).await?;
    let upn = me.principal();
    let now = clock.now_ms();
    let account = Account {
        name: args.account.clone(),
        user_id: me.id.clone(),
        user_principal_name: upn.clone(),
        display_name: me.display_name.clone(),
        refresh_token: tokens.refresh.as_ref().map(|s| s.expose().to_owned()),
        access_token: Some(tokens.access.secret().to_owned()),
        access_expires_at: Some(tokens.access.expires_at()),
        updated_at: now,
    };
    if account.refresh_token.is_none() {
        tracing::warn!(
            "no refresh token was granted (is offline_access among the scopes?); the sign-in \
             will not outlive the access token"
        );
    }
    let saved = db
        .save_sign_in(&account, args.force)
        .map_err(|source| AuthError::Store {
            account: args.account.clone(),
            source: Box::new(source),
        })?;
    if let SignInSaved::RefusedOtherUser { existing } = &saved {
        return Err(AuthError::DifferentUser {
            account: args.account.clone(),
            existing: existing.clone(),
            new: upn,
        }
        .into());
    }
    db.save_granted_scopes(&args.account, &tokens.granted)
        .map_err(|source| AuthError::Store {
            account: args.account.clone(),
            source: Box::new(source),
        })?;
    if printer.json {
        printer.json_line(&json!({
            "account": args.account,
            "user_id": me.id,
            "user_principal_name": upn,
            "display_name": me.display_name,
            "signed_in": true,
        }));
    } else {
        let what = match saved {
            SignInSaved::Created => "signed in".to_owned(),
            SignInSaved::Renewed => "signed in again".to_owned(),
            SignInSaved::ReplacedOtherUser { previous } => {
                format!("signed in (replacing {previous})")
            }
            SignInSaved::RefusedOtherUser { .. } => unreachable!("handled above"),
        };
        let who = match &me.display_name {
            Some(d) => format!("{d} <{upn}>"),
            None => upn.clone(),
        };
        printer.out(format!("{what}: {who} as account {:?}", args.account));
    }
    Ok(Exit::Done)
}

/// Shows the code at once: one flushed JSON line on stdout with `--json`, else text on stderr
/// (even with `--quiet`: without it nobody can sign in).
fn show_prompt(printer: &Printer, p: &DevicePrompt) {
    if printer.json {
        // The contract fixes this line's shape exactly (a wrapper reads it while we poll).
        printer.json_exact(&json!({
            "verification_uri": p.verification_uri,
            "user_code": p.user_code,
            "expires_in": p.expires_in.as_secs(),
        }));
    } else {
        let minutes = p.expires_in.as_secs().div_ceil(60);
        eprintln!(
            "To sign in, open {} in a browser and enter the code {} (valid for {} minute{}).",
            p.verification_uri,
            p.user_code,
            minutes,
            if minutes == 1 { "" } else { "s" }
        );
    }
}

#[cfg(test)]
mod tests {
    use super::account_name;

    #[test]
    fn account_names_that_would_read_as_another_key_are_refused() {
        for ok in ["default", "alice@contoso.com", "team-2.b_x", "Zoë"] {
            assert_eq!(account_name(ok).as_deref(), Ok(ok));
        }
        for (bad, says) in [
            ("", "empty"),
            ("  ", "empty"),
            ("alice/group:1", "'/'"),
            ("a\nb", "'\\n'"),
            (&"x".repeat(65), "at most 64"),
        ] {
            let e = account_name(bad).unwrap_err();
            assert!(e.contains(says), "{bad:?}: {e}");
        }
    }
}
