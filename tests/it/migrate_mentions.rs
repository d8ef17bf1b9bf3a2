//! Links between migrated pages arrive as Notion page mentions (the page's live title, following
//! renames): backward links at write time, forward links by the link pass once their targets
//! exist; `verify` agrees and `--update` keeps them. A mention Notion refuses degrades to a link.

use crate::migrate_support;
use crate::notion_support;

use std::collections::{HashMap, HashSet};

use migrate_support::{notebridge, State};
use notebridge::convert::{PageTarget, RichKind, RichText};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use notion_support::*;
use serde_json::Value;

fn spec() -> NotebookSpec {
    NotebookSpec {
        sections_per_container: 2,
        pages_per_section: 12,
        images_per_page: 0,
        title_links: true,
        seed: 14,
        ..NotebookSpec::default()
    }
}

/// The page mentions in a page's top-level blocks: (mentioned page id, title shown).
fn mentions(blocks: &[Value]) -> Vec<(String, String)> {
    blocks
        .iter()
        .filter_map(|b| b["paragraph"]["rich_text"].as_array())
        .flatten()
        .filter(|r| r["type"] == "mention")
        .map(|r| {
            (
                r["mention"]["page"]["id"].as_str().unwrap_or("").to_owned(),
                r["plain_text"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_between_migrated_pages_arrive_as_mentions_and_update_keeps_them() {
    let lab = Lab::start(LabConfig {
        notion_per_second: 150,
        ..LabConfig::default()
    })
    .await;
    let user = lab.add_user("default", generate(&spec()));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["--json", "migrate", "--to", &lab.target_page],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let summary: Value = serde_json::from_str(out.trim()).unwrap();
    assert!(
        summary["this_run"]["links_rewritten"].as_u64().unwrap() > 0,
        "forward links were left to the link pass: {summary}"
    );

    let db = Db::open(&state.db).unwrap();
    let notion_id = |item: &str| {
        db.notion_item("default", item)
            .unwrap()
            .unwrap()
            .into_page_id()
            .unwrap()
    };
    let notes = lab.graph.notes(&user.id);
    let order: Vec<&str> = notes.pages.iter().map(|p| p.id.as_str()).collect();
    let linking: Vec<_> = notes.pages.iter().filter(|p| !p.links.is_empty()).collect();
    let (mut forward, mut backward) = (0, 0);
    for p in &linking {
        let target = notes.pages.iter().find(|t| t.id == p.links[0]).unwrap();
        let pos = |id: &str| order.iter().position(|o| *o == id).unwrap();
        if pos(&target.id) > pos(&p.id) {
            forward += 1;
        } else {
            backward += 1;
        }
        let blocks = lab.notion.blocks_of(&notion_id(&p.id));
        assert_eq!(
            mentions(&blocks),
            [(notion_id(&target.id), target.title.clone())],
            "page {:?} mentions its target, showing the target's title",
            p.title
        );
        let text = serde_json::to_string(&blocks).unwrap();
        assert!(!text.contains("(OneNote page {"), "{text}");
        assert!(
            !text.contains("\"url\":\"https://www.notion.so/"),
            "no link left: {text}"
        );
    }
    assert!(
        forward > 0 && backward > 0,
        "{forward} forward, {backward} backward"
    );

    // A rename in Notion shows wherever the page is mentioned.
    let first = &linking[0];
    let target_id = notion_id(&first.links[0]);
    lab.notion.rename_page(&target_id, "Renamed in Notion");
    let blocks = lab.notion.blocks_of(&notion_id(&first.id));
    assert_eq!(mentions(&blocks)[0].1, "Renamed in Notion");

    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let report: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(report["verdict"], "complete", "{report}");

    // The linking pages change in OneNote; `--update` rewrites them with their mentions.
    let changed: Vec<String> = lab.graph.mutate(&user.id, |n| {
        n.pages
            .iter_mut()
            .filter(|p| !p.links.is_empty())
            .map(|p| {
                p.content_seed = p.content_seed.wrapping_add(1);
                p.modified += chrono::Duration::days(1);
                p.id.clone()
            })
            .collect()
    });
    let (code, _, err) = notebridge(&lab, &state, &["scan"]).await;
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = notebridge(
        &lab,
        &state,
        &["migrate", "--to", &lab.target_page, "--update"],
    )
    .await;
    assert_eq!(code, 0, "{out}{err}");
    let notes = lab.graph.notes(&user.id);
    for id in &changed {
        let p = notes.pages.iter().find(|p| &p.id == id).unwrap();
        let blocks = lab.notion.blocks_of(&notion_id(id));
        let got = mentions(&blocks);
        assert_eq!(got.len(), 1, "page {:?} after --update: {got:?}", p.title);
        assert_eq!(got[0].0, notion_id(&p.links[0]));
    }
    let (code, out, err) = notebridge(&lab, &state, &["verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
}

#[tokio::test]
async fn a_mention_of_a_page_the_integration_cannot_see_is_refused_and_sent_as_a_link() {
    let s = fast_server(61).await;
    let root = s.add_shared_page("Mentions");
    let seen = s.add_shared_page("Seen");
    let unseen = "0f0e0d0c-0b0a-4909-8807-060504030201";
    // A link whose text is its target's title goes as a mention.
    let mention = |id: &str, title: &str| RichText {
        kind: RichKind::PageLink {
            content: title.into(),
            onenote_page_id: "{1}".into(),
            target: Some(PageTarget {
                id: id.into(),
                title: title.into(),
            }),
        },
        annotations: Default::default(),
    };
    let blocks = vec![
        para_of(vec![RichText::plain("see "), mention(&seen, "Seen")]),
        para_of(vec![RichText::plain("gone "), mention(unseen, "Gone")]),
    ];
    let page = notebridge::notion::writer::NewPage {
        parent: &root,
        title: "Mentions",
        blocks: &blocks,
        resources: &HashMap::new(),
    };
    let (id, stats) = writer(&s)
        .create_page(page, &HashSet::new(), false, &|_| {})
        .await
        .unwrap();
    let got = s.blocks_of(&id);
    assert_eq!(got.len(), 2, "the page arrived whole");
    assert_eq!(mentions(&got), [(seen.clone(), "Seen".to_owned())]);
    let run = &got[1]["paragraph"]["rich_text"][1];
    assert_eq!(run["type"], "text");
    assert_eq!(
        run["text"]["link"]["url"],
        "https://www.notion.so/0f0e0d0c0b0a49098807060504030201"
    );
    let elements: Vec<&str> = stats.degraded.iter().map(|d| d.element.as_str()).collect();
    assert_eq!(elements, ["page mention"]);
    assert_eq!(s.counters().validation_errors, 1);
}
