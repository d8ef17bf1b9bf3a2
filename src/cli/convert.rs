//! `notebridge convert FILE [--json]`: one saved OneNote page to Notion block JSON, offline.

use std::path::PathBuf;

use clap::Args;

use super::output::Printer;
use crate::cli::exit::{CliError, Exit};
use crate::convert::{convert_page, MAX_PAGE_BYTES};

/// Arguments of `convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// A saved OneNote page HTML file (Graph `pages/{id}/content`).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// Converts the file and prints the blocks (`--json`) or a summary.
pub fn run(printer: &Printer, args: ConvertArgs) -> anyhow::Result<Exit> {
    let unreadable = |e: std::io::Error| {
        CliError::usage(format!("cannot read FILE {}: {e}", args.file.display()))
    };
    // Refused before reading: the size alone says it.
    let len = std::fs::metadata(&args.file).map_err(unreadable)?.len();
    if len > MAX_PAGE_BYTES as u64 {
        return Err(CliError::usage(format!(
            "FILE {} is {len} bytes, over the limit of {MAX_PAGE_BYTES} bytes for one page \
             (migrate refuses such a page the same way)",
            args.file.display(),
        ))
        .into());
    }
    let bytes = std::fs::read(&args.file).map_err(unreadable)?;
    // Graph serves UTF-8; a stray invalid byte must not stop an offline preview.
    let html = String::from_utf8_lossy(&bytes);
    let page = convert_page(&html);
    if printer.json {
        // Streamed block by block: a long page is never held as JSON whole.
        let mut o = std::io::BufWriter::new(std::io::stdout().lock());
        let written = page.write_json(&mut o).and_then(|()| {
            use std::io::Write;
            writeln!(o)?;
            o.flush()
        });
        if let Err(e) = written {
            // A closed pipe (`| head`) is not the page's fault.
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(anyhow::Error::new(e).context("writing the converted page"));
            }
        }
        return Ok(Exit::Done);
    }
    printer.out(format!("title: {}", page.title));
    if let Some(c) = &page.created {
        printer.out(format!("created: {c}"));
    }
    let counts = page.block_counts();
    let total: usize = counts
        .iter()
        .filter(|(k, _)| **k != "table_row")
        .map(|(_, v)| v)
        .sum();
    printer.out(format!("blocks: {total}"));
    for (ty, n) in &counts {
        printer.out(format!("  {ty}: {n}"));
    }
    let resources = page.resources().len();
    if resources > 0 {
        printer.out(format!("files to upload: {resources}"));
    }
    if page.report.is_empty() {
        printer.out("approximations: none");
    } else {
        printer.out("approximations:");
        for a in &page.report.items {
            printer.out(format!("  {} ×{}: {}", a.element, a.count, a.action));
        }
    }
    Ok(Exit::Done)
}
