//! Databases and their data sources as Notion has them since API version 2025-09-03: a database
//! (a `child_database` block in its parent page) holds one data source here, whose schema is its
//! properties and whose rows are pages with `parent: {data_source_id}`.

pub(crate) mod routes;
pub mod schema;
pub mod values;

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use serde_json::{json, Value};

use schema::{Ids, Property};

/// One data source: its schema and its rows in creation order.
#[derive(Clone, Debug)]
pub struct DataSource {
    /// UUID with dashes.
    pub id: String,
    /// The database holding it.
    pub database_id: String,
    /// Title as normalised rich text (the database's).
    pub title: Vec<Value>,
    /// The schema, in the order properties were added.
    pub properties: Vec<Property>,
    /// Row page ids in creation order (trashed ones included).
    pub rows: Vec<String>,
    /// Each row's values by property id (the title's is the page's title).
    pub values: HashMap<String, BTreeMap<String, Value>>,
    /// Creation time, Unix ms.
    pub created_ms: i64,
    /// Last schema change, Unix ms.
    pub edited_ms: i64,
}

/// A row as tests read it: its id, title and each property's value in plain text by name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct RowDump {
    /// The row page's id.
    pub id: String,
    /// Its title.
    pub title: String,
    /// Property name to plain-text value (every property of the schema, title included).
    pub properties: BTreeMap<String, String>,
    /// Property name to the value as the API renders it.
    #[serde(skip)]
    pub raw: BTreeMap<String, Value>,
}

/// Every data source, keyed by id.
#[derive(Debug, Default)]
pub struct DataSources {
    map: HashMap<String, DataSource>,
    /// Ids of new properties and options.
    pub ids: Ids,
}

impl DataSources {
    /// A data source by id.
    pub fn get(&self, id: &str) -> Option<&DataSource> {
        self.map.get(id)
    }

    /// Mutable access to a data source.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut DataSource> {
        self.map.get_mut(id)
    }

    /// Adds a data source.
    pub fn insert(&mut self, ds: DataSource) {
        self.map.insert(ds.id.clone(), ds);
    }

    /// Every data source (any order).
    pub fn all(&self) -> impl Iterator<Item = &DataSource> {
        self.map.values()
    }
}

impl DataSource {
    /// A row's properties as the API renders them on its page, every schema property included.
    pub fn render_row(&self, row: &str, title: &[Value]) -> Value {
        let vals = self.values.get(row);
        let mut out = serde_json::Map::new();
        for p in &self.properties {
            let v = if p.ty == "title" {
                Value::Array(title.to_vec())
            } else {
                vals.and_then(|m| m.get(&p.id))
                    .cloned()
                    .unwrap_or_else(|| values::empty(&p.ty))
            };
            let mut o = json!({"id": p.id, "type": p.ty});
            o[&p.ty] = v;
            out.insert(p.name.clone(), o);
        }
        Value::Object(out)
    }

    /// The data source object.
    pub fn render(&self, database_parent: &Value, in_trash: bool) -> Value {
        let props: serde_json::Map<String, Value> = self
            .properties
            .iter()
            .map(|p| (p.name.clone(), p.render()))
            .collect();
        json!({
            "object": "data_source",
            "id": self.id,
            "title": self.title,
            "description": [],
            "parent": {"type": "database_id", "database_id": self.database_id},
            "database_parent": database_parent,
            "properties": props,
            "archived": in_trash,
            "in_trash": in_trash,
            "is_inline": true,
            "created_time": crate::notion::store::model::iso_minute(self.created_ms),
            "last_edited_time": crate::notion::store::model::iso_minute(self.edited_ms),
            "url": format!("https://www.notion.so/{}", self.database_id.replace('-', "")),
            "icon": null,
            "cover": null,
        })
    }

    /// The title property's name.
    pub fn title_name(&self) -> &str {
        self.properties
            .iter()
            .find(|p| p.ty == "title")
            .map_or("title", |p| p.name.as_str())
    }
}
