//! The product's integration tests, in one binary (one link instead of one per file). Each module is
//! one area; the `*_support` modules are the shared set-up (the lab, the real binary, the checks).
//!
//! Tests that read the public OneNote samples beside the clone (`../shared/fixtures`) skip, saying
//! so, when that folder is absent.

mod auth_errors;
mod auth_login;
mod auth_logs;
mod auth_support;
mod auth_tokens;
mod auth_transient;
mod convert_cli;
mod convert_fixtures;
mod convert_math;
mod convert_props;
mod convert_validate;
mod graph_listings;
mod graph_scan;
mod ink_migrate;
mod ink_migrate_placement;
mod ink_render;
mod limiter_core;
mod limiter_props;
mod limiter_regressions;
mod mathml_convert;
mod migrate_cli;
mod migrate_e2e;
mod migrate_outage;
mod migrate_support;
mod notion_support;
mod notion_uploads_rate;
mod notion_writer;
mod public_samples;
mod scan_cli;
mod status_cli;
mod verify_cli;
mod verify_regressions;
mod verify_report;
mod verify_support;
