//! `sync` benchmark (issue 50): what a sync costs when little or nothing changed. The real
//! `notebridge` binary migrates a 1,300-page notebook (40 sections) from the Graph test server
//! into the Notion test server, then runs `sync` twice: once with nothing changed in OneNote, once
//! with 1 % of the pages changed (5 edited, 3 renamed, 3 moved to another section, 2 deleted).
//! Figures, one line each: the Graph requests (all of them listings when nothing changed), the
//! Notion requests and the Notion writes of each sync, and its wall time. The windows are the
//! documented per-user counts in short windows (`120/600ms,400/6s`), Notion at 300/s: the counts
//! are the figures, not the times.

use std::process::{Command, Stdio};
use std::time::Instant;

use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};

fn run(lab: &Lab, home: &std::path::Path, db: &std::path::Path, args: &[&str]) -> (i32, f64) {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_notebridge"))
        .env_clear()
        .env("HOME", home)
        .envs(lab.env().into_iter().filter(|(k, _)| {
            k != "NOTEBRIDGE_GRAPH_APP_LIMITS" && k != "NOTEBRIDGE_GRAPH_APP_CONCURRENCY"
        }))
        .arg("--db")
        .arg(db)
        .args(["--no-progress", "--json"])
        .args(args)
        .stdin(Stdio::null())
        .output()
        .expect("the notebridge binary starts");
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code == 0,
        "{args:?} failed ({code}): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, started.elapsed().as_secs_f64())
}

/// The services' counters now: Graph requests, Notion requests, Notion writes.
fn counters(lab: &Lab) -> (u64, u64, u64) {
    let n = lab.notion.counters();
    (
        lab.graph.counters().total,
        n.per_endpoint.values().sum::<u64>(),
        n.changing_writes(),
    )
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let lab = Lab::start(LabConfig {
            user_windows: "120/600ms,400/6s".into(),
            app_windows: "240/600ms,800/6s".into(),
            notion_per_second: 300,
            ..LabConfig::default()
        })
        .await;
        let notes = generate(&NotebookSpec {
            notebooks: 1,
            section_groups_depth: 0,
            sections_per_container: 40,
            pages_per_section: 0,
            total_pages: Some(1300),
            subpage_ratio: 0.1,
            images_per_page: 0,
            seed: 50,
            ..NotebookSpec::default()
        });
        let user = lab.add_user("alice", notes.clone());
        let dir = tempfile::tempdir().expect("temp dir");
        let db = dir.path().join("state.db");
        lab.sign_in(&notebridge::store::Db::open(&db).unwrap(), "alice", &user);
        let to = lab.target_page.clone();
        let (_, wall) = run(&lab, dir.path(), &db, &["migrate", "--account", "alice", "--to", &to]);
        println!("sync: first migration of {} pages in {wall:.1} s", notes.pages.len());

        let before = counters(&lab);
        let (_, wall) = run(&lab, dir.path(), &db, &["sync", "--account", "alice"]);
        let after = counters(&lab);
        println!(
            "sync unchanged ({} pages, {} sections): {} Graph requests (listings only), {} Notion requests, {} Notion writes (target 0), {wall:.1} s",
            notes.pages.len(),
            notes.sections.len(),
            after.0 - before.0,
            after.1 - before.1,
            after.2 - before.2,
        );

        // 1 %: 13 pages of 1,300 (top-level pages with nothing under them).
        let leaves: Vec<(String, String)> = notes
            .pages
            .windows(2)
            .filter(|w| w[0].level == 0 && w[1].level == 0 && w[0].section_id == w[1].section_id)
            .map(|w| (w[0].id.clone(), w[0].section_id.clone()))
            .collect();
        let other = notes.sections[1].id.clone();
        lab.graph.mutate(&user.id, |n| {
            let mut it = leaves.iter().filter(|(_, s)| *s != other);
            for (id, _) in it.by_ref().take(5) {
                n.edit_page_content("alice", id).unwrap();
            }
            for (i, (id, _)) in it.by_ref().take(3).enumerate() {
                n.rename_page("alice", id, &format!("Renamed {i}")).unwrap();
            }
            for (id, _) in it.by_ref().take(3) {
                n.move_page("alice", id, &other).unwrap();
            }
            for (id, _) in it.by_ref().take(2) {
                n.delete_page("alice", id).unwrap();
            }
        });
        let before = counters(&lab);
        let (_, wall) = run(&lab, dir.path(), &db, &["sync", "--account", "alice"]);
        let after = counters(&lab);
        println!(
            "sync 1% changed (13 of {} pages: 5 edited, 3 renamed, 3 moved, 2 deleted): {} Graph requests, {} Notion requests, {} Notion writes, {wall:.1} s",
            notes.pages.len(),
            after.0 - before.0,
            after.1 - before.1,
            after.2 - before.2,
        );

        // As the real service numbers pages: 3 more pages moved come back under new ids, each
        // recognised by its `onenote:` GUID and moved, not trashed and created again.
        lab.graph
            .faults()
            .field(notebridge_testkit::graph::faults::Field {
                renumber_moved_pages: true,
                ..Default::default()
            });
        lab.graph.mutate(&user.id, |n| {
            for (id, _) in leaves.iter().filter(|(_, s)| *s != other).skip(13).take(3) {
                n.move_page("alice", id, &other).unwrap();
            }
        });
        let before = counters(&lab);
        let (_, wall) = run(&lab, dir.path(), &db, &["sync", "--account", "alice"]);
        let after = counters(&lab);
        println!(
            "sync of 3 pages moved under new ids: {} Graph requests, {} Notion requests, {} Notion writes, {wall:.1} s",
            after.0 - before.0,
            after.1 - before.1,
            after.2 - before.2,
        );
    });
}
