//! The files route as its user meets it: a clean environment holding only `NOTION_TOKEN`, the test
//! Notion server's URL, the state database and a home of the test's own (no client id, no tenant,
//! no account, no Graph URL). Every command works there and none makes a request to Microsoft.
//!
//! The proof of "no request to Microsoft": every proxy variable points at a listener that records
//! each request it is asked to forward (only loopback, where the Notion test server is, goes
//! direct). With no Graph or sign-in URL set, a request to Microsoft would go to its default
//! address, so through that listener. A control run with Notion's URL unset shows the listener
//! does see a default address being dialled.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;

use crate::bin_support::{self, Bin};
use crate::files_support::{expected_tree, fast, notion_tree, sample};
use notebridge_testkit::lab::{Lab, LabConfig};
use serde_json::Value;

/// A listener standing in for every proxy: it records the first line of each request (`CONNECT
/// host:443 ...` for HTTPS) and never answers.
#[derive(Clone)]
struct Recorder {
    url: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    async fn start() -> Recorder {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let seen: Arc<Mutex<Vec<String>>> = Arc::default();
        let s = seen.clone();
        tokio::spawn(async move {
            loop {
                let Ok((mut sock, _)) = listener.accept().await else {
                    return;
                };
                let s = s.clone();
                tokio::spawn(async move {
                    let mut buf = vec![0u8; 1024];
                    let n = sock.read(&mut buf).await.unwrap_or(0);
                    let text = String::from_utf8_lossy(&buf[..n]);
                    let line = text.lines().next().unwrap_or("(nothing)").to_owned();
                    s.lock().unwrap().push(line);
                    // Held open, unanswered, until the client gives up.
                    tokio::time::sleep(Duration::from_secs(300)).await;
                    drop(sock);
                });
            }
        });
        Recorder { url, seen }
    }

    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// What the user has: a home, the state database, the Notion token and (for the test server) its
/// URL. Nothing of Microsoft's.
struct User {
    home: tempfile::TempDir,
    db: PathBuf,
    token: String,
    notion_url: Option<String>,
    proxy: Recorder,
}

impl User {
    async fn new(lab: &Lab) -> User {
        let home = tempfile::tempdir().unwrap();
        let db = home.path().join("notebridge.db");
        User {
            db,
            token: lab.notion.token().to_owned(),
            notion_url: Some(lab.notion.base_url().to_owned()),
            proxy: Recorder::start().await,
            home,
        }
    }

    fn bin(&self, args: &[&str]) -> Bin {
        let h = self.home.path();
        let mut b = bin_support::notebridge(h, &["--no-progress"])
            .args(args)
            .env("NOTION_TOKEN", &self.token)
            .env("NOTEBRIDGE_DB", &self.db);
        for k in [
            "HTTPS_PROXY",
            "HTTP_PROXY",
            "ALL_PROXY",
            "https_proxy",
            "http_proxy",
        ] {
            b = b.env(k, &self.proxy.url);
        }
        b = b.env("NO_PROXY", "127.0.0.1,localhost");
        if let Some(u) = &self.notion_url {
            b = b.env("NOTEBRIDGE_NOTION_URL", u);
        }
        b
    }

    async fn run(&self, args: &[&str]) -> (i32, String, String) {
        let out = self.bin(args).run().await;
        (out.code.unwrap_or(-1), out.stdout, out.stderr)
    }

