//! Layout `database`: a section as a Notion database (API 2025-09-03: a database with one data
//! source), each OneNote page a row with its OneNote properties.
//!
//! Exactly once: a database's intent is recorded before it is created, and a section whose intent
//! has no database yet looks among its parent page's children for one of its title (that no other
//! section holds) before creating another. A tag is recorded before the schema update that adds
//! it and confirmed after; an unconfirmed tag is looked for in the schema before the update is sent
//! again. Updates of one data source's schema are serialised, since an update gives the whole list
//! of options.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, SecondsFormat, Utc};
use reqwest::Method;
use serde_json::{json, Value};

use super::client::{title_rich_text, utf16_chunks, NotionClient, NotionError, Retry};
use crate::clock::Clock;
use crate::failure::{Class, Classify};
use crate::store::{Db, StoreError};

/// The row properties, by the names Notion shows.
pub mod names {
    /// Title: the page's title.
    pub const NAME: &str = "Name";
    /// Date: OneNote's created time.
    pub const CREATED: &str = "Created";
    /// Date: OneNote's last modified time.
    pub const MODIFIED: &str = "Modified";
    /// Multi-select: the note tags used on the page.
    pub const TAGS: &str = "Tags";
    /// Text: who wrote the page, where the source says.
    pub const AUTHOR: &str = "Author";
    /// Number: OneNote's page order.
    pub const ORDER: &str = "Order";
    /// Number: the page level, 0 to 2.
    pub const LEVEL: &str = "Level";
    /// URL: the page in OneNote on the web, where the source gives it.
    pub const LINK: &str = "OneNote link";
}

/// Longest select option name Notion accepts, in characters.
pub const MAX_TAG_NAME: usize = 100;
/// Longest URL property value.
pub const MAX_URL: usize = 2000;
/// Rich-text items in one property value.
const MAX_RICH_TEXT_ITEMS: usize = 100;

/// Errors of the database layout, each saying whose failure it is.
#[derive(Debug, thiserror::Error)]
pub enum DatabaseError {
    /// Notion refused or failed a request.
    #[error(transparent)]
    Notion(#[from] NotionError),
    /// The state database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Notion's answer lacked what the API documents (a database without a data source).
    #[error("Notion answered {what} without {missing}; the database layout cannot go on")]
    BadAnswer {
        /// The request.
        what: String,
        /// The missing field.
        missing: &'static str,
    },
}

impl Classify for DatabaseError {
    fn class(&self) -> Class {
        match self {
            DatabaseError::Notion(e) => e.class(),
            DatabaseError::Store(e) => e.class(),
            // Notion answered outside its documented shape: a retry of the section may find it
            // well; the page that needed it waits, it is not lost.
            DatabaseError::BadAnswer { .. } => Class::retry(None),
        }
    }

    fn retries(&self) -> u32 {
        match self {
            DatabaseError::Notion(e) => e.retries(),
            DatabaseError::Store(e) => e.retries(),
            DatabaseError::BadAnswer { .. } => 0,
        }
    }
}

/// The schema of a section's database.
pub fn schema() -> Value {
    json!({
        names::NAME: {"title": {}},
        names::CREATED: {"date": {}},
        names::MODIFIED: {"date": {}},
        names::TAGS: {"multi_select": {"options": []}},
        names::AUTHOR: {"rich_text": {}},
        names::ORDER: {"number": {"format": "number"}},
        names::LEVEL: {"number": {"format": "number"}},
        names::LINK: {"url": {}},
    })
}

/// A OneNote tag name as a Notion option name: commas (which Notion refuses in option names)
/// become semicolons, spaces are trimmed, a name over 100 characters is cut with an ellipsis, and
/// an empty one is `Tag`. `None` when the name is accepted as it is.
pub fn accepted_tag_name(onenote: &str) -> Option<String> {
    let mut s = onenote.replace(',', ";").trim().to_owned();
    if s.is_empty() {
        s = "Tag".to_owned();
    }
    if s.chars().count() > MAX_TAG_NAME {
        s = s.chars().take(MAX_TAG_NAME - 1).collect::<String>();
        s.push('…');
    }
    (s != onenote).then_some(s)
}

/// What a row holds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Row {
    /// The page's title.
    pub title: String,
    /// OneNote's created time.
    pub created: Option<DateTime<Utc>>,
    /// OneNote's last modified time.
    pub modified: Option<DateTime<Utc>>,
    /// The Notion names of the page's tags (see [`Databases::ensure_tags`]).
    pub tags: Vec<String>,
    /// Who wrote it, where the source says.
    pub author: Option<String>,
    /// OneNote's page order.
    pub order: u32,
    /// The page level (0 to 2).
    pub level: u8,
    /// The page in OneNote on the web.
    pub link: Option<String>,
}

