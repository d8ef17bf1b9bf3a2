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
mod completions_cli;
mod convert_cli;
mod convert_fidelity;
mod convert_fixtures;
mod convert_hostile;
mod convert_math;
mod convert_props;
mod convert_validate;
mod doctor_cli;
mod graph_listings;
mod graph_proxy;
mod graph_scan;
mod ink_migrate;
mod ink_migrate_placement;
mod ink_render;
mod limiter_core;
mod limiter_lanes;
mod limiter_props;
mod limiter_regressions;
mod mathml_convert;
mod migrate_cli;
mod migrate_e2e;
mod migrate_faults_e2e;
mod migrate_hostile;
mod migrate_image_fallback;
mod migrate_outage;
mod migrate_support;
mod migrate_teams;
mod notion_accepted_values;
mod notion_plan_limits;
mod notion_refusals;
mod notion_support;
mod notion_uploads_once;
mod notion_uploads_rate;
mod notion_writer;
mod output_cli;
mod public_samples;
mod queue_pipeline;
mod report_cli;
mod scan_cli;
mod sources_cli;
mod status_cli;
mod trace_cli;
mod verify_cli;
mod verify_regressions;
mod verify_report;
mod verify_support;
