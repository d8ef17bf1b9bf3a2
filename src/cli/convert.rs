//! `notebridge convert FILE [--json]`: one saved OneNote page to Notion block JSON, offline, or
//! for people, its blocks as a tree and what could not be carried over.

use std::path::PathBuf;

use std::io::Write as _;

use clap::Args;

use super::output::Printer;
use crate::cli::exit::{CliError, CliResult, Exit, Failure};
use crate::convert::{convert_page, MAX_PAGE_BYTES};

/// Arguments of `convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// A saved OneNote page HTML file (Graph `pages/{id}/content`).
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
}

/// A writer that drops the first byte written through it (the `{` of a document merged into ours).
struct SkipFirstByte<'a, W: std::io::Write> {
    inner: &'a mut W,
    skipped: bool,
}

impl<'a, W: std::io::Write> SkipFirstByte<'a, W> {
    fn new(inner: &'a mut W) -> Self {
        Self {
            inner,
            skipped: false,
        }
    }
}

impl<W: std::io::Write> std::io::Write for SkipFirstByte<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if !self.skipped && !buf.is_empty() {
            self.skipped = true;
            return Ok(1 + self.inner.write(&buf[1..])?);
        }
        self.inner.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Why `bytes` cannot be a saved page: empty, or binary (a NUL byte or mostly undecodable bytes in
/// its first 8 KiB: an image, a `.one` file, a zip).
fn not_page_html(bytes: &[u8]) -> Option<&'static str> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Some("empty");
    }
    let head = &bytes[..bytes.len().min(8192)];
    let undecodable = String::from_utf8_lossy(head)
        .chars()
        .filter(|c| *c == char::REPLACEMENT_CHARACTER || (c.is_control() && !c.is_whitespace()))
        .count();
    (head.contains(&0) || undecodable * 10 > head.len()).then_some("binary")
}

/// Columns the tree may use: the terminal's width, or a fixed one when stdout is not a terminal
/// (a pipe, a file, a test), so the output does not depend on where it is read.
fn tree_width() -> usize {
    const NOT_A_TERMINAL: usize = 100;
    let term = console::Term::stdout();
    if term.is_term() {
        usize::from(term.size().1).max(40)
    } else {
        NOT_A_TERMINAL
    }
}

/// Converts the file and prints the blocks (`--json`) or the block tree and a summary.
pub fn run(printer: &Printer, args: ConvertArgs) -> CliResult<Exit> {
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
    if let Some(why) = not_page_html(&bytes) {
        return Err(CliError::usage(format!(
            "{} is not OneNote page HTML ({why}); give a page saved from Graph's pages/{{id}}/content",
            args.file.display()
        ))
        .into());
    }
    // Graph serves UTF-8; a stray invalid byte must not stop an offline preview.
    let html = String::from_utf8_lossy(&bytes);
    let page = convert_page(&html);
    if printer.json {
        // Streamed block by block: a long page is never held as JSON whole.
        let mut o = std::io::BufWriter::new(std::io::stdout().lock());
        // `"version"` first, as in every `--json` document: the page's own opening brace is ours.
        let written = write!(o, "{{\"version\":\"{}\",", env!("CARGO_PKG_VERSION"))
            .and_then(|()| page.write_json(&mut SkipFirstByte::new(&mut o)))
            .and_then(|()| {
                use std::io::Write;
                writeln!(o)?;
                o.flush()
            });
        if let Err(e) = written {
            // A closed pipe (`| head`) is not the page's fault.
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(Failure::unexpected(e).context("writing the converted page"));
            }
        }
        return Ok(Exit::Done);
    }
    printer.out(format!("title: {}", page.title));
    if let Some(c) = &page.created {
        printer.out(format!("created: {c}"));
    }
    printer.out("");
    let tree = crate::convert::tree::render(&page.blocks, tree_width());
    if tree.is_empty() {
        printer.out("(no blocks)");
    }
    for line in tree {
        printer.out(line);
    }
    printer.out("");
    let counts = page.block_counts();
    // Table rows are blocks in Notion too: the total is the sum of the lines below it.
    let total: usize = counts.values().sum();
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