fn date(t: Option<DateTime<Utc>>) -> Value {
    t.map_or(
        Value::Null,
        |t| json!({"start": t.to_rfc3339_opts(SecondsFormat::Millis, true)}),
    )
}

impl Row {
    /// The row's `properties` as a create or update request sends them. A link too long for a URL
    /// property is left out (the page body keeps nothing of it either way).
    pub fn properties(&self) -> Value {
        let author: Vec<Value> = self
            .author
            .as_deref()
            .map(|a| {
                utf16_chunks(a, 2000)
                    .into_iter()
                    .take(MAX_RICH_TEXT_ITEMS)
                    .map(|c| json!({"type": "text", "text": {"content": c}}))
                    .collect()
            })
            .unwrap_or_default();
        let link = self
            .link
            .as_deref()
            .filter(|l| l.chars().count() <= MAX_URL)
            .map_or(Value::Null, |l| json!(l));
        let tags: Vec<Value> = self.tags.iter().map(|t| json!({"name": t})).collect();
        json!({
            names::NAME: {"title": title_rich_text(&self.title)},
            names::CREATED: {"date": date(self.created)},
            names::MODIFIED: {"date": date(self.modified)},
            names::TAGS: {"multi_select": tags},
            names::AUTHOR: {"rich_text": author},
            names::ORDER: {"number": self.order},
            names::LEVEL: {"number": self.level},
            names::LINK: {"url": link},
        })
    }
}

/// A section's database in Notion.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionDb {
    /// The database.
    pub database_id: String,
    /// Its data source: the rows' parent.
    pub data_source_id: String,
}

/// A tag name Notion refused and the one written instead.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MappedTag {
    /// OneNote's name.
    pub from: String,
    /// The name in Notion.
    pub to: String,
}

/// The tags of one row as Notion holds them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowTags {
    /// The option names, in the page's order.
    pub names: Vec<String>,
    /// The names that had to change.
    pub mapped: Vec<MappedTag>,
}

/// The database layout's requests and records, shared by the workers of a run.
#[derive(Clone)]
pub struct Databases {
    db: Arc<Db>,
    clock: Clock,
    /// One lock per data source: schema updates of one data source go one at a time.
    schema_locks: Arc<Mutex<HashMap<String, Arc<tokio::sync::Mutex<()>>>>>,
}

impl Databases {
    /// The layout over the state database `db`.
    pub fn new(db: Arc<Db>, clock: Clock) -> Self {
        Self {
            db,
            clock,
            schema_locks: Arc::default(),
        }
    }

    /// The database of `section` (of `account`) in the page `parent`, titled `title`: the recorded
    /// one, one found again after a crash, or a new one. Exactly one per section.
    pub async fn ensure_database(
        &self,
        notion: &NotionClient,
        account: &str,
        section: &str,
        parent: &str,
        title: &str,
    ) -> Result<SectionDb, DatabaseError> {
        let (a, s, p, t, now) = (
            account.to_owned(),
            section.to_owned(),
            parent.to_owned(),
            title.to_owned(),
            self.clock.now_ms(),
        );
        let rec = self
            .db
            .call(move |db| db.intend_section_database(&a, &s, &p, &t, now))
            .await?;
        if let Some((database_id, data_source_id)) = rec.created {
            return Ok(SectionDb {
                database_id,
                data_source_id,
            });
        }
        // The intent may be a crash's: the database may exist already.
        if let Some(found) = self.find(notion, &rec.parent_page_id, &rec.title).await? {
            return self.record(account, section, found).await;
        }
        let created = match create_database(notion, &rec.parent_page_id, &rec.title).await {
            Ok(c) => {
                crate::crash::point("database.created");
                c
            }
            Err(DatabaseError::Notion(e @ NotionError::Ambiguous { .. })) => {
                match self.find(notion, &rec.parent_page_id, &rec.title).await? {
                    Some(found) => found,
                    None => return Err(e.into()),
                }
            }
            Err(e) => return Err(e),
        };
        self.record(account, section, created).await
    }

    async fn record(
        &self,
        account: &str,
        section: &str,
        d: SectionDb,
    ) -> Result<SectionDb, DatabaseError> {
        let (a, s, now) = (account.to_owned(), section.to_owned(), self.clock.now_ms());
        let (dbid, dsid) = (d.database_id.clone(), d.data_source_id.clone());
        self.db
            .call(move |db| db.section_database_created(&a, &s, &dbid, &dsid, now))
            .await?;
        crate::crash::point("database.recorded");
        Ok(d)
    }

