//! The content tree the integration can see: shared root pages, their child pages and blocks.

pub mod model;

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::notion::databases::schema::Property;
use crate::notion::databases::{values, DataSource, DataSources, RowDump};
use model::{
    iso_minute, normalise_payload, normalise_rich_text_item, plain_text, Node, NodeKind, ParentRef,
};

/// Where appended blocks go among the target's children.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// Before the first child.
    Start,
    /// After the last child (the default).
    End,
    /// Right after this existing child.
    After(String),
}

/// A node of [`Store::dump`]: the content in order, without ids, so tests compare it with the source.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DumpNode {
    /// `page` for pages (rows included), `database` for databases (their rows as children), else
    /// the block type.
    pub kind: String,
    /// Page title (pages only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Plain-text summary: rich text, table cells joined by ` | `, equation, URL.
    #[serde(skip_serializing_if = "String::is_empty", default)]
    pub text: String,
    /// Media source: `external:<url>` or `file_upload:<id>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// Children in display order (trashed ones left out).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub children: Vec<DumpNode>,
}

/// All pages, databases and blocks, keyed by id, and the databases' data sources.
#[derive(Debug, Default)]
pub struct Store {
    nodes: HashMap<String, Node>,
    /// Pages (and what is under them) that exist in the workspace but are not shared with the
    /// integration: kept to be shared again.
    unshared: HashMap<String, Vec<(String, Node)>>,
    /// The data sources of the databases, with their schemas and rows' values.
    pub sources: DataSources,
}

impl Store {
    /// Every page and block ever created, trashed ones included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether nothing was created.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// A node by id (trashed ones included).
    pub fn get(&self, id: &str) -> Option<&Node> {
        self.nodes.get(id)
    }

    /// Mutable access to a node.
    pub fn get_mut(&mut self, id: &str) -> Option<&mut Node> {
        self.nodes.get_mut(id)
    }

    /// Creates a root page shared with the integration.
    pub fn add_root_page(&mut self, title: &str, now: i64) -> String {
        let rt = vec![normalise_rich_text_item(
            &json!({"text": {"content": title}}),
        )];
        self.insert_node(
            ParentRef::Workspace,
            page_kind(rt, Value::Null, Value::Null),
            now,
        )
    }

    /// Stops sharing the root page `root` with the integration: it and everything under it answer 404
    /// from now on, as Notion does for a page whose connection was removed.
    pub fn unshare(&mut self, root: &str) {
        let mut stack = vec![root.to_owned()];
        let mut kept = Vec::new();
        while let Some(id) = stack.pop() {
            if let Some(n) = self.nodes.remove(&id) {
                stack.extend(n.children.iter().cloned());
                kept.push((id, n));
            }
        }
        self.unshared.insert(root.to_owned(), kept);
    }

    /// Shares the root page `root` with the integration again (after [`Store::unshare`]): it and
    /// everything under it answer as before.
    pub fn share(&mut self, root: &str) {
        for (id, n) in self.unshared.remove(root).unwrap_or_default() {
            self.nodes.insert(id, n);
        }
    }

    /// Creates a page under `parent` (a page), listed last among its children.
    pub fn create_page(
        &mut self,
        parent: &str,
        title: Vec<Value>,
        icon: Value,
        cover: Value,
        now: i64,
    ) -> String {
        let id = self.insert_node(
            ParentRef::Page(parent.to_owned()),
            page_kind(title, icon, cover),
            now,
        );
        if let Some(p) = self.nodes.get_mut(parent) {
            p.children.push(id.clone());
            p.edited_ms = now;
            p.person_edit = false;
        }
        id
    }

    /// Creates a database under the page `parent` (listed last among its children) with one data
    /// source of schema `properties`; returns (database id, data source id).
    pub fn create_database(
        &mut self,
        parent: &str,
        title: Vec<Value>,
        properties: Vec<Property>,
        now: i64,
    ) -> (String, String) {
        let ds_id = uuid::Uuid::new_v4().to_string();
        let db_id = self.insert_node(
            ParentRef::Page(parent.to_owned()),
            NodeKind::Database {
                title: title.clone(),
                data_source: ds_id.clone(),
            },
            now,
        );
        if let Some(p) = self.nodes.get_mut(parent) {
            p.children.push(db_id.clone());
            p.edited_ms = now;
            p.person_edit = false;
        }
        self.sources.insert(DataSource {
            id: ds_id.clone(),
            database_id: db_id.clone(),
            title,
            properties,
            rows: Vec::new(),
            values: HashMap::new(),
            created_ms: now,
            edited_ms: now,
        });
        (db_id, ds_id)
    }