    /// Nothing was asked of anyone but the Notion test server.
    fn asked_no_one_else(&self, after: &str) {
        assert_eq!(
            self.proxy.seen(),
            Vec::<String>::new(),
            "a request left for an address of its default settings after {after}"
        );
    }
}

fn json(out: &str) -> Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// `scan --from PATH --json` as this user runs it.
async fn scanned(user: &User, path: &Path) -> Value {
    let (code, out, err) = user
        .run(&["--json", "scan", "--from", path.to_str().unwrap()])
        .await;
    assert!(
        code == 0 || code == 4,
        "scan --from {path:?}: {code}\n{err}"
    );
    json(&out)
}

/// Whether a scan document lists a section that cannot be read (its migration exits 4).
fn has_problem(doc: &Value) -> bool {
    doc.to_string().contains("\"problem\"")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_command_works_with_nothing_but_a_notion_token_and_asks_microsoft_nothing() {
    let (Some(folder), Some(package), Some(lone)) = (
        sample("onenote.rs/samples/New Section Group"),
        sample("obsidian-importer/makecab-lzx-notebook.onepkg"),
        sample("apache-tika/testOneNote1.one"),
    ) else {
        return;
    };
    let lab = Lab::start(fast()).await;
    let user = User::new(&lab).await;
    let target = lab.notion.add_shared_page("Imports");

    // Nothing yet: status and report say how to start, either way.
    for cmd in ["status", "report"] {
        let (code, _, err) = user.run(&[cmd]).await;
        assert_eq!(code, 3, "{cmd}: {err}");
        assert!(
            err.contains("notebridge migrate --from PATH --to PAGE"),
            "{cmd}: {err}"
        );
        assert!(err.contains("notebridge login"), "{cmd}: {err}");
    }
    // doctor checks what a files migration needs and says why it skipped Microsoft's checks.
    let (code, out, _) = user.run(&["--json", "doctor", "--to", &target]).await;
    let doc = bin_support::doctor_passed(Some(code), &out);
    let checks = doc["checks"].as_array().unwrap();
    let names: Vec<&str> = checks.iter().map(|c| c["name"].as_str().unwrap()).collect();
    for want in [
        "database",
        "microsoft",
        "notion_token",
        "upload_limit",
        "notion_target",
        "migration_lock",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    let ms = checks.iter().find(|c| c["name"] == "microsoft").unwrap();
    assert!(
        ms["detail"]
            .as_str()
            .unwrap()
            .starts_with("skipped: no client id"),
        "{ms}"
    );
    assert!(!names.contains(&"client_id"), "{names:?}");
    // Which way its requests went, and from which setting: the proxy variables name the recorder,
    // NO_PROXY sends the Notion test server's address direct; no Microsoft service is named.
    let net = checks.iter().find(|c| c["name"] == "network").unwrap();
    assert_eq!(
        net["detail"],
        "Notion (127.0.0.1): direct (NO_PROXY from the environment names the host); \
         no TLS (plain http)",
        "{net}"
    );
    user.asked_no_one_else("doctor");

    // A notebook folder, a package and a lone section, each planned, shown, run.
    let (mut want, mut unreadable) = (Vec::new(), false);
    for path in [&folder, &package, &lone] {
        let p = path.to_str().unwrap();
        let doc = scanned(&user, path).await;
        assert_eq!(doc["source"]["kind"], "files", "{doc}");
        let (code, out, err) = user
            .run(&[
                "--json",
                "migrate",
                "--from",
                p,
                "--to",
                &target,
                "--dry-run",
            ])
            .await;
        assert_eq!(code, 0, "dry run of {p}: {out}\n{err}");
        assert_eq!(json(&out)["plan"]["accounts"][0]["graph_requests"], 0);
        let (code, out, err) = user.run(&["migrate", "--from", p, "--to", &target]).await;
        unreadable |= has_problem(&doc);
        let expect = if has_problem(&doc) { 4 } else { 0 };
        assert_eq!(code, expect, "migrate --from {p}: {out}\n{err}");
        want.extend(expected_tree(&doc));
        user.asked_no_one_else(&format!("migrate --from {p}"));
    }
    let mut got = notion_tree(&lab, &target);
    got.sort();
    want.sort();
    assert_eq!(got, want, "every page once");

    // Everything after the first run, as the contract lists it.
    let f = folder.to_str().unwrap();
    // (A section the parser refuses stays failed: the runs that cover it exit 4.)
    let all = if unreadable { 4 } else { 0 };
    for (args, expect) in [
        (vec!["migrate", "--resume"], all),
        (vec!["migrate", "--from", f, "--to", &target, "--update"], 0),
        (
            vec!["migrate", "--from", f, "--resume", "--retry-failed"],
            0,
        ),
        (vec!["verify", "--from", f], 0),
        (vec!["verify"], all),
    ] {
        let (code, out, err) = user.run(&args).await;
        assert_eq!(code, expect, "{args:?}: {out}\n{err}");
    }
    assert_eq!(
        notion_tree(&lab, &target).len(),
        want.len(),
        "nothing added"
    );
    let (code, out, err) = user.run(&["--json", "status"]).await;
    assert_eq!(code, 0, "{err}");
    let status = json(&out);
    assert_eq!(status["imports"].as_array().unwrap().len(), 3, "{status}");
    assert!(status["accounts"].as_array().unwrap().is_empty());
    let report = user.home.path().join("r.html");
    let (code, out, err) = user
        .run(&["report", "--output", report.to_str().unwrap()])
        .await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(std::fs::read_to_string(&report)
        .unwrap()
        .contains("testOneNote1"));
    let (code, out, _) = user.run(&["--json", "doctor"]).await;
    bin_support::doctor_passed(Some(code), &out);
    user.asked_no_one_else("every command");
    assert_eq!(
        lab.graph.counters().total,
        0,
        "nothing points at the Graph test server either"
    );

    // The control: with Notion's URL unset, its default address is dialled, through the listener.
    let control = User {
        notion_url: None,
        ..User::new(&lab).await
    };
    let (code, _, err) = control.run(&["doctor", "--timeout", "1s"]).await;
    assert_ne!(code, 0, "{err}");
    let seen = control.proxy.seen();
    assert!(
        seen.iter().any(|l| l.contains("api.notion.com")),
        "the listener sees a default address dialled: {seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killed_mid_run_a_resume_with_only_the_token_finishes_every_page_once() {
    let Some(folder) = sample("onenote.rs/samples/New Section Group") else {
        return;
    };
    // Notion at its real pace, so a run lasts long enough to be killed.
    let lab = Lab::start(LabConfig::default()).await;
    let user = User::new(&lab).await;
    let target = lab.notion.add_shared_page("Imports");
    let f = folder.to_str().unwrap();
    let want = expected_tree(&scanned(&user, &folder).await);
    let mut child = user.bin(&["migrate", "--from", f, "--to", &target]).spawn();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while notion_tree(&lab, &target).len() < 3 {
        assert!(tokio::time::Instant::now() < deadline, "no progress");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // SIGKILL: no clean-up of any kind.
    child.start_kill().unwrap();
    child.wait().await.unwrap();
    assert!(
        notion_tree(&lab, &target).len() < want.len(),
        "killed before the end"
    );

    let (code, out, err) = user.run(&["migrate", "--resume"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        notion_tree(&lab, &target),
        want,
        "every page once, in order"
    );
    assert!(lab.notion.duplicate_titles(&target).is_empty());
    let (code, out, _) = user.run(&["verify"]).await;
    assert_eq!(code, 0, "{out}");
    user.asked_no_one_else("the kill and the resume");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_the_contents_name_that_is_not_there_is_a_note_not_a_failure() {
    // A notebook folder copied without its section group folder: a real table of contents that
    // names five sections, the folder `FileSyncandWOPI` and the recycle bin, beside five real
    // sections under the names it gives (the samples hold no notebook with its group folders, so
    // the folder is the one thing missing by construction).
    let rels = [
        (
            "interop-testsuites/MS-ONESTORE-Resources/NoSection.onetoc2",
            "Open Notebook.onetoc2",
        ),
        (
            "onenote.rs/samples/New Section Group/New Section 1.one",
            "New Section 1.one",
        ),
        (
            "onenote.rs/samples/New Section Group/New Section 2.one",
            "New Section 2.one",
        ),
        ("apache-tika/testOneNote1.one", "New Section 3.one"),
        ("apache-tika/testOneNote2016.one", "testing Section.one"),
        ("apache-tika/testOneNote4.one", "testone1.one"),
    ];
    let lab = Lab::start(fast()).await;
    let user = User::new(&lab).await;
    let notebook = user.home.path().join("Work notebook");
    std::fs::create_dir(&notebook).unwrap();
    for (rel, name) in rels {
        let Some(src) = sample(rel) else { return };
        std::fs::copy(src, notebook.join(name)).unwrap();
    }
    let nb = notebook.to_str().unwrap();
    let missing = notebook.join("FileSyncandWOPI");
    let target = lab.notion.add_shared_page("Imports");

    let (code, out, err) = user.run(&["--json", "scan", "--from", nb]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let doc = json(&out);
    assert!(!has_problem(&doc), "every section there reads: {doc}");
    assert_eq!(
        doc["missing_folders"][0],
        missing.to_str().unwrap(),
        "{doc}"
    );
    assert!(err.contains("names the folder"), "{err}");

    let (code, out, err) = user.run(&["migrate", "--from", nb, "--to", &target]).await;
    assert_eq!(code, 0, "a note, not a failed item: {out}\n{err}");
    let note = format!("names the folder {}, which is not there", missing.display());
    assert!(out.contains(&note), "the run's summary says it: {out}");
    assert_eq!(
        notion_tree(&lab, &target),
        expected_tree(&doc),
        "the rest, every page once"
    );

    // Every run after: still exit 0, nothing to retry.
    let (code, out, err) = user
        .run(&[
            "--json",
            "migrate",
            "--from",
            nb,
            "--resume",
            "--retry-failed",
        ])
        .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let run = json(&out);
    assert_eq!(run["failed"], 0, "{run}");
    assert!(run["notes"][0].as_str().unwrap().contains(&note), "{run}");
    assert!(
        err.contains("0 failed items put back"),
        "nothing to retry: {err}"
    );
    let (code, out, err) = user.run(&["migrate", "--from", nb, "--to", &target]).await;
    assert_eq!(code, 0, "{out}\n{err}");

    let (code, out, _) = user.run(&["--json", "status"]).await;
    assert_eq!(code, 0);
    let status = json(&out);
    let import = &status["imports"][0];
    assert!(
        import["failures"].as_array().unwrap().is_empty(),
        "{status}"
    );
    assert!(
        import["notes"][0].as_str().unwrap().contains(&note),
        "{status}"
    );
    let (_, text, _) = user.run(&["status"]).await;
    assert!(
        text.contains("  note: the notebook's table of contents"),
        "{text}"
    );
    assert!(text.contains(&note), "{text}");
    let report = user.home.path().join("r.html");
    let (code, _, err) = user
        .run(&["report", "--output", report.to_str().unwrap()])
        .await;
    assert_eq!(code, 0, "{err}");
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("<h3>Notes</h3>"), "the report says it");
    assert!(html.contains("FileSyncandWOPI"));
    let (code, out, _) = user.run(&["verify"]).await;
    assert_eq!(code, 0, "{out}");
    user.asked_no_one_else("the notebook without its folder");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accounts_migration_without_a_client_id_says_so_before_any_work() {
    let lab = Lab::start(fast()).await;
    let user = User::new(&lab).await;
    let who = lab.add_user(
        "default",
        notebridge_testkit::generator::generate(&Default::default()),
    );
    lab.sign_in(
        &notebridge::store::Db::open(&user.db).unwrap(),
        "default",
        &who,
    );
    let target = lab.notion.add_shared_page("Imports");
    let (code, out, err) = user.run(&["migrate", "--to", &target]).await;
    assert_eq!(code, 2, "{out}\n{err}");
    assert!(err.contains("NOTEBRIDGE_CLIENT_ID"), "{err}");
    assert!(
        notion_tree(&lab, &target).is_empty(),
        "nothing planned or written"
    );
    user.asked_no_one_else("an account's migration without a client id");
}
