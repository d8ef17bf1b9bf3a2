//! notebridge: moves OneNote notebooks into Notion, end to end and unattended, while staying inside
//! Microsoft Graph's OneNote throttling limits.
//!
//! The binary (`src/main.rs`) only hands over to [`cli::main`]; everything else lives in modules that
//! each do one job.

pub mod auth;
pub mod cli;
pub mod clock;
pub mod convert;
pub mod failure;
pub mod graph;
pub mod ink;
pub mod limiter;
pub mod mathml;
pub mod net;
pub mod notion;
pub mod queue;
pub mod settings;
pub mod store;
pub mod verify;
