//! The Windows binary end to end under Wine, against the test servers running natively: what a
//! Windows user of OneNote's files does (`scan --from`, `migrate --from` a notebook folder and a
//! `.onepkg` at a path with a space and non-ASCII letters, again with nothing to write, a run
//! killed and resumed, a second process refused as busy, `verify`, `status`, `doctor`, `report`),
//! with the state database where Windows keeps it: `%LOCALAPPDATA%\notebridge` of the Wine prefix.
//!
//! Runs when `scripts/windows-check.sh` gives it the `.exe` (built with the test-only crash points)
//! and the runner (`NOTEBRIDGE_WINDOWS_EXE`, `NOTEBRIDGE_WINDOWS_RUNNER`, `WINEPREFIX`); skips,
//! saying so, otherwise.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use notebridge_testkit::lab::Lab;
use serde_json::Value;

use crate::bin_support::Output;
use crate::files_support::{copy_into, expected_tree, fast, notion_tree, notion_writes, sample};

/// The longest one command may take under Wine (its start-up is a second or two).
const LIMIT: Duration = Duration::from_secs(180);

struct Wine {
    exe: PathBuf,
    runner: PathBuf,
    prefix: PathBuf,
    env: Vec<(String, String)>,
}

impl Wine {
    /// `migrate --from PATH --to target`, with `extra` variables, to its end.
    async fn migrate(&self, from: &str, target: &str, extra: &[(&str, &str)]) -> Output {
        self.run(&["migrate", "--from", from, "--to", target], extra)
            .await
    }

    fn from_env(lab: &Lab) -> Option<Wine> {
        let var = |k: &str| std::env::var_os(k).map(PathBuf::from);
        let (Some(exe), Some(runner), Some(prefix)) = (
            var("NOTEBRIDGE_WINDOWS_EXE"),
            var("NOTEBRIDGE_WINDOWS_RUNNER"),
            var("WINEPREFIX"),
        ) else {
            eprintln!(
                "skipped: no Windows binary to run (scripts/windows-check.sh sets \
                 NOTEBRIDGE_WINDOWS_EXE, NOTEBRIDGE_WINDOWS_RUNNER and WINEPREFIX)"
            );
            return None;
        };
        // A files user's environment: the Notion token and (for the test server) its address and
        // pace; nothing of Microsoft's, no database path.
        let env = lab
            .env()
            .into_iter()
            .filter(|(k, _)| k.starts_with("NOTEBRIDGE_NOTION") || k == "NOTION_TOKEN")
            .collect();
        Some(Wine {
            exe,
            runner,
            prefix,
            env,
        })
    }

    fn command(&self, args: &[&str], extra: &[(&str, &str)]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.runner);
        cmd.arg(&self.exe)
            .args(args)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", std::env::var_os("HOME").unwrap_or_default())
            .env("WINEPREFIX", &self.prefix)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .envs(extra.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        cmd
    }

    async fn run(&self, args: &[&str], extra: &[(&str, &str)]) -> Output {
        let out = tokio::time::timeout(LIMIT, self.command(args, extra).output())
            .await
            .unwrap_or_else(|_| panic!("{args:?} did not end in time under Wine"))
            .expect("wine runs");
        Output::from(out)
    }

