//! `--trace FILE` over a whole first run (login with a device code, scan, migrate, verify) against the
//! lab: every exchange with the sign-in service, Graph and Notion is a JSON line, and not one secret
//! the test servers issued (device codes, user codes, access and refresh tokens, the Notion token)
//! appears in it, nor any page's content; with NOTEBRIDGE_TRACE_BODIES=1 bodies appear, still
//! without a secret.

use crate::bin_support::Start;
use crate::migrate_support::{command, State};
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use serde_json::Value;

fn fast() -> LabConfig {
    LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    }
}

async fn traced_run(bodies: bool) -> (Lab, Vec<Value>, String) {
    let lab = Lab::start(fast()).await;
    lab.add_user(
        "default",
        generate(&NotebookSpec {
            total_pages: Some(8),
            pages_per_section: 0,
            images_per_page: 1,
            seed: 11,
            ..NotebookSpec::default()
        }),
    );
    let state = State::new();
    let file = state.dir.path().join("trace.jsonl");
    let steps: [&[&str]; 4] = [
        &["--json", "login"],
        &["scan"],
        &["migrate", "--to", &lab.target_page],
        &["verify"],
    ];
    for args in steps {
        let mut c = command(&lab, &state, args);
        c.env("NOTEBRIDGE_TRACE", &file);
        if bodies {
            c.env("NOTEBRIDGE_TRACE_BODIES", "1");
        }
        let out = c.run_to_end().await;
        assert!(out.status.success(), "{args:?}: {out:?}");
    }
    let text = std::fs::read_to_string(&file).unwrap();
    let lines = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    (lab, lines, text)
}

fn assert_no_secret(lab: &Lab, text: &str) {
    let mut secrets = lab.auth.issued_secrets();
    secrets.push(lab.notion.token().to_owned());
    assert!(
        secrets.len() > 3,
        "tokens and codes were issued: {secrets:?}"
    );
    for s in &secrets {
        assert!(!text.contains(s.as_str()), "a secret in the trace: {s}");
    }
    // the user code shown at sign-in is a secret too
    assert!(!text.contains("UC0000"), "a user code in the trace");
    assert!(text.contains("[redacted]"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_whole_traced_run_holds_no_secret_and_no_page_content() {
    let (lab, lines, text) = traced_run(false).await;
    assert_no_secret(&lab, &text);
    let services = |s: &str| lines.iter().filter(|l| l["service"] == s).count();
    assert!(services("sign-in") >= 2, "device code and token requests");
    assert!(
        services("graph") as u64
            >= lab.graph.counters().total - lab.graph.counters().inner_requests
    );
    assert!(services("notion") >= 8, "page creations, uploads, verify");
    for l in &lines {
        for key in [
            "time",
            "method",
            "url",
            "status",
            "elapsed_ms",
            "request_headers",
        ] {
            assert!(l.get(key).is_some(), "{key} in {l}");
        }
    }
    // page content never: Graph's page HTML and Notion's page bodies are sizes only
    for l in lines.iter().filter(|l| l["status"] == 200) {
        for body in ["request_body", "response_body"] {
            if let Some(b) = l[body].as_str() {
                assert!(
                    b.contains("not traced") || l["service"] == "sign-in" && body == "request_body",
                    "{body} of a successful exchange in the trace: {l}"
                );
            }
        }
    }
    assert!(!text.contains("<html"), "page HTML in the trace");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bodies_when_asked_still_without_a_secret() {
    let (lab, lines, text) = traced_run(true).await;
    assert_no_secret(&lab, &text);
    assert!(
        lines.iter().any(|l| l["service"] == "notion"
            && l["request_body"]
                .as_str()
                .is_some_and(|b| b.contains("children"))),
        "Notion request bodies are traced with NOTEBRIDGE_TRACE_BODIES=1"
    );
}
