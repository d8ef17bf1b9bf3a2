//! One typed model of a block as `GET /v1/blocks/{id}/children` lists it, for everything that reads
//! Notion back: the writer's look before writing again, the link pass and `verify`.

use serde_json::Value;

use super::client::{NotionClient, NotionError};

/// A child block as Notion lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    /// The block id.
    pub id: String,
    /// Notion's type name (`paragraph`, `table_row`, `child_page`...).
    pub kind: String,
    /// Whether it has children of its own to list.
    pub has_children: bool,
    /// Trashed (`in_trash`, or the older `archived`).
    pub trashed: bool,
    /// A child page's or child database's title.
    pub title: Option<String>,
}

impl Listed {
    /// The model of one listed block; `None` when it has no id or type (not a block).
    pub fn of(v: &Value) -> Option<Listed> {
        let id = v["id"].as_str()?.to_owned();
        let kind = v["type"].as_str()?.to_owned();
        let title = matches!(kind.as_str(), "child_page" | "child_database")
            .then(|| v[kind.as_str()]["title"].as_str().unwrap_or("").to_owned());
        Some(Listed {
            id,
            kind,
            has_children: v["has_children"].as_bool() == Some(true),
            trashed: v["in_trash"].as_bool() == Some(true) || v["archived"].as_bool() == Some(true),
            title,
        })
    }

    /// Whether it is part of the page's body: not a page or database of its own, not trashed.
    pub fn is_body(&self) -> bool {
        !self.trashed && !self.is_subpage() && self.kind != "child_database"
    }

    /// Whether it is a child page.
    pub fn is_subpage(&self) -> bool {
        self.kind == "child_page"
    }

    /// Whether it is a database inside the page (layout `database`'s sections).
    pub fn is_database(&self) -> bool {
        self.kind == "child_database"
    }
}

/// Every child of `id` in the typed model, in Notion's order.
pub async fn list(client: &NotionClient, id: &str) -> Result<Vec<Listed>, NotionError> {
    of_all(&client.children(id).await?, id)
}

/// The typed model of a listing of `parent`; a listed object that is not a block is an answer not
/// understood (it would otherwise shift every position after it).
pub fn of_all(listing: &[Value], parent: &str) -> Result<Vec<Listed>, NotionError> {
    listing
        .iter()
        .map(|v| {
            Listed::of(v).ok_or_else(|| NotionError::BadAnswer {
                what: format!("listing the children of {parent}"),
                problem: "a child without an id or type".into(),
            })
        })
        .collect()
}

/// The body blocks of `id` (child pages and trashed blocks left out), in order.
pub async fn body(client: &NotionClient, id: &str) -> Result<Vec<Listed>, NotionError> {
    Ok(list(client, id)
        .await?
        .into_iter()
        .filter(Listed::is_body)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listing_is_read_once_into_the_typed_model() {
        let v = vec![
            json!({"object": "block", "id": "a", "type": "paragraph", "has_children": true,
                "paragraph": {}}),
            json!({"id": "b", "type": "child_page", "child_page": {"title": "One"}}),
            json!({"id": "c", "type": "quote", "quote": {}, "in_trash": true}),
            json!({"id": "d", "type": "child_database", "archived": false,
                "child_database": {"title": "Section"}}),
        ];
        let l = of_all(&v, "p").unwrap();
        assert_eq!(l[0].kind, "paragraph");
        assert!(l[0].has_children && l[0].is_body());
        assert_eq!(l[1].title.as_deref(), Some("One"));
        assert!(l[1].is_subpage() && !l[1].is_body());
        assert!(l[2].trashed && !l[2].is_body());
        assert!(!l[3].is_body() && !l[3].has_children && !l[3].is_subpage());
        assert_eq!(l[3].title.as_deref(), Some("Section"));
        let e = of_all(&[json!({"type": "paragraph"})], "p").unwrap_err();
        assert!(e.to_string().contains("without an id"), "{e}");
    }
}
