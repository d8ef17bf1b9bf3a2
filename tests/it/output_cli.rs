//! What a person and a script see, through the real binary: `--json` documents carry `"version"`,
//! errors under `--json` are one JSON document on stdout too, and `NO_COLOR` leaves no colour code in
//! anything a whole migration prints, even in a real terminal (a pty from `script`, where installed).

use std::process::Command;

use crate::bin_support::{notebridge, Output};
use crate::migrate_support::State;
use notebridge::store::Db;
use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{Lab, LabConfig};
use serde_json::Value;

fn bin(state: &State, args: &[&str]) -> Output {
    notebridge(state.dir.path(), args)
        .env("NOTEBRIDGE_DB", &state.db)
        .run_blocking()
}

#[test]
fn errors_under_json_are_one_document_on_stdout_with_the_exit_code() {
    let state = State::new();
    let out = bin(&state, &["--json", "status"]);
    assert_eq!(out.code, Some(3));
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["exit"], 3);
    assert_eq!(doc["version"], env!("CARGO_PKG_VERSION"));
    assert!(doc["error"]["message"]
        .as_str()
        .unwrap()
        .contains("no accounts"));
    // and the person still reads it on stderr
    assert!(out.stderr.starts_with("error: no accounts"));

    // a flag the parser refuses, too
    let out = bin(&state, &["scan", "--json", "--bogus"]);
    assert_eq!(out.code, Some(2));
    let doc: Value = serde_json::from_str(&out.stdout).unwrap();
    assert_eq!(doc["exit"], 2);
    assert!(doc["error"]["causes"][0]
        .as_str()
        .unwrap()
        .contains("--bogus"));

    // without --json, stdout stays empty
    assert!(bin(&state, &["status"]).stdout.is_empty());
}

