//! A migrated state for the `verify` and `status` tests: an inventory, a plan, and Notion pages
//! written on the lab's Notion server by the library's own item writer (`notion::item`: the intent,
//! the creation, the page's record, its body and journal), each job run through the store's
//! transitions in the order the run's own job graph gives. Only what the pages hold and which jobs
//! fail or stop halfway is chosen here.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::bin_support::notebridge;
use notebridge::clock::{Clock, Jitter};
use notebridge::convert::{Block, RichText, TextBlock};
use notebridge::graph::GraphError;
use notebridge::notion::client::NotionClient;
use notebridge::notion::item::{self, ItemRecord};
use notebridge::notion::journal::Journal;
use notebridge::notion::rate::NotionRate;
use notebridge::notion::steps::{element_count, shape};
use notebridge::notion::writer::{Fetch, NewPage, Resource, Writer};
use notebridge::queue::graph::JobGraph;
use notebridge::settings::Window;
use notebridge::store::accounts::Account;
use notebridge::store::inventory::{Notebook, Page, ScanScope, Section, SectionGroup};
use notebridge::store::jobs::{JobKind, JobState};
use notebridge::store::notion_items::{ItemKind, Written};
use notebridge::store::Db;
use notebridge_testkit::lab::{Lab, LabConfig};
use serde_json::{json, Value};

/// The lab, a database and a client on the lab's Notion server.
pub struct World {
    pub lab: Lab,
    pub dir: tempfile::TempDir,
    pub db_path: PathBuf,
    pub db: Arc<Db>,
    pub client: NotionClient,
}

/// What the migration does with one page.
#[derive(Clone, Debug, PartialEq)]
pub enum Fate {
    /// Created and written completely.
    Done,
    /// Its job fails permanently with this error before anything is created.
    Fail(String),
    /// Created and its body written, then the process died before recording it complete (its
    /// job left running).
    Interrupted,
}

