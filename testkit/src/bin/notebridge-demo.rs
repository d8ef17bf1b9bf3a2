//! The offline demo: starts the built-in sign-in, Graph and Notion test servers on loopback, generates
//! a OneNote notebook, adds one made of the repository's real OneNote sample files (kept in the
//! user's OneDrive, so `migrate` reads it from its section files), and runs the real notebridge
//! commands against them (`login`, `scan`, `migrate`, `verify`), then prints the Notion tree the
//! migration produced. No credentials, no network.
//!
//! `cargo run --release -p notebridge-testkit --bin notebridge-demo [-- --pages N]`

use std::process::ExitCode;
use std::time::Duration;

use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{onenote_fixture, Lab, LabConfig};
use notebridge_testkit::notion::DumpNode;

const USAGE: &str = "\
Usage: notebridge-demo [--pages N]

Starts the built-in sign-in, Graph and Notion test servers on 127.0.0.1, generates a OneNote notebook
of N pages (default 40) and runs the real notebridge commands against them: login, scan, migrate,
migrate --resume and verify; then prints the Notion tree it produced. No credentials, no network.

Options:
  --pages N   pages in the generated notebook (1 to 5000)
  -h, --help  this text";

/// The demo's arguments: `--pages N`, or help.
fn parse_args(args: &[String]) -> Result<Option<usize>, String> {
    let mut pages = 40;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--pages" => {
                let v = it.next().ok_or("--pages needs a number, e.g. --pages 40")?;
                pages = v
                    .parse()
                    .ok()
                    .filter(|n| (1..=5000).contains(n))
                    .ok_or_else(|| format!("--pages {v:?}: give a number from 1 to 5000"))?;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    Ok(Some(pages))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let pages = match parse_args(&args) {
        Ok(Some(p)) => p,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("error: {e}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let dir = match tempfile_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!("demo: cannot create a working folder: {e}");
            return ExitCode::FAILURE;
        }
    };
    let db = dir.join("notebridge.db");

    // The servers run on their own runtime thread; the CLI runs in this thread exactly as the binary
    // would (it builds its own runtime per command).
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let spec = NotebookSpec {
        notebooks: 1,
        section_groups_depth: 1,
        section_groups_per_container: 1,
        sections_per_container: 2,
        pages_per_section: 0,
        total_pages: Some(pages),
        subpage_ratio: 0.25,
        images_per_page: 1,
        attachments_per_page: 1,
        resource_bytes: 24 * 1024,
        seed: 2026,
        ..NotebookSpec::default()
    };
    let lab = rt.block_on(Lab::start(LabConfig::default()));
    let user = lab.add_user("demo", generate(&spec));
    // A notebook synced to OneDrive as a folder of real `.one` section files: with `Files.Read`
    // (among the default scopes) `migrate --via auto` reads it a file per section through the drive
    // API; the generated notebook lives in no drive and goes page by page through the OneNote API.
    let samples = onenote_fixture("onenote.rs/samples/New Section Group");
    if samples.is_dir() {
        lab.graph.add_files_notebook(&user.id, "Samples", &samples);
    }
    for (k, v) in lab.env() {
        // SAFETY: single-threaded at this point as far as environment access goes: the server
        // threads never read the environment.
        std::env::set_var(k, v);
    }
    let db_arg = db.display().to_string();
    let target = lab.target_page.clone();
    println!(
        "notebridge offline demo: {pages} OneNote pages with images, attachments, subpages and a"
    );
    println!("section group, served by the built-in Graph test server (user windows {}, app windows {}),", lab.config.user_windows, lab.config.app_windows);
    println!("migrated into the built-in Notion test server (3 requests/s, as the real API), and a notebook of");
    println!("real OneNote sample files kept in the user's OneDrive, read a file per section. State: {db_arg}\n");

    let steps: Vec<(&str, Vec<String>)> = vec![
        (
            "sign in (device code; the test server approves it)",
            vec!["login".into(), "--account".into(), "demo".into()],
        ),
        (
            "scan (foreground lane)",
            vec!["scan".into(), "--account".into(), "demo".into()],
        ),
        (
            "migrate (background lane)",
            vec![
                "migrate".into(),
                "--account".into(),
                "demo".into(),
                "--to".into(),
                target.clone(),
            ],
        ),
        (
            "migrate again: nothing left to do",
            vec!["migrate".into(), "--resume".into()],
        ),
        (
            "verify: re-read Notion, prove every page is there once and complete",
            vec!["verify".into()],
        ),
    ];
    for (what, args) in steps {
        println!("\n$ notebridge --db {db_arg} {}   # {what}", args.join(" "));
        let mut argv = vec!["notebridge".to_owned(), "--db".into(), db_arg.clone()];
        argv.extend(args);
        let code = notebridge::cli::main_from(argv);
        if code != ExitCode::SUCCESS {
            eprintln!("demo: step failed: {what}");
            return code;
        }
    }

    println!("\nThe Notion tree under the target page, as the Notion test server holds it:\n");
    match lab.notion.dump(&target) {
        Some(tree) => print_tree(&tree, "", 0),
        None => println!("(empty)"),
    }
    let c = lab.graph.counters();
    println!(
        "\nGraph test server: {} requests, {} answered 429, {} arrived over a limit; Notion test server: {} rate-limited.",
        c.total,
        c.throttled,
        c.arrived_over_limit,
        lab.notion.counters().rate_limited
    );
    let d = lab.graph.drive_counters();
    println!(
        "Drive API (the samples notebook's section files): {} requests, {} downloads, {} bytes.",
        d.api_requests, d.downloads, d.bytes_sent
    );
    println!(
        "The demo's state database is {} (inspect it with `notebridge --db {} status`, or delete the \
         folder).",
        db.display(),
        db.display()
    );
    std::thread::sleep(Duration::from_millis(50));
    drop(lab);
    ExitCode::SUCCESS
}

fn print_tree(node: &DumpNode, indent: &str, depth: usize) {
    let pages: Vec<&DumpNode> = node.children.iter().filter(|c| c.kind == "page").collect();
    let blocks = node.children.len() - pages.len();
    if depth > 0 {
        println!(
            "{indent}{}  ({blocks} blocks)",
            node.title.as_deref().unwrap_or("Untitled")
        );
    }
    for p in pages {
        print_tree(p, &format!("{indent}  "), depth + 1);
    }
}

fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let d = std::env::temp_dir().join(format!("notebridge-demo-{}", std::process::id()));
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::parse_args;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn help_pages_and_mistakes() {
        assert_eq!(parse_args(&args(&[])), Ok(Some(40)));
        assert_eq!(parse_args(&args(&["--pages", "6"])), Ok(Some(6)));
        assert_eq!(parse_args(&args(&["--help"])), Ok(None));
        assert_eq!(parse_args(&args(&["--pages", "6", "-h"])), Ok(None));
        assert!(parse_args(&args(&["--pages"])).is_err());
        assert!(parse_args(&args(&["--pages", "0"])).is_err());
        assert!(parse_args(&args(&["--page", "3"]))
            .unwrap_err()
            .contains("--page"));
    }
}
