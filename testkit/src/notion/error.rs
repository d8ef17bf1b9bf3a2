//! Notion's JSON error answers.

use axum::http::StatusCode;
use serde_json::Value;

/// An error answer: HTTP status, Notion `code` and message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{status} {code}: {message}")]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Notion error code, e.g. `validation_error`.
    pub code: &'static str,
    /// Human-readable message.
    pub message: String,
    /// The body's `additional_data`, when the answer carries one (the block limit, a 503 that saved).
    pub additional_data: Option<Value>,
}

impl ApiError {
    /// Any status and code.
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        Self {
            status,
            code,
            message: message.into(),
            additional_data: None,
        }
    }

    /// The same answer carrying `additional_data`.
    pub fn with_data(mut self, additional_data: Value) -> Self {
        self.additional_data = Some(additional_data);
        self
    }

    /// 400 `validation_error`.
    pub fn validation(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "validation_error", message)
    }

    /// 400 `validation_error` from a body rule.
    pub fn body(e: &super::validate::ValidationError) -> Self {
        Self::validation(format!("body failed validation: {}", e.message))
    }

    /// 404 `object_not_found` for an id the integration cannot see.
    pub fn not_found(kind: &str, id: &str) -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            "object_not_found",
            format!(
                "Could not find {kind} with ID: {id}. Make sure the relevant pages and databases are shared with your integration."
            ),
        )
    }

    /// The Notion code that goes with an injected HTTP status.
    pub fn for_status(status: u16) -> Self {
        let (code, msg) = match status {
            409 => (
                "conflict_error",
                "Conflict occurred while saving. Please try again.",
            ),
            500 => ("internal_server_error", "Unexpected error occurred."),
            502 => ("bad_gateway", "Bad gateway."),
            503 => (
                "service_unavailable",
                "Notion is unavailable, please try again later.",
            ),
            504 => ("gateway_timeout", "Gateway timeout."),
            529 => (
                "service_overload",
                "Notion is overloaded, please try again later.",
            ),
            _ => ("internal_server_error", "Unexpected error occurred."),
        };
        Self::new(
            StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
            code,
            msg,
        )
    }
}
