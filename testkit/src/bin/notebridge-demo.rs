//! The offline demo: starts the built-in sign-in, Graph and Notion test servers on loopback, generates
//! a OneNote notebook, adds one made of the repository's real OneNote sample files (kept in the
//! user's OneDrive, so `migrate` reads it from its section files), and runs the real notebridge
//! commands against them (`login`, `scan`, `migrate`, `verify`), then prints the Notion tree the
//! migration produced. No credentials, no network.
//!
//! `cargo run --release -p notebridge-testkit --bin notebridge-demo [-- --pages N] [--layout database]`

use std::process::ExitCode;
use std::time::Duration;

use notebridge_testkit::generator::{generate, NotebookSpec};
use notebridge_testkit::lab::{onenote_fixture, Lab, LabConfig};
use notebridge_testkit::notion::NotionServer;

const USAGE: &str = "\
Usage: notebridge-demo [--pages N] [--layout pages|database]

Starts the built-in sign-in, Graph and Notion test servers on 127.0.0.1, generates a OneNote notebook
of N pages (default 40) and runs the real notebridge commands against them: login, scan, migrate,
migrate --resume and verify; then prints the Notion tree it produced. No credentials, no network.

Options:
  --pages N        pages in the generated notebook (1 to 5000)
  --layout LAYOUT  pages (default: nested pages) or database (each section a Notion database
                   whose rows are its pages, with OneNote's dates, tags and order as properties)
  -h, --help       this text";

/// What the demo is asked to do.
#[derive(Debug, PartialEq, Eq)]
struct Args {
    /// Pages in the generated notebook.
    pages: usize,
    /// `migrate --layout`.
    layout: &'static str,
}

/// The demo's arguments: `--pages N`, `--layout L`, or help (`None`).
fn parse_args(args: &[String]) -> Result<Option<Args>, String> {
    let mut pages = 40;
    let mut layout = "pages";
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--layout" => {
                let v = it.next().ok_or("--layout needs pages or database")?;
                layout = match v.as_str() {
                    "pages" => "pages",
                    "database" => "database",
                    _ => return Err(format!("--layout {v:?}: give pages or database")),
                };
            }
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
    Ok(Some(Args { pages, layout }))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Args { pages, layout } = match parse_args(&args) {
        Ok(Some(a)) => a,
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
                "--layout".into(),
                layout.into(),
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
    print_tree(&lab.notion, &target);
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

/// Prints the visible tree under page `root`: pages with their block counts, databases with their
/// rows and each row's OneNote properties. The tree is the demo's own, a few levels deep.
fn print_tree(notion: &NotionServer, root: &str) {
    for (line, depth) in children(notion, root, 0) {
        println!("{}{line}", "  ".repeat(depth));
    }

    /// The lines under page `id` at `depth` (children first in order, each followed by its own).
    fn children(notion: &NotionServer, id: &str, depth: usize) -> Vec<(String, usize)> {
        let Some(node) = notion.dump(id) else {
            return Vec::new();
        };
        let mut pages = notion.pages_under(id).into_iter();
        let mut databases = notion.databases_under(id).into_iter();
        let mut out = Vec::new();
        for c in &node.children {
            match c.kind.as_str() {
                "page" => {
                    let Some((pid, title)) = pages.next() else {
                        continue;
                    };
                    out.push((page_line(notion, &pid, &title, None), depth));
                    out.extend(children(notion, &pid, depth + 1));
                }
                "database" => {
                    let Some((did, _, title)) = databases.next() else {
                        continue;
                    };
                    let rows = notion.rows(&did);
                    out.push((format!("{title}  (database, {} rows)", rows.len()), depth));
                    for r in rows {
                        out.push((
                            page_line(notion, &r.id, &r.title, Some(&r.properties)),
                            depth + 1,
                        ));
                        out.extend(children(notion, &r.id, depth + 2));
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn page_line(
        notion: &NotionServer,
        id: &str,
        title: &str,
        properties: Option<&std::collections::BTreeMap<String, String>>,
    ) -> String {
        let blocks = notion.dump(id).map_or(0, |d| {
            d.children.iter().filter(|c| c.kind != "page").count()
        });
        let title = if title.is_empty() { "Untitled" } else { title };
        let Some(p) = properties else {
            return format!("{title}  ({blocks} blocks)");
        };
        let shown: Vec<String> = ["Created", "Modified", "Tags", "Author", "Order", "Level"]
            .iter()
            .filter_map(|k| {
                let v = p.get(*k)?;
                (!v.is_empty()).then(|| format!("{k}: {v}"))
            })
            .collect();
        format!("{title}  ({blocks} blocks; {})", shown.join(", "))
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
        let a = |pages, layout| Ok(Some(super::Args { pages, layout }));
        assert_eq!(parse_args(&args(&[])), a(40, "pages"));
        assert_eq!(parse_args(&args(&["--pages", "6"])), a(6, "pages"));
        assert_eq!(
            parse_args(&args(&["--layout", "database", "--pages", "3"])),
            a(3, "database")
        );
        assert!(parse_args(&args(&["--layout", "table"])).is_err());
        assert!(parse_args(&args(&["--layout"])).is_err());
        assert_eq!(parse_args(&args(&["--help"])), Ok(None));
        assert_eq!(parse_args(&args(&["--pages", "6", "-h"])), Ok(None));
        assert!(parse_args(&args(&["--pages"])).is_err());
        assert!(parse_args(&args(&["--pages", "0"])).is_err());
        assert!(parse_args(&args(&["--page", "3"]))
            .unwrap_err()
            .contains("--page"));
    }
}
