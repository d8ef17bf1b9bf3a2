//! `notebridge completions SHELL` and `notebridge man` as a process: each script parses in its shell
//! (bash always on Unix; zsh and fish, and on Windows bash too, where installed, skipped saying so
//! otherwise), and the man page renders with every subcommand in it.

use std::process::{Command, Stdio};

use crate::bin_support::{self, Output};

fn notebridge(args: &[&str]) -> Output {
    let home = tempfile::tempdir().unwrap();
    bin_support::notebridge(home.path(), args).run_blocking()
}

/// Runs `shell` with `check_args` on the script; `None` when the shell is not installed.
fn parses_in(shell: &str, check_args: &[&str], script: &[u8]) -> Option<Result<(), String>> {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("completion");
    std::fs::write(&file, script).unwrap();
    let out = Command::new(shell)
        .args(check_args)
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .ok()?;
    Some(if out.status.success() {
        Ok(())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).into_owned())
    })
}

#[test]
fn each_completion_script_parses_in_its_shell() {
    let cases: [(&str, &str, &[&str]); 3] = [
        ("bash", "bash", &["-n"]),
        ("zsh", "zsh", &["-n"]),
        ("fish", "fish", &["--no-execute"]),
    ];
    for (name, shell, check) in cases {
        let out = notebridge(&["completions", name]);
        assert_eq!(out.code, Some(0), "{name}: {out:?}");
        let script = out.stdout.into_bytes();
        assert!(
            String::from_utf8_lossy(&script).contains("migrate"),
            "{name}: the script knows the subcommands"
        );
        match parses_in(shell, check, &script) {
            Some(r) => r.unwrap_or_else(|e| panic!("{name} script does not parse: {e}")),
            // Every Unix has bash; Windows has none of the three unless one is installed (Git
            // Bash, WSL), and its own shell's script is checked below.
            None if name == "bash" && cfg!(unix) => panic!("bash is needed for this test"),
            None => {
                eprintln!("completions for {name}: skipped the parse check: {shell} not installed")
            }
        }
    }
    let ps = notebridge(&["completions", "powershell"]);
    assert_eq!(ps.code, Some(0), "{ps:?}");
    assert!(ps.stdout.contains("Register-ArgumentCompleter"));
}

#[test]
fn an_unknown_shell_is_a_usage_error_naming_the_choices() {
    let out = notebridge(&["completions", "tcsh"]);
    assert_eq!(out.code, Some(2));
    let err = &out.stderr;
    assert!(err.contains("tcsh") && err.contains("bash"), "{err}");
}

#[test]
fn the_man_page_renders_with_every_subcommand() {
    let out = notebridge(&["man"]);
    assert_eq!(out.code, Some(0), "{out:?}");
    let page = out.stdout;
    assert!(page.contains(".TH notebridge 1"));
    for sub in [
        "login",
        "scan",
        "migrate",
        "status",
        "verify",
        "convert",
        "completions",
    ] {
        assert!(
            page.contains(&format!(".TH notebridge-{sub} 1")),
            "no section for {sub}"
        );
    }
    let Ok(mut groff) = Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    else {
        eprintln!("man page: skipped the groff check: groff not installed");
        return;
    };
    use std::io::Write;
    groff
        .stdin
        .take()
        .unwrap()
        .write_all(page.as_bytes())
        .unwrap();
    let res = groff.wait_with_output().unwrap();
    assert!(res.status.success());
    let warnings = String::from_utf8_lossy(&res.stderr);
    assert!(warnings.trim().is_empty(), "groff warnings: {warnings}");
}