    /// A database titled `title` among `parent`'s children that no section holds.
    pub async fn find(
        &self,
        notion: &NotionClient,
        parent: &str,
        title: &str,
    ) -> Result<Option<SectionDb>, DatabaseError> {
        for child in notion.children(parent).await? {
            if child["type"] != "child_database"
                || child["child_database"]["title"].as_str() != Some(title)
            {
                continue;
            }
            let Some(id) = child["id"].as_str().map(str::to_owned) else {
                continue;
            };
            let probe = id.clone();
            if self.db.call(move |db| db.database_claimed(&probe)).await? {
                continue;
            }
            return Ok(Some(retrieve_database(notion, &id).await?));
        }
        Ok(None)
    }

    /// The Notion names of the OneNote tags `tags` in `data_source`'s schema, adding the ones it
    /// lacks in one schema update (none when every tag is known), each exactly once.
    pub async fn ensure_tags(
        &self,
        notion: &NotionClient,
        data_source: &str,
        tags: &[String],
    ) -> Result<RowTags, DatabaseError> {
        if tags.is_empty() {
            return Ok(RowTags::default());
        }
        let lock = {
            let mut m = self.schema_locks.lock().expect("schema locks poisoned");
            m.entry(data_source.to_owned()).or_default().clone()
        };
        let _held = lock.lock().await;
        let ds = data_source.to_owned();
        let mut recorded = self.db.call(move |db| db.database_tags(&ds)).await?;
        for t in tags {
            if recorded.iter().any(|r| &r.source_name == t) {
                continue;
            }
            let base = accepted_tag_name(t).unwrap_or_else(|| t.clone());
            let mut name = base.clone();
            let mut n = 2;
            // Two OneNote names may map to one Notion name: the later one is numbered.
            while recorded.iter().any(|r| r.name == name) {
                name = format!("{base} ({n})");
                n += 1;
            }
            let (ds, src, nm) = (data_source.to_owned(), t.clone(), name.clone());
            self.db
                .call(move |db| db.intend_database_tag(&ds, &src, &nm))
                .await?;
            recorded.push(crate::store::layouts::RecordedTag {
                source_name: t.clone(),
                name,
                added: false,
            });
        }
        let pending: Vec<String> = recorded
            .iter()
            .filter(|r| !r.added)
            .map(|r| r.name.clone())
            .collect();
        if !pending.is_empty() {
            self.add_options(notion, data_source, &pending).await?;
        }
        let mut out = RowTags::default();
        for t in tags {
            let r = recorded
                .iter()
                .find(|r| &r.source_name == t)
                .expect("every tag was recorded above");
            if !out.names.contains(&r.name) {
                out.names.push(r.name.clone());
            }
            if &r.name != t && !out.mapped.iter().any(|m| &m.from == t) {
                out.mapped.push(MappedTag {
                    from: t.clone(),
                    to: r.name.clone(),
                });
            }
        }
        Ok(out)
    }

    /// Adds the option names `pending` to the schema unless it holds them already (an update sent
    /// before a crash), then confirms them.
    async fn add_options(
        &self,
        notion: &NotionClient,
        data_source: &str,
        pending: &[String],
    ) -> Result<(), DatabaseError> {
        let current = tag_options(&data_source_object(notion, data_source).await?);
        let missing: Vec<&String> = pending
            .iter()
            .filter(|p| {
                !current
                    .iter()
                    .any(|c| c["name"].as_str() == Some(p.as_str()))
            })
            .collect();
        if !missing.is_empty() {
            // The whole list: kept options by id (their colours stay), new ones by name.
            let mut options: Vec<Value> = current
                .iter()
                .map(|c| json!({"id": c["id"], "name": c["name"]}))
                .collect();
            options.extend(missing.iter().map(|m| json!({"name": m})));
            notion
                .call_json(
                    Method::PATCH,
                    &format!("/v1/data_sources/{data_source}"),
                    Some(json!({"properties": {names::TAGS: {"multi_select": {"options": options}}}})),
                    Retry::Safe,
                    &format!("adding {} tags to data source {data_source}", missing.len()),
                )
                .await?;
            crate::crash::point("database.schema_updated");
        }
        let (ds, names, now) = (
            data_source.to_owned(),
            pending.to_vec(),
            self.clock.now_ms(),
        );
        self.db
            .call(move |db| db.database_tags_added(&ds, &names, now))
            .await?;
        crate::crash::point("database.tags_confirmed");
        Ok(())
    }
}

