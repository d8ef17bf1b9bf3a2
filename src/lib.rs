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
//! - [`graph`]: the OneNote client, `$batch`, and the scan that fills the inventory; [`drive`]: a
//!   synced notebook's section files read from OneDrive or SharePoint, paced apart from OneNote's limits.
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
//! - [`clock`]: the time and randomness seams that make the limiter's tests exact; [`mime`]: the
//!   one table of file types (extensions, MIME types, what Notion takes); [`crash`]: the test-only
//!   switch that stops a run hard at one of its crash points.
//!
//! The test servers that stand in for Microsoft and Notion live in the `notebridge-testkit` crate,
//! never in this one.

// The modules in layers, lowest first: a module imports only from its own layer and those above
// it in this list (`layering` checks it).

// Foundations: time, crash points, failure meanings, reachability, proxies and TLS, the HTTP trace,
// file types.
pub mod clock;
pub mod crash;
pub mod failure;
pub mod mime;
pub mod net;
pub mod platform;
pub mod trace;
pub mod transport;
// What the user set.
pub mod settings;
// The state database.
pub mod store;
// Sign-in and the Graph budgets.
pub mod auth;
pub mod limiter;
// Reading OneNote, and turning its pages into blocks.
pub mod convert;
pub mod drive;
pub mod graph;
pub mod ink;
pub mod mathml;
pub mod onefile;
// Writing Notion.
pub mod notion;
// Runs, checks and reports over all of the above.
pub mod imports;
pub mod queue;
pub mod report;
pub mod sync;
pub mod verify;
// A whole `migrate`.
pub mod engine;
// The command line.
pub mod cli;

#[cfg(test)]
mod layering;
