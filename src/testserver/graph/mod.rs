//! Microsoft Graph OneNote test server.

pub mod model;