/// The `Tags` options of a data source object, in the schema's order.
pub fn tag_options(ds: &Value) -> Vec<Value> {
    ds["properties"][names::TAGS]["multi_select"]["options"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

/// `POST /v1/databases` in `parent` with the layout's schema.
async fn create_database(
    notion: &NotionClient,
    parent: &str,
    title: &str,
) -> Result<SectionDb, DatabaseError> {
    create_database_with(notion, parent, title, &[]).await
}

/// `POST /v1/databases` in `parent` with the layout's schema, its `Tags` holding `tag_options`
/// (names and colours, as another data source of the layout holds them: a section's database made
/// again where its section moved has the schema it had).
pub async fn create_database_with(
    notion: &NotionClient,
    parent: &str,
    title: &str,
    tag_options: &[Value],
) -> Result<SectionDb, DatabaseError> {
    let what = format!("creating a database in {parent}");
    let mut properties = schema();
    properties[names::TAGS]["multi_select"]["options"] = tag_options
        .iter()
        .map(|o| {
            let mut kept = json!({"name": o["name"]});
            if o["color"].is_string() {
                kept["color"] = o["color"].clone();
            }
            kept
        })
        .collect();
    let v = notion
        .call_json(
            Method::POST,
            "/v1/databases",
            Some(json!({
                "parent": {"type": "page_id", "page_id": parent},
                "title": title_rich_text(title),
                "is_inline": true,
                "initial_data_source": {"properties": properties},
            })),
            Retry::Unsafe,
            &what,
        )
        .await?;
    database_ids(&v, &what)
}

fn database_ids(v: &Value, what: &str) -> Result<SectionDb, DatabaseError> {
    let bad = |missing| DatabaseError::BadAnswer {
        what: what.to_owned(),
        missing,
    };
    Ok(SectionDb {
        database_id: v["id"].as_str().ok_or_else(|| bad("an id"))?.to_owned(),
        data_source_id: v["data_sources"][0]["id"]
            .as_str()
            .ok_or_else(|| bad("a data source"))?
            .to_owned(),
    })
}

/// `GET /v1/databases/{id}`: its data source.
async fn retrieve_database(notion: &NotionClient, id: &str) -> Result<SectionDb, DatabaseError> {
    let what = format!("reading database {id}");
    let v = notion
        .call_json(
            Method::GET,
            &format!("/v1/databases/{id}"),
            None,
            Retry::Safe,
            &what,
        )
        .await?;
    database_ids(&v, &what)
}

/// `GET /v1/databases/{id}`.
pub async fn database_object(notion: &NotionClient, id: &str) -> Result<Value, NotionError> {
    notion
        .call_json(
            Method::GET,
            &format!("/v1/databases/{id}"),
            None,
            Retry::Safe,
            &format!("reading database {id}"),
        )
        .await
}

/// `GET /v1/data_sources/{id}`.
pub async fn data_source_object(notion: &NotionClient, id: &str) -> Result<Value, NotionError> {
    notion
        .call_json(
            Method::GET,
            &format!("/v1/data_sources/{id}"),
            None,
            Retry::Safe,
            &format!("reading data source {id}"),
        )
        .await
}

/// `POST /v1/pages` under `data_source` with `row`'s properties and the first `children`.
pub async fn create_row(
    notion: &NotionClient,
    data_source: &str,
    row: &Row,
    children: &[Value],
) -> Result<Value, NotionError> {
    let mut body = json!({
        "parent": {"type": "data_source_id", "data_source_id": data_source},
        "properties": row.properties(),
    });
    if !children.is_empty() {
        body["children"] = Value::Array(children.to_vec());
    }
    notion
        .call_json(
            Method::POST,
            "/v1/pages",
            Some(body),
            Retry::Unsafe,
            &format!("creating a row in data source {data_source}"),
        )
        .await
}

/// `PATCH /v1/pages/{id}` with `row`'s properties (`migrate --update`). Safe to repeat.
pub async fn update_row(
    notion: &NotionClient,
    page: &str,
    row: &Row,
) -> Result<Value, NotionError> {
    notion
        .call_json(
            Method::PATCH,
            &format!("/v1/pages/{page}"),
            Some(json!({"properties": row.properties()})),
            Retry::Safe,
            &format!("updating row {page}"),
        )
        .await
}

/// Every row of `data_source` (`verify`), through the query's pages of 100.
pub async fn rows(notion: &NotionClient, data_source: &str) -> Result<Vec<Value>, NotionError> {
    let mut out = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut body = json!({"page_size": 100});
        if !cursor.is_null() {
            body["start_cursor"] = cursor.clone();
        }
        let v = notion
            .call_json(
                Method::POST,
                &format!("/v1/data_sources/{data_source}/query"),
                Some(body),
                Retry::Safe,
                &format!("querying data source {data_source}"),
            )
            .await?;
        if let Some(r) = v["results"].as_array() {
            out.extend(r.iter().cloned());
        }
        match (v["has_more"].as_bool(), &v["next_cursor"]) {
            (Some(true), Value::String(c)) => cursor = Value::String(c.clone()),
            _ => return Ok(out),
        }
    }
}

/// A row's title, from a page object that [`rows`] or [`create_row`] returned.
pub fn row_title(page: &Value) -> String {
    page["properties"][names::NAME]["title"]
        .as_array()
        .map(|a| a.iter().filter_map(|t| t["plain_text"].as_str()).collect())
        .unwrap_or_default()
}

/// What a data source holds against the rows planned for it (`verify`, per database).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RowCheck {
    /// Rows found, in creation order.
    pub found: usize,
    /// Planned row ids that the data source does not hold.
    pub missing: Vec<String>,
    /// Rows held whose title appears more often than it was planned (a row made twice), with how
    /// many of that title are held.
    pub repeated: Vec<(String, usize)>,
}