    /// The folder Windows' `%LOCALAPPDATA%\notebridge` is in the prefix (the user's name is the
    /// Unix user's).
    fn state_dirs(&self) -> Vec<PathBuf> {
        let users = self.prefix.join("drive_c/users");
        std::fs::read_dir(&users)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .map(|e| e.path().join("AppData/Local/notebridge"))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// `path` as a Windows program under Wine names it (Wine's `Z:` is the Unix root).
fn win(path: &Path) -> String {
    format!("Z:{}", path.display()).replace('/', "\\")
}

fn json(out: &Output) -> Value {
    serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", out.all()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_windows_binary_under_wine_migrates_resumes_verifies_and_keeps_its_state_locally() {
    let lab = Lab::start(fast()).await;
    let Some(wine) = Wine::from_env(&lab) else {
        return;
    };
    let (Some(folder), Some(pkg), Some(section)) = (
        sample("onenote.rs/samples"),
        sample("obsidian-importer/makecab-lzx-notebook.onepkg"),
        sample("apache-tika/testOneNote2016.one"),
    ) else {
        return;
    };
    // This test's own state: none left by an earlier run in the same prefix.
    for d in wine.state_dirs() {
        let _ = std::fs::remove_dir_all(d);
    }
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("Notizbücher Ärger");
    std::fs::create_dir_all(&home).unwrap();
    let nb = copy_into(&folder, &home);
    let pkg = copy_into(&pkg, &home);
    let target = lab.target_page.clone();

    // scan --from: the plan, offline.
    let out = wine
        .run(&["--json", "scan", "--from", &win(&nb)], &[])
        .await;
    assert_eq!(out.code, Some(0), "{}", out.all());
    let doc = json(&out);
    assert_eq!(doc["source"]["kind"], "files", "{doc}");

    // migrate --from the notebook folder: Notion holds exactly the scanned tree.
    let out = wine.migrate(&win(&nb), &target, &[]).await;
    assert_eq!(out.code, Some(0), "{}", out.all());
    let want = expected_tree(&doc);
    assert_eq!(notion_tree(&lab, &target), want);

    // The state is in %LOCALAPPDATA%\notebridge, not in the roaming folder.
    let dbs: Vec<PathBuf> = wine
        .state_dirs()
        .into_iter()
        .map(|d| d.join("notebridge.db"))
        .filter(|p| p.exists())
        .collect();
    assert_eq!(dbs.len(), 1, "one database under AppData/Local: {dbs:?}");
    let roaming = dbs[0]
        .ancestors()
        .nth(3)
        .unwrap()
        .join("Roaming/notebridge/notebridge.db");
    assert!(!roaming.exists());

    // Again, typed in other letter case as Windows compares paths: the same import, no write.
    let writes = notion_writes(&lab);
    let upper = win(&nb).to_uppercase();
    let out = wine.migrate(&upper, &target, &[]).await;
    assert_eq!(out.code, Some(0), "{}", out.all());
    assert_eq!(notion_writes(&lab), writes, "nothing written twice");

    // A .onepkg at the same non-ASCII path, its run stopped hard at its 6th crash point
    // (TerminateProcess, as `kill -9`), then resumed: every page once.
    let out = wine
        .migrate(&win(&pkg), &target, &[("NOTEBRIDGE_CRASH_AT", "6")])
        .await;
    assert!(
        out.code.is_some_and(|c| c != 0 && c != 75),
        "killed: {:?}\n{}",
        out.code,
        out.all()
    );
    let out = wine.migrate(&win(&pkg), &target, &[]).await;
    assert_eq!(out.code, Some(0), "{}", out.all());

    // A second process while one migrates: refused as busy, exit 5. The first is slowed to one
    // Notion request a second so it still holds the lock when the second asks.
    let lone = win(&copy_into(&section, &home));
    let before = notion_writes(&lab);
    let mut first = wine
        .command(
            &["migrate", "--from", &lone, "--to", &target],
            &[("NOTEBRIDGE_NOTION_RATE", "1/1s")],
        )
        .spawn()
        .unwrap();
    let deadline = tokio::time::Instant::now() + LIMIT;
    while notion_writes(&lab) == before {
        if let Ok(Some(_)) = first.try_wait() {
            let out = Output::from(first.wait_with_output().await.unwrap());
            panic!("the first run ended before writing: {out:?}");
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the first run wrote nothing"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let out = wine.migrate(&lone, &target, &[]).await;
    assert_eq!(out.code, Some(5), "{}", out.all());
    let status = tokio::time::timeout(LIMIT, first.wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(status.code(), Some(0));

    // Every import's tree once under the target: the folder's as scanned, and no title of an
    // import (the folder, the package, the lone section) twice at the top.
    let tree = notion_tree(&lab, &target);
    let top: Vec<&str> = tree
        .iter()
        .filter(|(depth, _)| *depth == 0)
        .map(|(_, t)| t.as_str())
        .collect();
    let mut unique = top.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), top.len(), "{tree:?}");
    assert!(top.len() >= 3, "{tree:?}");
    let start = tree
        .iter()
        .position(|(d, t)| *d == 0 && t == "samples")
        .unwrap();
    assert_eq!(tree[start..start + want.len()], want[..]);

    for args in [&["verify"][..], &["--json", "status"][..]] {
        let out = wine.run(args, &[]).await;
        assert_eq!(out.code, Some(0), "{args:?}: {}", out.all());
    }
    // doctor: every check passes but the file's ACL, which Wine does not keep (it reads back one
    // made from the Unix mode, with Everyone: scripts/windows-check.sh says more).
    let out = wine.run(&["--json", "doctor"], &[]).await;
    let checks = json(&out);
    let failed: Vec<&str> = checks["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] != true)
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(
        failed.is_empty() || failed == ["database_mode"],
        "{}",
        out.all()
    );
    let names: Vec<&str> = checks["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for name in [
        "database_mode",
        "tokens_sealed",
        "disk_space",
        "migration_lock",
    ] {
        assert!(names.contains(&name), "{name}: {checks}");
    }
    let report = home.join("Bericht.html");
    let out = wine.run(&["report", "--output", &win(&report)], &[]).await;
    assert_eq!(out.code, Some(0), "{}", out.all());
    assert!(std::fs::read_to_string(&report)
        .unwrap()
        .contains("samples"));
}