#[test]
fn json_documents_carry_the_version_first() {
    let state = State::new();
    let page = format!("{}/fixtures/12-images.html", env!("CARGO_MANIFEST_DIR"));
    let out = bin(&state, &["convert", &page, "--json"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let text = &out.stdout;
    assert!(
        text.starts_with(&format!("{{\"version\":\"{}\"", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
}

/// Runs `args` in a pseudo-terminal (so progress bars and colours would be drawn) with `env`; the
/// pty's whole output. `None` when `script` is not installed.
fn in_a_terminal(args: &[String], env: &[(String, String)]) -> Option<(i32, String)> {
    let line = std::iter::once(env!("CARGO_BIN_EXE_notebridge").to_owned())
        .chain(args.iter().cloned())
        .map(|a| format!("'{}'", a.replace('\'', "'\\''")))
        .collect::<Vec<_>>()
        .join(" ");
    let out = Command::new("script")
        .args(["-qec", &line, "/dev/null"])
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("TERM", "xterm-256color")
        .envs(env.iter().map(|(k, v)| (k, v)))
        .output()
        .ok()?;
    Some((
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    ))
}

/// Whether `s` holds an SGR (colour or style) escape sequence: ESC [ digits/semicolons m.
fn has_colour(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == 0x1b && b[i + 1] == b'[' {
            let mut j = i + 2;
            while j < b.len() && (b[j].is_ascii_digit() || b[j] == b';') {
                j += 1;
            }
            if j < b.len() && b[j] == b'm' {
                return true;
            }
        }
        i += 1;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_color_leaves_no_colour_code_in_a_whole_migration() {
    let lab = Lab::start(LabConfig {
        user_windows: "60/600ms,600/6s".into(),
        app_windows: "120/600ms,1200/6s".into(),
        notion_per_second: 150,
        ..LabConfig::default()
    })
    .await;
    let user = lab.add_user(
        "default",
        generate(&NotebookSpec {
            total_pages: Some(6),
            pages_per_section: 0,
            images_per_page: 1,
            seed: 3,
            ..NotebookSpec::default()
        }),
    );
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    let mut env: Vec<(String, String)> = lab.env().into_iter().collect();
    env.push(("HOME".into(), state.dir.path().display().to_string()));
    env.push(("NOTEBRIDGE_DB".into(), state.db.display().to_string()));

    // the check can fail: in a terminal, without NO_COLOR, an error is coloured
    let Some((code, shown)) = in_a_terminal(
        &["status".into(), "--account".into(), "nobody".into()],
        &env,
    ) else {
        eprintln!("NO_COLOR in a terminal: skipped: `script` (util-linux) not installed");
        return;
    };
    assert_ne!(code, 0);
    assert!(has_colour(&shown), "a terminal gets colour: {shown:?}");

    env.push(("NO_COLOR".into(), "1".into()));
    let runs: [&[&str]; 4] = [
        &["-v", "migrate", "--to", &lab.target_page],
        &["status"],
        &["verify"],
        &["status", "--account", "nobody"],
    ];
    for args in runs {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let (code, shown) = in_a_terminal(&args, &env).unwrap();
        assert!(
            code == 0 || args.last().unwrap() == "nobody",
            "{args:?}: {shown}"
        );
        assert!(
            !has_colour(&shown),
            "{args:?} printed colour under NO_COLOR: {shown:?}"
        );
    }
}

#[test]
fn help_lists_a_commands_own_flags_first_real_paths_and_examples() {
    let state = State::new();
    for sub in [
        "login", "scan", "migrate", "status", "verify", "doctor", "report", "convert",
    ] {
        let out = bin(&state, &[sub, "--help"]);
        assert_eq!(out.code, Some(0), "{sub}");
        let help = &out.stdout;
        let own = help
            .find("Options:")
            .unwrap_or_else(|| panic!("{sub}: {help}"));
        let global = help
            .find("Global options:")
            .unwrap_or_else(|| panic!("{sub}: {help}"));
        let examples = help
            .find("Examples:")
            .unwrap_or_else(|| panic!("{sub}: {help}"));
        assert!(own < global && global < examples, "{sub}: {help}");
        assert!(
            help[examples..].matches("notebridge ").count() >= 1,
            "{sub}"
        );
    }
    // the default paths are this machine's (HOME here is the test's folder), not placeholders
    let help = bin(&state, &["--help"]).stdout;
    let unwrapped = help.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(!help.contains("<data dir>"), "{help}");
    let home = state.dir.path().display().to_string();
    assert!(unwrapped.contains(&home), "{home} in {unwrapped}");
}

/// Strips ANSI escape sequences (CSI ... letter) from `s`.
fn visible(s: &str) -> String {
    let mut out = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' && chars.peek() == Some(&'[') {
            chars.next();
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_lines_never_draw_through_the_progress_bar() {
    let lab = Lab::start(LabConfig::default()).await;
    let user = lab.add_user(
        "default",
        generate(&NotebookSpec {
            total_pages: Some(6),
            pages_per_section: 0,
            images_per_page: 1,
            seed: 8,
            ..NotebookSpec::default()
        }),
    );
    let state = State::new();
    lab.sign_in(&Db::open(&state.db).unwrap(), "default", &user);
    let mut env: Vec<(String, String)> = lab.env().into_iter().collect();
    env.push(("HOME".into(), state.dir.path().display().to_string()));
    env.push(("NOTEBRIDGE_DB".into(), state.db.display().to_string()));
    env.push(("NO_COLOR".into(), "1".into()));
    let args: Vec<String> = ["-vv", "migrate", "--to", &lab.target_page]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let Some((code, shown)) = in_a_terminal(&args, &env) else {
        eprintln!("log lines and the bar: skipped: `script` (util-linux) not installed");
        return;
    };
    assert_eq!(code, 0, "{shown}");
    assert!(shown.contains("migrate "), "a bar was drawn: {shown:?}");
    let lines = |pick: &dyn Fn(&str) -> bool| -> Vec<String> {
        shown
            .split('\n')
            .filter(|seg| pick(seg))
            .map(|seg| seg.trim_end_matches('\r'))
            .map(|seg| visible(seg.rsplit('\r').next().unwrap_or(seg)))
            .collect()
    };
    let logs = lines(&|seg: &str| seg.contains(" INFO ") || seg.contains(" DEBUG "));
    assert!(logs.len() >= 2, "log lines were written: {shown:?}");
    // -vv shows the requests themselves
    assert!(
        logs.iter()
            .any(|l| l.contains("GET ") && l.contains("/onenote/")),
        "{logs:?}"
    );
    for l in &logs {
        assert!(
            l.trim_start().starts_with("20"),
            "a log line drawn through the bar: {l:?}"
        );
    }
    // results on stdout share the terminal too: the plan is never written after the bar's text
    let plan = lines(&|seg: &str| seg.contains("plan: "));
    assert!(!plan.is_empty(), "{shown:?}");
    for l in &plan {
        assert!(
            l.starts_with("plan: "),
            "a line drawn through the bar: {l:?}"
        );
    }
}
