//! doctor's checks of what the Notion token is and may do: its kind (an internal connection or a
//! personal access token, from `GET /v1/users/me`), the workspace's upload limit and where it comes
//! from (that answer, or Notion's refusal of a file too large), and the capabilities proven on the
//! target page without writing content.

use serde_json::Value;

use super::{human_bytes, Check};
use crate::cli::exit::Exit;
use crate::clock::UnixMillis;
use crate::failure::Classify;
use crate::notion::client::{NotionClient, NotionError, Refusal};
use crate::notion::token::{reported_upload_limit, TokenKind};
use crate::notion::upload_refusals::UploadRefusal;

/// The token's kind, as `notion_token` says it.
pub(super) fn token_kind(me: &Value) -> (TokenKind, Check) {
    let kind = TokenKind::of(me);
    let check = Check::pass("notion_token", format!("valid: {}", kind.describe()));
    (kind, check)
}

/// The per-file upload limit and where it comes from: `GET /v1/users/me`, else the smallest
/// upload Notion refused this token within the last day (`refused`, read at `now`).
pub(super) fn upload_limit(
    me: &Value,
    kind: &TokenKind,
    refused: Option<&UploadRefusal>,
    now: UnixMillis,
) -> Check {
    let detail = match (reported_upload_limit(me), kind, refused) {
        (Some(max), _, _) => format!(
            "files up to {}, as GET /v1/users/me reports (larger ones become placeholders)",
            human_bytes(max)
        ),
        (None, TokenKind::Personal { .. }, Some(r)) => format!(
            "not reported to a personal access token; learned from Notion's refusal of a \
             {}-byte upload {} min ago: files of {} bytes or more become placeholders without \
             being sent (the refusal is used for a day, then such a file is tried again)",
            r.size,
            (now - r.refused_at).max(0) / 60_000,
            r.size
        ),
        (None, TokenKind::Personal { .. }, None) => {
            "not reported to a personal access token: files \
             are sent, and one over the workspace's limit is refused by Notion and becomes a \
             placeholder saying so (nothing fails)"
                .to_owned()
        }
        (None, TokenKind::Integration { .. }, _) => {
            "not reported; 5 MB assumed (the Free plan's), larger files become placeholders"
                .to_owned()
        }
    };
    Check::pass("upload_limit", detail)
}

/// The capabilities proven on `page` (already read, so Read content holds): Update content by an
/// update that changes nothing, as a run proves it just before its first write
/// (`notion::proof`; nothing is remembered between runs). Insert content cannot be proven without
/// writing: the run's first write proves it.
pub(super) async fn capabilities(client: &NotionClient, page: &str, kind: &TokenKind) -> Check {
    match client.prove_update(page).await {
        Ok(()) => Check::pass(
            "notion_capabilities",
            "Read content (the page was read) and Update content (an update that changes \
             nothing was accepted) proven; a run proves Update content the same way just before \
             its first write (a run with nothing to change sends none), and its first write \
             proves Insert content",
        ),
        Err(
            e @ NotionError::Refused {
                kind: Refusal::MissingCapability,
                ..
            },
        ) => Check::fail(
            "notion_capabilities",
            Some(Exit::Usage),
            format!("Update content is missing: {e}"),
            match kind {
                TokenKind::Personal { .. } => {
                    "the token's creator cannot edit this page: give them edit access to it"
                }
                TokenKind::Integration { .. } => {
                    "give the integration Read, Update and Insert content at \
                     https://www.notion.so/profile/integrations (Capabilities)"
                }
            },
        ),
        Err(e) => Check::fail(
            "notion_capabilities",
            e.meaning().map(Exit::from),
            format!("Update content could not be checked: {e}"),
            "run doctor again",
        ),
    }
}

/// A 404 to a personal access token: the page is gone or its creator cannot open it.
pub(super) fn not_visible(name: &str, what: &str) -> Check {
    Check::fail(
        name,
        Some(Exit::Usage),
        format!("{what} does not exist, or the person whose personal access token this is cannot open it"),
        "open the page in Notion as that person (a personal access token needs no Connections)",
    )
}
