//! Page mentions as Notion treats them: a mention in a request must name a page the integration can
//! see (else `400 validation_error` naming the mention's path), and a mention read back shows the
//! page's title as it is now (so a rename shows everywhere it is mentioned).

use serde_json::{json, Value};

use super::error::ApiError;
use super::store::model::NodeKind;
use super::store::Store;
use super::Endpoint;

/// The refusal of a write whose rich text mentions a page the integration cannot see.
pub fn refuse_unseen(store: &Store, e: Endpoint, body: &Value) -> Option<ApiError> {
    if !matches!(
        e,
        Endpoint::CreatePage | Endpoint::AppendChildren | Endpoint::UpdateBlock
    ) {
        return None;
    }
    // Iterative walk with the path of each value, so the answer names the mention as Notion does.
    let mut stack: Vec<(String, &Value)> = vec![("body".to_owned(), body)];
    while let Some((path, v)) = stack.pop() {
        match v {
            Value::Object(o) => {
                if let Some(id) = o
                    .get("mention")
                    .and_then(|m| m.get("page"))
                    .and_then(|p| p.get("id"))
                    .and_then(Value::as_str)
                {
                    let seen = uuid::Uuid::parse_str(id)
                        .ok()
                        .map(|u| u.to_string())
                        .and_then(|id| store.get(&id))
                        .is_some_and(|n| matches!(n.kind, NodeKind::Page { .. }));
                    if !seen {
                        return Some(ApiError::validation(format!(
                            "{path}.mention.page.id: Could not find page with ID: {id}. Make sure the relevant pages and databases are shared with your integration."
                        )));
                    }
                }
                for (k, c) in o {
                    stack.push((format!("{path}.{k}"), c));
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    stack.push((format!("{path}[{i}]"), c));
                }
            }
            _ => {}
        }
    }
    None
}

/// Fills in a rendered payload's page mentions with the page's current title and URL (`Untitled`
/// for a page the integration no longer sees, as Notion documents).
pub fn render_live(store: &Store, payload: &mut Value) {
    let Some(p) = payload.as_object_mut() else {
        return;
    };
    let mut runs: Vec<&mut Value> = Vec::new();
    for (k, v) in p.iter_mut() {
        match (k.as_str(), v) {
            ("rich_text" | "caption", Value::Array(a)) => runs.extend(a.iter_mut()),
            ("cells", Value::Array(cells)) => {
                for c in cells.iter_mut().filter_map(Value::as_array_mut) {
                    runs.extend(c.iter_mut());
                }
            }
            _ => {}
        }
    }
    for run in runs {
        let Some(id) = run["mention"]["page"]["id"].as_str().map(str::to_owned) else {
            continue;
        };
        let title = store
            .get(&id)
            .filter(|n| matches!(n.kind, NodeKind::Page { .. }))
            .map_or_else(|| "Untitled".to_owned(), |n| n.title());
        run["plain_text"] = json!(title);
        run["href"] = json!(format!("https://www.notion.so/{}", id.replace('-', "")));
    }
}
