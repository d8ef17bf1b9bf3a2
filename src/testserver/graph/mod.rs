//! Microsoft Graph OneNote test server.

pub mod faults;
pub mod model;
pub mod stats;
pub mod throttle;
