//! `GET {graph}/me`: who just signed in.

use serde::Deserialize;

use super::identity::Identity;
use super::{AccessToken, AuthError};

/// The signed-in user as Graph describes them.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Me {
    /// Graph user id.
    pub id: String,
    /// `userPrincipalName` (personal accounts may lack it; then the mail or id is used).
    #[serde(rename = "userPrincipalName")]
    pub user_principal_name: Option<String>,
    /// `displayName`.
    #[serde(rename = "displayName")]
    pub display_name: Option<String>,
    /// `mail`.
    pub mail: Option<String>,
}

impl Me {
    /// The name to show and store: the principal name, else the mail, else the id.
    pub fn principal(&self) -> String {
        self.user_principal_name
            .clone()
            .or_else(|| self.mail.clone())
            .unwrap_or_else(|| self.id.clone())
    }
}

/// Reads `/me` with `token`.
pub async fn fetch_me(id: &Identity, token: &AccessToken) -> Result<Me, AuthError> {
    let url = format!("{}/me", id.graph_url);
    let transport = |e: reqwest::Error| AuthError::Transport {
        during: "reading the signed-in user from Graph",
        detail: e.without_url().to_string(),
    };
    let req = id
        .http
        .get(&url)
        .bearer_auth(token.secret())
        .header(reqwest::header::ACCEPT, "application/json");
    let resp = crate::trace::send(req, "graph").await.map_err(transport)?;
    let status = resp.status();
    if !status.is_success() {
        let body: serde_json::Value = resp.json().await.unwrap_or_default();
        let code = body["error"]["code"].as_str().unwrap_or("unknown");
        let message = body["error"]["message"].as_str().unwrap_or("");
        return Err(AuthError::Me {
            url,
            status: status.as_u16(),
            detail: format!("{code}: {message}"),
        });
    }
    resp.json::<Me>().await.map_err(transport)
}
