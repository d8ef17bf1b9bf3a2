//! Conversion throughput on generated OneNote pages against parsing the same HTML with scraper
//! alone, peak memory per input MB on one big page (60,000 paragraphs, about 6 MB) and on a page the
//! size of the page size limit (`MAX_PAGE_BYTES`, 64 MiB) and on a 50 MB web clipping (the issue's
//! 1 GB target), RSS beside the bytes allocated, and the time of 20,000 nested lists (the nesting
//! is capped before parsing). Target: conversion costs at most twice the parse. Run:
//! `cargo bench --bench convert`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use notebridge::convert::{convert_page, convert_page_owned, ConvertOptions, MAX_PAGE_BYTES};
use notebridge::notion::steps::{request_json, Steps};

/// Counts the bytes allocated and not yet freed (and their peak), beside the RSS figures: freed
/// memory the allocator keeps is in RSS, not here, so the two together say where memory goes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            let now = LIVE.fetch_add(l.size(), Ordering::Relaxed) + l.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        unsafe { System.dealloc(p, l) };
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, new) };
        if !q.is_null() {
            LIVE.fetch_sub(l.size(), Ordering::Relaxed);
            let now = LIVE.fetch_add(new, Ordering::Relaxed) + new;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static COUNTING: Counting = Counting;

/// A page shaped like OneNote output: outlines, styled paragraphs, lists, a table, tags, media.
fn page(seed: usize) -> String {
    let mut body = String::new();
    for o in 0..4 {
        body.push_str(&format!(
            "<div style=\"position:absolute;left:{}px;top:{}px;width:624px\">\n",
            48 + (o % 2) * 400,
            115 + (seed + o * 37) % 500
        ));
        body.push_str("<h2 style=\"font-size:14pt;color:#2e75b5;margin-top:0pt;margin-bottom:0pt\">Section heading</h2>\n");
        for p in 0..20 {
            body.push_str(&format!(
                "<p style=\"margin-top:0pt;margin-bottom:0pt\">Paragraph {p} of outline {o} with <span style=\"font-weight:bold\">bold</span>, \
                 <span style=\"font-style:italic;color:#c00000\">coloured italic</span>, <span style=\"background-color:yellow\">highlighted</span> \
                 and <a href=\"https://example.com/{seed}/{p}\">a link</a> in a sentence long enough to be typical.</p>\n"
            ));
        }
        body.push_str("<ul>\n");
        for i in 0..8 {
            body.push_str(&format!("<li><p style=\"margin-top:0pt;margin-bottom:0pt\">Item {i}</p><ol><li style=\"list-style-type:lower-alpha\">Sub item {i}</li></ol></li>\n"));
        }
        body.push_str("</ul>\n<p data-tag=\"to-do\" style=\"margin-top:0pt;margin-bottom:0pt\">A task</p>\n<p data-tag=\"important\">Important note</p>\n");
        body.push_str("<table style=\"border:1px solid;border-collapse:collapse\">\n");
        for r in 0..5 {
            body.push_str("<tr>");
            for c in 0..4 {
                body.push_str(&format!("<td style=\"border:1px solid\">r{r} c{c} <span style=\"font-weight:bold\">v</span></td>"));
            }
            body.push_str("</tr>\n");
        }
        body.push_str("</table>\n<img width=\"480\" height=\"320\" src=\"https://graph.microsoft.com/v1.0/users('me')/onenote/resources/0-a!1/$value\" data-fullres-src=\"https://graph.microsoft.com/v1.0/users('me')/onenote/resources/0-b!1/$value\" data-src-type=\"image/png\" />\n");
        body.push_str("<p style=\"font-family:Consolas;margin-top:0pt;margin-bottom:0pt\">let x = 1;</p>\n<p style=\"font-family:Consolas;margin-top:0pt;margin-bottom:0pt\">let y = 2;</p>\n</div>\n");
    }
    format!(
        "<html lang=\"en-US\">\n<head>\n<title>Generated page {seed}</title>\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset=utf-8\" />\n\
         <meta name=\"created\" content=\"2024-03-05T09:07:00.0000000\" />\n</head>\n\
         <body data-absolute-enabled=\"true\" style=\"font-family:Calibri;font-size:11pt\">\n{body}</body>\n</html>\n"
    )
}

/// Best of `rounds` timings of one pass over the corpus (the minimum is the least disturbed by
/// other processes on a shared machine).
fn best(rounds: usize, corpus: &[String], f: impl Fn(&str)) -> Duration {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for p in corpus {
                f(p);
            }
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

/// A page of `n` plain paragraphs (the 6 MB page at 60,000).
fn big_page(n: usize) -> String {
    let mut body = String::with_capacity(n * 100);
    body.push_str("<div style=\"position:absolute;left:48px;top:115px;width:624px\">\n");
    for i in 0..n {
        body.push_str(&format!(
            "<p style=\"margin-top:0pt;margin-bottom:0pt\">Paragraph {i:05} of a very long page, text enough to be typical.</p>\n"
        ));
    }
    body.push_str("</div>\n");
    format!("<html><head><title>Big</title></head><body>{body}</body></html>")
}

/// A pasted web clipping of about `bytes` bytes in one outline (the 50 MB page of ordinary
/// content: `notebridge_testkit::generator::clipping`).
fn clipping(bytes: usize) -> String {
    let (parts, _) = notebridge_testkit::generator::clipping(bytes);
    format!(
        "<html><head><title>Clipping</title></head><body>\
         <div style=\"position:absolute;left:48px;top:115px;width:624px\">\n{parts}</div>\n</body></html>"
    )
}

/// `VmHWM` or `VmRSS` of this process in bytes (Linux).
fn status_bytes(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Peak RSS growth while `f` runs and the growth still held once it returned (its result alive),
/// in bytes: the high-water mark is reset first (`/proc/self/clear_refs`, Linux 4.0+), so earlier
/// work does not count.
fn peak_growth<T>(f: impl FnOnce() -> T) -> (T, Option<(u64, u64)>) {
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let before = status_bytes("VmRSS:");
    let live = LIVE.load(Ordering::Relaxed);
    PEAK.store(live, Ordering::Relaxed);
    let out = f();
    let (peak_live, held_live) = (PEAK.load(Ordering::Relaxed), LIVE.load(Ordering::Relaxed));
    println!(
        "{:>13}  allocated: peak +{:.1} MB, its result {:.1} MB",
        "",
        (peak_live - live) as f64 / 1e6,
        held_live.saturating_sub(live) as f64 / 1e6
    );
    let (peak, after) = (status_bytes("VmHWM:"), status_bytes("VmRSS:"));
    let grown = match (reset, before, peak, after) {
        (true, Some(b), Some(p), Some(a)) => Some((p.saturating_sub(b), a.saturating_sub(b))),
        _ => None,
    };
    (out, grown)
}

/// One memory figure, measured in a fresh process (`--measure WHAT`): freed memory stays in the
/// allocator, so a second measurement in the same process would read low.
fn measure(what: &str) {
    let (what, html) = match what.strip_suffix(" 50 MB") {
        Some(w) => (w, clipping(50_000_000)),
        // About 113 bytes a paragraph: a page the size of the page size limit.
        None if what == "at the limit" => (what, big_page(MAX_PAGE_BYTES / 113)),
        None => (what, big_page(60_000)),
    };
    let mb = html.len() as f64 / 1_000_000.0;
    let grown = match what {
        "parse" => peak_growth(|| scraper::Html::parse_document(&html)).1,
        "convert" => peak_growth(|| convert_page(&html)).1,
        _ => {
            peak_growth(|| {
                // What migrate holds: the text freed once parsed, then the page's blocks while its
                // steps' requests are made one at a time (`notion::steps`), each dropped once sent.
                let page = convert_page_owned(html, &ConvertOptions::default());
                let mut biggest = 0;
                for step in Steps::new_page(&page.blocks) {
                    if let Some(items) = step.items() {
                        let json = request_json(&page.blocks, items, |b, _| b.to_json_shallow());
                        biggest = biggest.max(black_box(json).len());
                    }
                }
                (page, biggest)
            })
            .1
        }
    };
    match grown {
        Some((g, held)) => println!(
            "{what:>13}: {mb:.1} MB page, peak +{:.1} MB = {:.1} MB per input MB; its result holds {:.1} MB",
            g as f64 / 1e6,
            g as f64 / 1e6 / mb,
            held as f64 / 1e6
        ),
        None => println!("{what:>13}: peak memory not measurable here (no /proc/self/clear_refs)"),
    }
}

fn memory() {
    println!(
        "big page: 60,000 paragraphs, {:.2} MB",
        big_page(60_000).len() as f64 / 1e6
    );
    let Ok(me) = std::env::current_exe() else {
        return;
    };
    for what in [
        "parse",
        "convert",
        "convert+plan",
        "at the limit",
        "parse 50 MB",
        "convert 50 MB",
        "convert+plan 50 MB",
    ] {
        let _ = std::process::Command::new(&me)
            .args(["--measure", what])
            .status();
    }
    let nested = format!(
        "<html><body>{}{}</body></html>",
        "<ul><li>x".repeat(20_000),
        "</li></ul>".repeat(20_000)
    );
    // On a thread with a worker's stack, as `migrate` converts.
    let took = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let t = Instant::now();
            black_box(convert_page(&nested));
            t.elapsed()
        })
        .ok()
        .and_then(|h| h.join().ok());
    if let Some(t) = took {
        println!("20,000 nested lists: converted in {t:?}");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--measure") {
        measure(args.get(i + 1).map(String::as_str).unwrap_or("convert"));
        return;
    }
    memory();
    let corpus: Vec<String> = (0..200).map(page).collect();
    let bytes: usize = corpus.iter().map(String::len).sum();
    let mb = bytes as f64 / 1_000_000.0;
    // Warm-up.
    for p in corpus.iter().take(20) {
        black_box(convert_page(p));
    }
    let parse = best(7, &corpus, |p| {
        black_box(scraper::Html::parse_document(p));
    });
    let convert = best(7, &corpus, |p| {
        black_box(convert_page(p));
    });
    let parse_mbs = mb / parse.as_secs_f64();
    let convert_mbs = mb / convert.as_secs_f64();
    println!(
        "corpus: {} pages, {:.2} MB (avg {:.1} KB/page)",
        corpus.len(),
        mb,
        bytes as f64 / corpus.len() as f64 / 1000.0
    );
    println!("scraper parse only: {parse:?} = {parse_mbs:.1} MB/s");
    println!("convert_page:       {convert:?} = {convert_mbs:.1} MB/s");
    println!(
        "ratio convert/parse: {:.2}x (target <= 2x)",
        convert.as_secs_f64() / parse.as_secs_f64()
    );
}
