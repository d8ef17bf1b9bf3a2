//! Behaviours of real workspaces that a test turns on: the plan's block limit, a missing
//! capability, refused link schemes and image URLs. Each is off by default (an unlimited workspace,
//! an integration with every capability, every well-formed URL taken).

use axum::http::StatusCode;

use serde_json::Value;

use super::error::ApiError;
use super::Endpoint;

const IMAGE_EXTENSIONS: &[&str] = &[
    ".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".tif", ".tiff", ".heic", ".ico",
];

/// The switches of one server.
#[derive(Clone, Debug)]
pub struct Switches {
    /// Lifetime blocks the workspace may hold (Free plan with several members: 1,000); a request that
    /// creates blocks once the workspace holds this many is answered `403 restricted_resource`. The
    /// request that reaches the limit still succeeds, and deleting blocks gives nothing back.
    pub block_limit: Option<usize>,
    /// Whether the integration has the Insert content capability.
    pub insert_content: bool,
    /// Whether the integration has the Update content capability (updating a page or block,
    /// trashing); without it those answer `403 restricted_resource` (reference/update-a-block).
    pub update_content: bool,
    /// The token is a personal access token of the person named so: `GET /v1/users/me` answers
    /// that person (no `bot`, so no `workspace_limits`), and the Free plan's block limit does not
    /// apply to it (reference/workspace-block-limits). `None`: an internal connection's token.
    pub personal_token_of: Option<String>,
    /// Answers' messages in another language than English (Notion localises them), so that only
    /// `code` and `additional_data` can be read.
    pub localised_messages: bool,
    /// Link schemes refused in rich text (e.g. `mailto`), answered as Notion does: `400
    /// validation_error` "Content creation Failed. Fix the following: \nInvalid URL for link.", once
    /// per refused link and without a path.
    pub refused_link_schemes: Vec<String>,
    /// Refuse external image URLs Notion could not fetch as an image (not http(s), or no image
    /// extension), answered "Invalid image url." the same way.
    pub refuse_unusable_image_urls: bool,
}

impl Default for Switches {
    fn default() -> Self {
        Self {
            block_limit: None,
            insert_content: true,
            update_content: true,
            personal_token_of: None,
            localised_messages: false,
            refused_link_schemes: Vec::new(),
            refuse_unusable_image_urls: false,
        }
    }
}

impl Switches {
    /// The refusal of a request to `e` when the workspace holds `blocks` blocks (trashed included).
    pub fn refuse(&self, e: Endpoint, blocks: usize) -> Option<ApiError> {
        let updates = matches!(
            e,
            Endpoint::UpdatePage
                | Endpoint::UpdateBlock
                | Endpoint::DeleteBlock
                | Endpoint::UpdateDataSource
                | Endpoint::UpdateDatabase
                | Endpoint::MovePage
        );
        if updates && !self.update_content {
            return Some(ApiError::new(
                StatusCode::FORBIDDEN,
                "restricted_resource",
                self.say(
                    "Insufficient permissions for this endpoint: the integration does not have the update content capability.",
                    "Autorisations insuffisantes pour ce point de terminaison.",
                ),
            ));
        }
        if !matches!(
            e,
            Endpoint::CreatePage | Endpoint::AppendChildren | Endpoint::CreateDatabase
        ) {
            return None;
        }
        if !self.insert_content {
            return Some(ApiError::new(
                StatusCode::FORBIDDEN,
                "restricted_resource",
                self.say(
                    "Insufficient permissions for this endpoint: the integration does not have the insert content capability.",
                    "Autorisations insuffisantes pour ce point de terminaison.",
                ),
            ));
        }
        if self.personal_token_of.is_none() && self.block_limit.is_some_and(|l| blocks >= l) {
            // Documented shape (developers.notion.com/reference/workspace-block-limits): the kind
            // of limit is in `additional_data.block_limit`; the message is in the workspace's
            // language, so only the data tells it from a missing capability.
            let message = self.say(
                "This workspace has reached its block limit. Upgrade the workspace's plan to add more content.",
                "Cet espace de travail a atteint sa limite de blocs. Passez à un forfait payant pour ajouter du contenu.",
            );
            return Some(
                ApiError::new(StatusCode::FORBIDDEN, "restricted_resource", message)
                    .with_data(serde_json::json!({"block_limit": "block_creation"})),
            );
        }
        None
    }

    /// A message in English, or in French with [`Switches::localised_messages`].
    fn say(&self, english: &'static str, french: &'static str) -> &'static str {
        if self.localised_messages {
            french
        } else {
            english
        }
    }

    /// The refusal of a body's values (links, external images) on a write that carries content.
    pub fn refuse_content(&self, e: Endpoint, body: &Value) -> Option<ApiError> {
        if !matches!(
            e,
            Endpoint::CreatePage | Endpoint::AppendChildren | Endpoint::UpdateBlock
        ) || (self.refused_link_schemes.is_empty() && !self.refuse_unusable_image_urls)
        {
            return None;
        }
        let mut complaints = Vec::new();
        let mut stack = vec![body];
        while let Some(v) = stack.pop() {
            match v {
                Value::Object(o) => {
                    if let Some(url) = o
                        .get("text")
                        .and_then(|t| t.get("link"))
                        .and_then(|l| l.get("url"))
                        .and_then(Value::as_str)
                    {
                        let scheme = url.split(':').next().unwrap_or("").to_ascii_lowercase();
                        if self.refused_link_schemes.contains(&scheme) {
                            complaints.push("Invalid URL for link.");
                        }
                    }
                    if let Some(url) = o
                        .get("image")
                        .and_then(|i| i.get("external"))
                        .and_then(|x| x.get("url"))
                        .and_then(Value::as_str)
                    {
                        if self.refuse_unusable_image_urls && !usable_image(url) {
                            complaints.push("Invalid image url.");
                        }
                    }
                    stack.extend(o.values());
                }
                Value::Array(a) => stack.extend(a.iter()),
                _ => {}
            }
        }
        (!complaints.is_empty()).then(|| {
            ApiError::validation(format!(
                "Content creation Failed. Fix the following: \n{}",
                complaints.join("\n")
            ))
        })
    }
}

fn usable_image(url: &str) -> bool {
    let u = url.to_ascii_lowercase();
    let path = u.split(['?', '#']).next().unwrap_or(&u);
    (u.starts_with("https://") || u.starts_with("http://"))
        && IMAGE_EXTENSIONS.iter().any(|e| path.ends_with(e))
}
