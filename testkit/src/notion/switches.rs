//! Behaviours of real workspaces that a test turns on: the plan's block limit, a missing
//! capability. Each is off by default (an unlimited workspace, an integration with every capability).

use axum::http::StatusCode;

use super::error::ApiError;
use super::Endpoint;

/// The switches of one server.
#[derive(Clone, Debug)]
pub struct Switches {
    /// Lifetime blocks the workspace may hold (Free plan with several members: 1,000); a request that
    /// creates blocks once the workspace holds this many is answered `403 restricted_resource`. The
    /// request that reaches the limit still succeeds, and deleting blocks gives nothing back.
    pub block_limit: Option<usize>,
    /// Whether the integration has the Insert content capability.
    pub insert_content: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Self {
            block_limit: None,
            insert_content: true,
        }
    }
}

impl Switches {
    /// The refusal of a request to `e` when the workspace holds `blocks` blocks (trashed included).
    pub fn refuse(&self, e: Endpoint, blocks: usize) -> Option<ApiError> {
        if !matches!(e, Endpoint::CreatePage | Endpoint::AppendChildren) {
            return None;
        }
        if !self.insert_content {
            return Some(ApiError::new(
                StatusCode::FORBIDDEN,
                "restricted_resource",
                "Insufficient permissions for this endpoint: the integration does not have the insert content capability.",
            ));
        }
        if self.block_limit.is_some_and(|l| blocks >= l) {
            return Some(ApiError::new(
                StatusCode::FORBIDDEN,
                "restricted_resource",
                "This workspace has reached its block limit. Upgrade the workspace's plan to add more content.",
            ));
        }
        None
    }
}
