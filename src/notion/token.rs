//! What kind of token `NOTION_TOKEN` is, from `GET /v1/users/me`: an internal connection's token
//! answers its bot (with the workspace's name and upload limit), a personal access token answers the
//! person who made it (developers.notion.com/guides/get-started/personal-access-tokens,
//! reference/get-self: no `bot`, so no `workspace_limits`). The answer's `type` tells them apart;
//! the token's prefix is not documented and is never read.

use serde_json::Value;

/// The kind of token, with the name Notion gives its holder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenKind {
    /// An internal (or public) connection's token: a bot.
    Integration {
        /// The connection's name.
        name: String,
        /// The workspace's name, when the answer gives it.
        workspace: Option<String>,
    },
    /// A personal access token: it acts as this person, reaches every page they can open, needs no
    /// Connections and is not held to the Free plan's block limit.
    Personal {
        /// The person's name.
        name: String,
    },
}

impl TokenKind {
    /// The kind `GET /v1/users/me` answered: a `person` is a personal access token, anything else
    /// (a `bot`) a connection's.
    pub fn of(me: &Value) -> TokenKind {
        let name = me["name"].as_str().filter(|n| !n.trim().is_empty());
        if me["type"] == "person" {
            TokenKind::Personal {
                name: name.unwrap_or("an unnamed person").to_owned(),
            }
        } else {
            TokenKind::Integration {
                name: name.unwrap_or("the integration").to_owned(),
                workspace: me["bot"]["workspace_name"].as_str().map(str::to_owned),
            }
        }
    }

    /// Whether it is a personal access token.
    pub fn is_personal(&self) -> bool {
        matches!(self, TokenKind::Personal { .. })
    }

    /// How doctor and the run name it.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Personal { name } => format!("personal access token of {name}"),
            TokenKind::Integration {
                name,
                workspace: Some(w),
            } => format!("internal connection {name} in {w}"),
            TokenKind::Integration {
                name,
                workspace: None,
            } => format!("internal connection {name}"),
        }
    }
}

/// The workspace's per-file upload limit as `GET /v1/users/me` reports it (a bot's
/// `workspace_limits`); a person's answer has none.
pub fn reported_upload_limit(me: &Value) -> Option<u64> {
    me["bot"]["workspace_limits"]["max_file_upload_size_in_bytes"].as_u64()
}

/// The largest file Notion documents for any plan (multi-part uploads, paid plans: 5 GB). A
/// personal access token is told no limit, so files up to this are sent and the workspace's own
/// limit comes back as the refusal of a larger one: that file becomes a placeholder with Notion's
/// reason, nothing fails.
pub const LARGEST_DOCUMENTED_UPLOAD: u64 = 5 * 1000 * 1000 * 1000;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_person_is_a_personal_access_token_and_a_bot_a_connection() {
        let recorded: Value =
            serde_json::from_str(include_str!("../../fixtures/notion-recorded/users_me.json"))
                .unwrap();
        let me = &recorded["interactions"][0]["response"]["body"];
        assert!(matches!(TokenKind::of(me), TokenKind::Integration { .. }));
        assert!(reported_upload_limit(me).is_some());
        let person = json!({"object": "user", "id": "u", "type": "person", "name": "Ada",
            "person": {"email": "ada@example.com"}});
        assert_eq!(
            TokenKind::of(&person).describe(),
            "personal access token of Ada"
        );
        assert_eq!(reported_upload_limit(&person), None);
    }
}
