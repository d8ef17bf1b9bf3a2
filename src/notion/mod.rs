//! Notion: the API client, its pacing, and the writer that turns converted pages into Notion pages
//! exactly once.

pub mod client;
pub mod conflict;
pub mod database;
pub mod database_row;
pub mod degrade;
pub mod item;
pub mod journal;
pub mod listed;
pub mod pace;
pub mod pace_ledger;
pub mod rate;
pub mod split;
pub mod steps;
pub mod token;
pub mod upload;
pub mod upload_refusals;
pub mod writer;