impl RowCheck {
    /// Every planned row present exactly once.
    pub fn complete(&self) -> bool {
        self.missing.is_empty() && self.repeated.is_empty()
    }
}

/// Reads every row of `data_source` (paged queries) and checks them against `planned` (row page
/// id and title of each row the state database recorded).
pub async fn check_rows(
    notion: &NotionClient,
    data_source: &str,
    planned: &[(String, String)],
) -> Result<RowCheck, NotionError> {
    let held = rows(notion, data_source).await?;
    let ids: std::collections::HashSet<&str> =
        held.iter().filter_map(|r| r["id"].as_str()).collect();
    let mut held_titles: HashMap<String, usize> = HashMap::new();
    for r in &held {
        *held_titles.entry(row_title(r)).or_default() += 1;
    }
    let mut planned_titles: HashMap<&str, usize> = HashMap::new();
    for (_, t) in planned {
        *planned_titles.entry(t.as_str()).or_default() += 1;
    }
    let mut repeated: Vec<(String, usize)> = held_titles
        .into_iter()
        .filter(|(t, n)| *n > planned_titles.get(t.as_str()).copied().unwrap_or(0).max(1))
        .collect();
    repeated.sort();
    Ok(RowCheck {
        found: held.len(),
        missing: planned
            .iter()
            .filter(|(id, _)| !ids.contains(id.as_str()))
            .map(|(id, _)| id.clone())
            .collect(),
        repeated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tag_names_notion_refuses_are_mapped_and_others_kept() {
        assert_eq!(accepted_tag_name("To Do"), None);
        assert_eq!(accepted_tag_name("Important"), None);
        assert_eq!(
            accepted_tag_name("Call back, later"),
            Some("Call back; later".into())
        );
        assert_eq!(accepted_tag_name("  "), Some("Tag".into()));
        let long = "é".repeat(150);
        let mapped = accepted_tag_name(&long).unwrap();
        assert_eq!(mapped.chars().count(), MAX_TAG_NAME);
        assert!(mapped.ends_with('…'));
        for s in ["a,b", ",", &"x,".repeat(80)] {
            let m = accepted_tag_name(s).unwrap();
            assert!(!m.contains(',') && m.chars().count() <= MAX_TAG_NAME && !m.trim().is_empty());
        }
    }

    #[test]
    fn a_row_carries_onenote_properties_within_notions_limits() {
        let t = DateTime::parse_from_rfc3339("2021-03-04T05:06:07Z")
            .unwrap()
            .with_timezone(&Utc);
        let row = Row {
            title: String::new(),
            created: Some(t),
            modified: None,
            tags: vec!["To Do".into()],
            author: Some("a".repeat(4500)),
            order: 3,
            level: 1,
            link: Some(format!("https://x.example/{}", "l".repeat(2000))),
        };
        let p = row.properties();
        assert_eq!(p["Name"]["title"][0]["text"]["content"], "Untitled");
        assert_eq!(p["Created"]["date"]["start"], "2021-03-04T05:06:07.000Z");
        assert_eq!(p["Modified"]["date"], Value::Null);
        assert_eq!(p["Tags"]["multi_select"][0]["name"], "To Do");
        assert_eq!(p["Author"]["rich_text"].as_array().unwrap().len(), 3);
        assert_eq!(p["Order"]["number"], 3);
        assert_eq!(p["Level"]["number"], 1);
        assert_eq!(
            p["OneNote link"]["url"],
            Value::Null,
            "a link over 2000 is left out"
        );
    }
}