    /// Creates a row (a page) in the data source `ds` with validated values; returns its id.
    pub fn create_row(
        &mut self,
        ds: &str,
        title: Vec<Value>,
        vals: BTreeMap<String, Value>,
        icon: Value,
        cover: Value,
        now: i64,
    ) -> String {
        let id = self.insert_node(
            ParentRef::DataSource(ds.to_owned()),
            page_kind(title, icon, cover),
            now,
        );
        if let Some(d) = self.sources.get_mut(ds) {
            d.rows.push(id.clone());
            d.values.insert(id.clone(), vals);
        }
        id
    }

    /// The data source a row page belongs to.
    pub fn row_source(&self, id: &str) -> Option<&str> {
        match self.nodes.get(id).map(|n| &n.parent) {
            Some(ParentRef::DataSource(ds)) => Some(ds),
            _ => None,
        }
    }

    /// The visible rows of data source `ds` in creation order.
    pub fn visible_rows(&self, ds: &str) -> Vec<&Node> {
        self.sources.get(ds).map_or_else(Vec::new, |d| {
            d.rows
                .iter()
                .filter_map(|r| self.nodes.get(r))
                .filter(|n| !self.trashed(&n.id))
                .collect()
        })
    }

    /// The visible rows of the database or data source `id`, as tests read them.
    pub fn rows(&self, id: &str) -> Vec<RowDump> {
        let ds = match self.nodes.get(id).map(|n| &n.kind) {
            Some(NodeKind::Database { data_source, .. }) => data_source.clone(),
            _ => id.to_owned(),
        };
        let Some(d) = self.sources.get(&ds) else {
            return Vec::new();
        };
        self.visible_rows(&ds)
            .into_iter()
            .map(|n| {
                let title = match &n.kind {
                    NodeKind::Page { title, .. } => title.clone(),
                    _ => Vec::new(),
                };
                let raw: BTreeMap<String, Value> = d
                    .render_row(&n.id, &title)
                    .as_object()
                    .map(|o| o.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                    .unwrap_or_default();
                let properties = raw
                    .iter()
                    .map(|(k, v)| {
                        let ty = v["type"].as_str().unwrap_or("");
                        (k.clone(), values::plain(ty, &v[ty]))
                    })
                    .collect();
                RowDump {
                    id: n.id.clone(),
                    title: n.title(),
                    properties,
                    raw,
                }
            })
            .collect()
    }

    fn insert_node(&mut self, parent: ParentRef, kind: NodeKind, now: i64) -> String {
        let id = uuid::Uuid::new_v4().to_string();
        self.nodes.insert(
            id.clone(),
            Node {
                id: id.clone(),
                parent,
                kind,
                children: Vec::new(),
                in_trash: false,
                created_ms: now,
                edited_ms: now,
                person_edit: false,
            },
        );
        id
    }

    /// Inserts validated request blocks (with their nested children) under `target`; returns the new
    /// first-level ids in order.
    pub fn insert_blocks(
        &mut self,
        target: &str,
        blocks: &[Value],
        pos: &Position,
        now: i64,
    ) -> Vec<String> {
        let parent_ref = match self.nodes.get(target).map(|n| &n.kind) {
            Some(NodeKind::Page { .. }) => ParentRef::Page(target.to_owned()),
            _ => ParentRef::Block(target.to_owned()),
        };
        let mut ids = Vec::new();
        for b in blocks {
            let Some(ty) = crate::notion::validate::block_type(b) else {
                continue;
            };
            let payload = b
                .get(ty)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let kind = NodeKind::Block {
                ty: ty.to_owned(),
                payload: normalise_payload(ty, &payload),
            };
            let id = self.insert_node(parent_ref.clone(), kind, now);
            if let Some(Value::Array(ch)) = payload.get("children") {
                self.insert_blocks(&id, ch, &Position::End, now);
            }
            ids.push(id);
        }
        if let Some(t) = self.nodes.get_mut(target) {
            let at = match pos {
                Position::Start => 0,
                Position::End => t.children.len(),
                Position::After(a) => t
                    .children
                    .iter()
                    .position(|c| c == a)
                    .map_or(t.children.len(), |i| i + 1),
            };
            t.children.splice(at..at, ids.iter().cloned());
            t.edited_ms = now;
            t.person_edit = false;
        }
        ids
    }

    /// Children not in the trash, in order.
    pub fn visible_children(&self, id: &str) -> Vec<&Node> {
        self.nodes.get(id).map_or_else(Vec::new, |n| {
            n.children
                .iter()
                .filter_map(|c| self.nodes.get(c))
                .filter(|c| !c.in_trash)
                .collect()
        })
    }

    /// Whether `child` is among `id`'s [`Store::visible_children`], without collecting them.
    pub fn is_visible_child(&self, id: &str, child: &str) -> bool {
        self.nodes
            .get(id)
            .is_some_and(|n| n.children.iter().any(|c| c == child))
            && self.nodes.get(child).is_some_and(|c| !c.in_trash)
    }

    /// Whether `id` has any visible child.
    pub fn has_visible_children(&self, id: &str) -> bool {
        self.nodes.get(id).is_some_and(|n| {
            n.children
                .iter()
                .any(|c| self.nodes.get(c).is_some_and(|c| !c.in_trash))
        })
    }

    /// One page of [`Store::visible_children`]: up to `limit` of them from the visible child `from`
    /// on (from the first when `None`), and the visible child after those. `None` when `from` is not
    /// a visible child. Paging through a page of 60,000 blocks looks up only the children it returns,
    /// not all of them for every page of 100.
    pub fn visible_children_from(
        &self,
        id: &str,
        from: Option<&str>,
        limit: usize,
    ) -> Option<(Vec<&Node>, Option<&Node>)> {
        let children = self.nodes.get(id).map_or(&[][..], |n| &n.children[..]);
        let at = match from {
            None => 0,
            Some(f) => {
                let at = children.iter().position(|c| c == f)?;
                self.nodes.get(f).filter(|n| !n.in_trash)?;
                at
            }
        };
        let mut visible = children[at..]
            .iter()
            .filter_map(|c| self.nodes.get(c))
            .filter(|c| !c.in_trash);
        let page: Vec<&Node> = visible.by_ref().take(limit).collect();
        Some((page, visible.next()))
    }

    /// The node above `n`: its page or block, or the database of its data source.
    fn node_above(&self, n: &Node) -> Option<&Node> {
        match &n.parent {
            ParentRef::Workspace => None,
            ParentRef::Page(p) | ParentRef::Block(p) => self.nodes.get(p),
            ParentRef::DataSource(ds) => self
                .sources
                .get(ds)
                .and_then(|d| self.nodes.get(&d.database_id)),
        }
    }

    /// Whether `pred` holds for node `id` or a node above it.
    fn up_from(&self, id: &str, pred: impl Fn(&Node) -> bool) -> bool {
        let mut cur = self.nodes.get(id);
        while let Some(n) = cur {
            if pred(n) {
                return true;
            }
            cur = self.node_above(n);
        }
        false
    }

    /// True when the node or one of its ancestors is in the trash.
    pub fn trashed(&self, id: &str) -> bool {
        self.up_from(id, |n| n.in_trash)
    }

    /// Whether `ancestor` is `id` itself or above it (through pages, blocks, data sources and
    /// their databases).
    pub fn is_under(&self, id: &str, ancestor: &str) -> bool {
        self.up_from(id, |n| n.id == ancestor)
    }

    /// Moves page `id` (with its blocks and child pages) to `to`, a page or a data source: it leaves
    /// its old parent's children (or rows) and is appended last among the new parent's. A row
    /// leaving a data source loses its values but its title; a page becoming a row keeps its
    /// title as the title property, every other value empty. Both parents' contents changed, so
    /// both are stamped `now` (as a page's creation stamps its parent). The caller has checked
    /// that the move is allowed.
    pub fn move_page(&mut self, id: &str, to: ParentRef, now: i64) {
        let Some(old) = self.nodes.get(id).map(|n| n.parent.clone()) else {
            return;
        };
        match &old {
            ParentRef::Page(p) | ParentRef::Block(p) => {
                if let Some(pn) = self.nodes.get_mut(p) {
                    pn.children.retain(|c| c != id);
                    pn.edited_ms = now;
                    pn.person_edit = false;
                }
            }
            ParentRef::DataSource(ds) => {
                if let Some(d) = self.sources.get_mut(ds) {
                    d.rows.retain(|r| r != id);
                    d.values.remove(id);
                }
            }
            ParentRef::Workspace => {}
        }
        match &to {
            ParentRef::Page(p) | ParentRef::Block(p) => {
                if let Some(pn) = self.nodes.get_mut(p) {
                    pn.children.push(id.to_owned());
                    pn.edited_ms = now;
                    pn.person_edit = false;
                }
            }
            ParentRef::DataSource(ds) => {
                if let Some(d) = self.sources.get_mut(ds) {
                    d.rows.push(id.to_owned());
                    d.values.insert(id.to_owned(), BTreeMap::new());
                }
            }
            ParentRef::Workspace => {}
        }
        if let Some(n) = self.nodes.get_mut(id) {
            n.parent = to;
            n.edited_ms = now;
            n.person_edit = false;
        }
    }

    /// The `parent` object of node `n` as the API renders it.
    pub fn parent_json(&self, n: &Node) -> Value {
        match &n.parent {
            ParentRef::Workspace => json!({"type": "workspace", "workspace": true}),
            ParentRef::Page(p) => json!({"type": "page_id", "page_id": p}),
            ParentRef::Block(b) => json!({"type": "block_id", "block_id": b}),
            ParentRef::DataSource(ds) => json!({
                "type": "data_source_id",
                "data_source_id": ds,
                "database_id": self.sources.get(ds).map(|d| d.database_id.clone()),
            }),
        }
    }

    /// A node rendered as a Notion block object (`child_page` for pages).
    pub fn render_block(
        &self,
        n: &Node,
        bot_id: &str,
        render_file: &dyn Fn(&Value) -> Value,
    ) -> Value {
        let ty = n.block_type();
        let payload = match &n.kind {
            NodeKind::Page { .. } | NodeKind::Database { .. } => json!({"title": n.title()}),
            NodeKind::Block { payload, .. } => {
                let mut p = render_file(payload);
                super::mentions::render_live(self, &mut p);
                p
            }
        };
        let user = json!({"object": "user", "id": bot_id});
        let mut v = json!({
            "object": "block",
            "id": n.id,
            "parent": self.parent_json(n),
            "created_time": iso_minute(n.created_ms),
            "last_edited_time": iso_minute(n.edited_ms),
            "created_by": user,
            "last_edited_by": editor(n, &user),
            "has_children": self.has_visible_children(&n.id),
            "archived": n.in_trash,
            "in_trash": n.in_trash,
            "type": ty,
        });
        v[ty] = payload;
        v
    }

    /// A page node rendered as a Notion page object.
    pub fn render_page(&self, n: &Node, bot_id: &str) -> Value {
        let NodeKind::Page { title, icon, cover } = &n.kind else {
            return Value::Null;
        };
        let user = json!({"object": "user", "id": bot_id});
        let properties = match &n.parent {
            ParentRef::DataSource(ds) => self
                .sources
                .get(ds)
                .map_or_else(|| json!({}), |d| d.render_row(&n.id, title)),
            _ => json!({"title": {"id": "title", "type": "title", "title": title}}),
        };
        let slug: String = n.title().split_whitespace().collect::<Vec<_>>().join("-");
        json!({
            "object": "page",
            "id": n.id,
            "created_time": iso_minute(n.created_ms),
            "last_edited_time": iso_minute(n.edited_ms),
            "created_by": user,
            "last_edited_by": editor(n, &user),
            "cover": cover,
            "icon": icon,
            "parent": self.parent_json(n),
            "archived": n.in_trash,
            "in_trash": n.in_trash,
            "is_locked": false,
            "properties": properties,
            "url": format!("https://www.notion.so/{}{}", if slug.is_empty() { String::new() } else { format!("{slug}-") }, n.id.replace('-', "")),
            "public_url": null,
        })
    }

    /// The visible tree under `id` (a page or block).
    pub fn dump(&self, id: &str) -> Option<DumpNode> {
        let n = self.nodes.get(id)?;
        Some(self.dump_node(n))
    }

    fn dump_node(&self, n: &Node) -> DumpNode {
        let children = self
            .visible_children(&n.id)
            .into_iter()
            .map(|c| self.dump_node(c))
            .collect();
        match &n.kind {
            NodeKind::Page { .. } => DumpNode {
                kind: "page".into(),
                title: Some(n.title()),
                text: String::new(),
                file: None,
                children,
            },
            NodeKind::Database { data_source, .. } => DumpNode {
                kind: "database".into(),
                title: Some(n.title()),
                text: String::new(),
                file: None,
                children: self
                    .visible_rows(data_source)
                    .into_iter()
                    .map(|r| self.dump_node(r))
                    .collect(),
            },
            NodeKind::Block { ty, payload } => DumpNode {
                kind: ty.clone(),
                title: None,
                text: {
                    let mut p = payload.clone();
                    super::mentions::render_live(self, &mut p);
                    summary(ty, &p)
                },
                file: file_source(payload),
                children,
            },
        }
    }

    /// Visible child pages of `id`, in order, as (id, title).
    pub fn pages_under(&self, id: &str) -> Vec<(String, String)> {
        self.visible_children(id)
            .into_iter()
            .filter(|n| matches!(n.kind, NodeKind::Page { .. }))
            .map(|n| (n.id.clone(), n.title()))
            .collect()
    }
}

/// Who last edited `n`: the integration (`bot`), or the person who edited it in the app.
fn editor(n: &Node, bot: &Value) -> Value {
    if n.person_edit {
        json!({"object": "user", "id": model::PERSON_ID})
    } else {
        bot.clone()
    }
}

fn page_kind(title: Vec<Value>, icon: Value, cover: Value) -> NodeKind {
    NodeKind::Page { title, icon, cover }
}

fn rt_text(v: Option<&Value>) -> String {
    v.and_then(Value::as_array)
        .map(|a| plain_text(a))
        .unwrap_or_default()
}

fn summary(ty: &str, p: &Value) -> String {
    match ty {
        "table_row" => p
            .get("cells")
            .and_then(Value::as_array)
            .map(|cells| {
                cells
                    .iter()
                    .map(|c| rt_text(Some(c)))
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .unwrap_or_default(),
        "equation" => p["expression"].as_str().unwrap_or("").to_owned(),
        "embed" | "bookmark" => p["url"].as_str().unwrap_or("").to_owned(),
        _ => {
            let mut s = rt_text(p.get("rich_text"));
            if s.is_empty() {
                s = rt_text(p.get("caption"));
            }
            s
        }
    }
}

fn file_source(p: &Value) -> Option<String> {
    if let Some(u) = p
        .get("external")
        .and_then(|e| e.get("url"))
        .and_then(Value::as_str)
    {
        return Some(format!("external:{u}"));
    }
    p.get("file_upload")
        .and_then(|f| f.get("id"))
        .and_then(Value::as_str)
        .map(|id| format!("file_upload:{id}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The paged walk lists exactly what `visible_children` lists, page by page, and refuses a
    /// trashed or unknown cursor.
    #[test]
    fn paging_from_a_cursor_matches_the_whole_visible_list() {
        let mut s = Store::default();
        let root = s.add_root_page("Root", 0);
        let blocks: Vec<Value> = (0..7)
            .map(|i| json!({"type": "paragraph", "paragraph": {"rich_text": [{"text": {"content": format!("p{i}")}}]}}))
            .collect();
        let ids = s.insert_blocks(&root, &blocks, &Position::End, 0);
        s.get_mut(&ids[2]).unwrap().in_trash = true;
        s.get_mut(&ids[5]).unwrap().in_trash = true;
        let all: Vec<&str> = s
            .visible_children(&root)
            .iter()
            .map(|n| n.id.as_str())
            .collect();
        assert_eq!(all.len(), 5);

        let mut walked = Vec::new();
        let mut from: Option<String> = None;
        loop {
            let (page, next) = s.visible_children_from(&root, from.as_deref(), 2).unwrap();
            assert!(page.len() <= 2);
            walked.extend(page.iter().map(|n| n.id.clone()));
            match next {
                Some(n) => from = Some(n.id.clone()),
                None => break,
            }
        }
        assert_eq!(walked, all);
        assert!(s.visible_children_from(&root, Some(&ids[2]), 2).is_none());
        assert!(s.visible_children_from(&root, Some("nope"), 2).is_none());
        assert!(s.is_visible_child(&root, &ids[1]));
        assert!(!s.is_visible_child(&root, &ids[5]));
        assert!(s.has_visible_children(&root));
        assert!(!s.has_visible_children(&ids[0]));
    }
}