pub async fn world() -> World {
    let lab = Lab::start(LabConfig {
        notion_per_second: 50,
        ..LabConfig::default()
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    let db_path = dir.path().join("state.db");
    let db = Arc::new(Db::open(&db_path).unwrap());
    let rate = Arc::new(NotionRate::new(
        Window {
            count: 50,
            length: Duration::from_secs(1),
        },
        3,
    ));
    let client = NotionClient::new(
        lab.notion.base_url(),
        lab.notion.token(),
        rate,
        Jitter::seeded(3),
    )
    .with_backoff_base(Duration::from_millis(20));
    World {
        lab,
        dir,
        db_path,
        db,
        client,
    }
}

pub fn add_account(db: &Db, name: &str) {
    db.save_account(&Account {
        name: name.into(),
        user_id: format!("user-{name}"),
        user_principal_name: format!("{name}@example.com"),
        display_name: None,
        refresh_token: Some("rt".into()),
        access_token: None,
        access_expires_at: None,
        updated_at: 0,
    })
    .unwrap();
}

fn page(id: &str, title: &str, level: i64, order: i64) -> Page {
    Page {
        id: id.into(),
        title: title.into(),
        level,
        order,
        last_modified: Some("2024-05-01T10:00:00.000Z".into()),
        created: None,
        content_url: None,
        author: None,
        web_url: None,
    }
}

/// Work / Notes: First, Sub (level 1), an untitled page; Work / Projects / Inner: Deep page.
pub fn inventory() -> Vec<Notebook> {
    vec![Notebook {
        id: "nb".into(),
        name: "Work".into(),
        created: None,
        last_modified: None,
        section_groups: vec![SectionGroup {
            id: "g".into(),
            name: "Projects".into(),
            created: None,
            last_modified: None,
            section_groups: vec![],
            sections: vec![Section {
                id: "s2".into(),
                name: "Inner".into(),
                created: None,
                last_modified: None,
                pages: vec![page("q1", "Deep page", 0, 0)],
            }],
        }],
        sections: vec![Section {
            id: "s1".into(),
            name: "Notes".into(),
            created: None,
            last_modified: None,
            pages: vec![
                page("p1", "First", 0, 0),
                page("p1a", "Sub", 1, 1),
                page("p2", "", 0, 2),
            ],
        }],
    }]
}

fn para(text: &str) -> Value {
    json!({"object": "block", "type": "paragraph",
           "paragraph": {"rich_text": [{"type": "text", "text": {"content": text}}]}})
}

/// A page body as Notion holds it once written: two paragraphs and a bullet holding two more (5
/// blocks in all, 3 at the top), what [`blocks`] is written as.
pub fn body(id: &str) -> Vec<Value> {
    vec![
        para(&format!("{id} one")),
        para(&format!("{id} two")),
        json!({"object": "block", "type": "bulleted_list_item", "bulleted_list_item": {
            "rich_text": [{"type": "text", "text": {"content": "more"}}],
            "children": [para("inside a"), para("inside b")]}}),
    ]
}

fn text(t: &str) -> TextBlock {
    TextBlock::new(vec![RichText::plain(t)])
}

/// A page's converted body, as the writer takes it (see [`body`]).
pub fn blocks(id: &str) -> Vec<Block> {
    let mut more = text("more");
    more.children = vec![
        Block::Paragraph(text("inside a")),
        Block::Paragraph(text("inside b")),
    ];
    vec![
        Block::Paragraph(text(&format!("{id} one"))),
        Block::Paragraph(text(&format!("{id} two"))),
        Block::Bulleted(more),
    ]
}

pub const REPORT: &str = r#"[{"element":"<sup>","count":2,"action":"text kept"}]"#;

/// The pages hold no files: a fetch is a bug of the test.
fn no_files() -> Fetch {
    Arc::new(|res: Resource| {
        Box::pin(async move {
            Err(GraphError::BadAnswer {
                account: String::new(),
                item: format!("file {:?}", res.file_name),
                problem: "the verify tests' pages hold no files".into(),
            })
        })
    })
}

/// Scans `inventory()` into the database for `account` and plans it under a new shared page.
pub fn plan(w: &World, account: &str) -> String {
    let target = w.lab.notion.add_shared_page("OneNote import");
    w.db.save_scan(account, &inventory(), &ScanScope::All, 1)
        .unwrap();
    plan_as_holder(w, account, &target, 2);
    target
}

/// Plans `inventory()` of `account` under `target` as `migrate` does: holding the run lock.
pub fn plan_as_holder(w: &World, account: &str, target: &str, now: i64) {
    let lock =
        w.db.acquire_run_lock(1, "plan", now, Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
    w.db.create_plan(&lock, account, target, &inventory(), now)
        .unwrap();
    w.db.release_run_lock(lock.as_str()).unwrap();
}

/// Drains the plan as `migrate` would, page fates as given (default `Done`). Returns OneNote id ->
/// Notion page id of what was created.
pub async fn migrate(
    w: &World,
    account: &str,
    target: &str,
    fates: &HashMap<&str, Fate>,
) -> HashMap<String, String> {
    let titles: HashMap<String, String> = {
        let mut m = HashMap::new();
        let inv = inventory();
        m.insert(inv[0].id.clone(), inv[0].name.clone());
        m.insert(
            inv[0].section_groups[0].id.clone(),
            inv[0].section_groups[0].name.clone(),
        );
        for s in inv[0]
            .sections
            .iter()
            .chain(&inv[0].section_groups[0].sections)
        {
            m.insert(s.id.clone(), s.name.clone());
            for p in &s.pages {
                m.insert(p.id.clone(), p.title.clone());
            }
        }
        m
    };
    let mut item_of_job: HashMap<i64, String> = HashMap::new();
    let mut created: HashMap<String, String> = HashMap::new();
    let mut now = 10;
    // The queue changes only under the run lock, as `migrate` holds it.
    let lock =
        w.db.acquire_run_lock(1, "test", now, Duration::from_secs(90), |_| false)
            .unwrap()
            .unwrap();
    // The run's own graph decides the order, as `migrate` runs it.
    let accounts = [account.to_owned()];
    let mut graph = JobGraph::new(w.db.load_jobs(&accounts).unwrap());
    while let Some(job) = graph.claim(&accounts, now, usize::MAX) {
        w.db.start_job(job.id, &lock, now).unwrap();
        now += 1;
        item_of_job.insert(job.id, job.item_id.clone());
        if job.kind == JobKind::Links {
            w.db.complete_job(job.id, &lock, now).unwrap();
            graph.finish(job.id, JobState::Done, 0, true);
            continue;
        }
        let fate = fates
            .get(job.item_id.as_str())
            .cloned()
            .unwrap_or(Fate::Done);
        if let Fate::Fail(e) = &fate {
            w.db.fail_job(job.id, &lock, e, "item/never", now).unwrap();
            graph.finish(job.id, JobState::Failed, 0, true);
            continue;
        }
        let parent = match job.parent_job {
            None => target.to_owned(),
            Some(p) => created[&item_of_job[&p]].clone(),
        };
        let body = if job.kind == JobKind::Page {
            blocks(&job.item_id)
        } else {
            vec![]
        };
        let kind = ItemKind::of_job(job.kind).unwrap();
        let record = ItemRecord {
            db: &w.db,
            token: &lock,
            account,
            item_id: &job.item_id,
            kind,
        };
        let mut writer = Writer::new(w.client.clone(), no_files(), 5 << 20);
        if job.kind == JobKind::Page {
            let clock = Clock::system();
            let journal = Journal::new(w.db.clone(), lock.clone(), account, &job.item_id, clock);
            writer = writer.with_journal(journal);
        }
        let page = NewPage {
            parent: &parent,
            title: &titles[&job.item_id],
            blocks: &body,
            resources: &HashMap::new(),
        };
        let (writing, _) = item::create(&writer, record, None, page, &|| {})
            .await
            .unwrap();
        created.insert(job.item_id.clone(), writing.page_id().to_owned());
        if fate == Fate::Interrupted {
            // Killed before the body was recorded: the job stays claimed, the body unconfirmed.
            continue;
        }
        let shape = shape(&body);
        let written = Written {
            blocks: element_count(&body) as i64,
            files: 0,
            report: (job.kind == JobKind::Page).then_some(REPORT),
            onenote_last_modified: (job.kind == JobKind::Page)
                .then_some("2024-05-01T10:00:00.000Z"),
            pending_links: false,
            shape: Some(&shape),
            links_recorded: job.kind == JobKind::Page,
            fingerprint: None,
            row_order: None,
            body_digest: None,
        };
        writing.written(&w.db, &lock, &written).unwrap();
        w.db.complete_job(job.id, &lock, now).unwrap();
        graph.finish(job.id, JobState::Done, 0, true);
    }
    w.db.release_run_lock(lock.as_str()).unwrap();
    created
}

/// Runs the real binary against the lab with `args`, the lab's variables changed by `env` (`None`:
/// unset); returns (exit code, stdout, stderr).
pub fn run_bin(w: &World, args: &[&str], env: &[(&str, Option<&str>)]) -> (i32, String, String) {
    let db = w.db_path.display().to_string();
    let mut bin = notebridge(w.dir.path(), &["--db", &db])
        .args(args)
        .envs(w.lab.env());
    for (k, v) in env {
        bin = match v {
            Some(v) => bin.env(k, v),
            None => bin.env_remove(k),
        };
    }
    let out = bin.run_blocking();
    (out.code.unwrap_or(-1), out.stdout, out.stderr)
}
