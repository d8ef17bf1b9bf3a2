//! notebridge: moves OneNote notebooks into Notion, end to end and unattended, while staying inside
//! Microsoft Graph's OneNote throttling limits.
//!
//! The binary (`src/main.rs`) only hands over to [`cli::main`]. A page flows through the modules in
//! this order:
//!
//! - [`settings`]: every flag, variable and config key, merged and validated before any work.
//! - [`store`]: the SQLite state (accounts, inventory, job queue, Notion records, limiter ledger).
//! - [`auth`]: device-code sign-in and silent refresh; secrets never leave it in clear.
//! - [`limiter`]: the Graph budgets of every user (and of the app, when set), lanes and breakers.
//! - [`graph`]: the OneNote client, `$batch`, and the scan that fills the inventory.
//! - [`convert`] (with [`ink`] and [`mathml`]): OneNote HTML to Notion blocks, within Notion's limits.
//! - [`onefile`]: OneNote's own files (`.one`, `.onetoc2`, folders, `.onepkg`) read into the same
//!   inventory and the same blocks, with no account.
//! - [`notion`]: the Notion client, request splitting and the exactly-once writer.
//! - [`queue`]: the persistent job runner that drains the plan through all of the above;
//!   [`engine`]: a `migrate` run around it (accounts, retries, planning and draining, summary).
//! - [`verify`]: reads Notion back and reconciles it with what was planned; [`report`] shows it all.
//! - [`failure`]: what an error means; [`cli`] alone turns that into the contract's exit codes.
//! - [`net`]: whether the services answer at all (an outage is waited out, never an item's fault);
//!   [`trace`]: the redacted record of every HTTP exchange, when asked for.
//! - [`clock`]: the time and randomness seams that make the limiter's tests exact.
//!
//! The test servers that stand in for Microsoft and Notion live in the `notebridge-testkit` crate,
//! never in this one.

pub mod auth;
pub mod cli;
pub mod clock;
pub mod convert;
pub mod engine;
pub mod failure;
pub mod graph;
pub mod imports;
pub mod ink;
pub mod limiter;
pub mod mathml;
pub mod net;
pub mod notion;
pub mod onefile;
pub mod queue;
pub mod report;
pub mod settings;
pub mod store;
pub mod trace;
pub mod verify;
