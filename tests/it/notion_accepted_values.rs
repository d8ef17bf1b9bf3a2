//! Values Notion accepts: an upload's name, extension, content type and bytes agree (an image named
//! `.png` that is a TIFF goes up as `.tif`), names fit 900 bytes with their extension, a file over
//! the workspace's upload limit (read from `/v1/users/me` before work) is a visible placeholder
//! naming it and its size, listed by `verify`, and no page fails for it.

use crate::migrate_support;
use crate::notion_support;

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use bytes::Bytes;
use futures::FutureExt;
use migrate_support::{counts, notebridge, State};
use notebridge::notion::writer::{Fetch, NewPage, Resource, Writer};
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use notion_support::*;

#[tokio::test]
async fn names_types_and_bytes_agree_and_names_fit() {
    let s = fast_server(61).await;
    let root = s.add_shared_page("Values");
    let long = format!("{}.pdf", "n".repeat(1000));
    let files: Vec<(&str, String, Vec<u8>)> = vec![
        ("tiff", "scan.png".into(), b"II*\0 a tiff image".to_vec()),
        (
            "bmp",
            "old.png".into(),
            [b"BM".as_slice(), &[0u8; 40]].concat(),
        ),
        ("long", long.clone(), b"%PDF-1.7 a document".to_vec()),
    ];
    let bodies: HashMap<String, Bytes> = files
        .iter()
        .map(|(k, _, b)| {
            (
                format!("https://graph.example/r/{k}/$value"),
                Bytes::from(b.clone()),
            )
        })
        .collect();
    let fetch: Fetch = Arc::new(move |r: Resource| {
        let b = bodies[&r.url].clone();
        async move { Ok(b) }.boxed()
    });
    let resources: HashMap<String, Resource> = files
        .iter()
        .map(|(k, name, _)| {
            let url = format!("https://graph.example/r/{k}/$value");
            let mime = if name.ends_with(".pdf") {
                "application/pdf"
            } else {
                "image/png"
            };
            (
                url.clone(),
                Resource {
                    url,
                    file_name: name.clone(),
                    mime: Some(mime.into()),
                    fallback: None,
                },
            )
        })
        .collect();
    let blocks = vec![
        media("image", "https://graph.example/r/tiff/$value"),
        media("image", "https://graph.example/r/bmp/$value"),
        media("file", "https://graph.example/r/long/$value"),
    ];
    let w = Writer::new(client(&s, 2000, 200), fetch, 5 * 1024 * 1024 * 1024);
    let page = NewPage {
        parent: &root,
        title: "Values",
        blocks: &blocks,
        resources: &resources,
    };
    let (id, stats) = w
        .create_page(page, &HashSet::new(), false, &|_| {})
        .await
        .unwrap();
    let dump = s.dump(&id).unwrap();
    let upload = |i: usize| {
        let f = dump.children[i].file.clone().unwrap();
        s.upload(f.trim_start_matches("file_upload:")).unwrap()
    };
    assert_eq!(upload(0).filename.as_deref(), Some("scan.tif"));
    assert_eq!(dump.children[1].kind, "paragraph");
    assert!(
        dump.children[1].text.contains("old.png"),
        "{}",
        dump.children[1].text
    );
    assert!(
        dump.children[1].text.contains("a BMP image"),
        "{}",
        dump.children[1].text
    );
    let name = upload(2).filename.unwrap();
    assert!(
        name.len() <= 900 && name.ends_with(".pdf"),
        "{}",
        name.len()
    );
    assert!(long.starts_with(name.trim_end_matches(".pdf")));
    assert_eq!(stats.placeholders.len(), 1);
    assert_eq!(s.counters().validation_errors, 0, "nothing refused");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn files_over_the_workspace_upload_limit_are_placeholders_listed_by_verify() {
    let lab = Lab::start(LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    })
    .await;
    let spec = NotebookSpec {
        sections_per_container: 1,
        pages_per_section: 4,
        images_per_page: 1,
        attachments_per_page: 0,
        resource_bytes: 4096,
        seed: 62,
        ..NotebookSpec::default()
    };
    let user = lab.add_user("alice", generate(&spec));
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "alice", &user);
    // A workspace whose files may be at most 3,000 bytes: every 4 KB image is over it.
    lab.notion.set_max_file_upload_size(3000);

    let (code, out, err) = notebridge(
        &lab,
        &state,
        &[
            "--json",
            "migrate",
            "--account",
            "alice",
            "--to",
            &lab.target_page,
        ],
    )
    .await;
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let summary: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    let c = counts(&state.db, "alice");
    assert_eq!((c["pages_done"], c["failed"]), (4, 0));
    assert_eq!(summary["this_run"]["placeholders"], 4, "{summary}");
    // nothing was sent that the limit refuses: it was known before work (drawings under it went up)
    let refused = lab
        .notion
        .request_log()
        .iter()
        .filter(|r| r.status == 400)
        .count();
    assert_eq!(refused, 0);
    let db = Db::open(&state.db).unwrap();
    for p in lab.graph.notes(&user.id).pages {
        let id = db
            .notion_item("alice", &p.id)
            .unwrap()
            .unwrap()
            .into_page_id()
            .unwrap();
        let text = serde_json::to_string(&lab.notion.blocks_of(&id)).unwrap();
        assert!(
            text.contains("4096 bytes is over the workspace's upload limit of 3000 bytes"),
            "{text}"
        );
    }
    let (code, out, err) = notebridge(&lab, &state, &["--json", "verify"]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(
        out.matches("over the workspace's upload limit").count(),
        4,
        "{out}"
    );
}
