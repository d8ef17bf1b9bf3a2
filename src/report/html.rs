//! The report as one self-contained HTML file: inline CSS, two inline SVG charts, no script, no font,
//! no image and no link that would fetch anything. Readable on a phone (tables scroll sideways) and
//! printed (no background colours needed to read it).

use std::fmt::Write as _;

use super::{AccountSection, MigrationReport, NotionSource};
use crate::clock::UnixMillis;
use crate::store::sync::Change;

/// The pages chart draws at most this many points (evenly chosen, the last always kept).
pub const MAX_CHART_POINTS: usize = 500;

const CSS: &str = "
:root{color-scheme:light;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--ok:#1a7f37;--bad:#cf222e;--bar:#0969da}
*{box-sizing:border-box}
body{font:15px/1.5 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:var(--fg);margin:0 auto;padding:1rem;max-width:60rem}
h1{font-size:1.5rem;margin:.2rem 0}h2{font-size:1.25rem;margin-top:2rem;border-bottom:1px solid var(--line)}
h3{font-size:1.05rem;margin:1.2rem 0 .4rem}
.muted{color:var(--muted)}.ok{color:var(--ok)}.bad{color:var(--bad)}
.scroll{overflow-x:auto}
table{border-collapse:collapse;width:100%;font-size:.9rem}
th,td{text-align:left;padding:.25rem .5rem;border-bottom:1px solid var(--line);vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.totals{display:flex;flex-wrap:wrap;gap:.5rem 1.5rem;margin:.5rem 0}
.totals b{font-size:1.2rem}
figure{margin:1rem 0}figcaption{font-size:.85rem;color:var(--muted)}
svg{width:100%;height:auto;max-height:16rem;border:1px solid var(--line)}
svg text{font:11px system-ui,sans-serif;fill:var(--muted)}
@media print{body{max-width:none;font-size:11pt}h2{break-before:page}figure,table{break-inside:avoid}.scroll{overflow:visible}}
";

/// Renders the report.
pub fn render(report: &MigrationReport) -> String {
    let mut h = String::with_capacity(64 * 1024);
    h.push_str("<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    // No network: the page may fetch nothing, even if something in it tried.
    h.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
    );
    h.push_str("<title>notebridge migration report</title>\n<style>");
    h.push_str(CSS);
    h.push_str("</style>\n</head>\n<body>\n<h1>OneNote to Notion: migration report</h1>\n");
    let _ = writeln!(
        h,
        "<p class=\"muted\">Made by notebridge {} on {} (UTC) from its state database.</p>",
        env!("CARGO_PKG_VERSION"),
        esc(&when(report.generated_at))
    );
    for p in &report.notion_pace {
        let _ = writeln!(h, "<p class=\"notion-pace\">{}</p>", esc(&p.to_string()));
    }
    if report.accounts.is_empty() {
        h.push_str("<p>No account in this database.</p>\n");
    }
    for a in &report.accounts {
        account(&mut h, a);
    }
    h.push_str("</body>\n</html>\n");
    h
}

fn account(h: &mut String, a: &AccountSection) {
    let _ = writeln!(
        h,
        "<section class=\"account\" data-account=\"{}\">\n<h2>{} <span class=\"muted\">{}</span></h2>",
        esc(&a.account),
        esc(&a.title),
        esc(&a.user_principal_name)
    );
    let sum = |f: fn(&super::SectionRow) -> u64| a.sections.iter().map(f).sum::<u64>();
    let (onenote, notion, complete, failed) = (
        sum(|s| s.onenote),
        sum(|s| s.in_notion),
        sum(|s| s.complete),
        sum(|s| s.failed),
    );
    let verdict = if onenote > 0 && complete == onenote {
        "<span class=\"ok\">complete</span>"
    } else if failed > 0 {
        "<span class=\"bad\">incomplete: some pages failed</span>"
    } else {
        "<span class=\"bad\">incomplete</span>"
    };
    let _ = writeln!(
        h,
        "<div class=\"totals\"><span><b>{onenote}</b> pages in OneNote</span><span><b>{notion}</b> in \
         Notion</span><span><b>{complete}</b> complete</span><span><b>{failed}</b> failed</span>\
         <span><b>{}</b> files carried over</span><span><b>{}</b> placeholders</span></div>",
        a.files, a.placeholders
    );
    let source = match a.source {
        NotionSource::Verified(at) => format!(
            "Notion counts read back from Notion by <code>notebridge verify</code> on {}.",
            esc(&when(at))
        ),
        NotionSource::Recorded => "Notion counts as the migration recorded them; run \
                                   <code>notebridge verify</code> to read them back from Notion."
            .to_owned(),
    };
    let _ = writeln!(
        h,
        "<p>Verdict: {verdict}. <span class=\"muted\">{source}</span></p>"
    );
    let layout = match a.layout.as_str() {
        "database" => "one Notion database per section, a row per page with its dates and tags",
        "pages" => "nested pages, a page per section and per page",
        _ => "targets laid out differently",
    };
    let _ = writeln!(
        h,
        "<p class=\"layout\">Layout: <b>{}</b> ({layout}).</p>",
        esc(&a.layout)
    );

    pages_chart(h, &a.pages_done);
    requests_chart(h, a);

    h.push_str("<h3>Sections</h3>\n<div class=\"scroll\"><table class=\"sections\">\n");
    h.push_str(
        "<tr><th>Section</th><th class=\"n\">OneNote</th><th class=\"n\">Notion</th>\
         <th class=\"n\">Complete</th><th class=\"n\">Failed</th><th>Read from</th></tr>\n",
    );
    for s in &a.sections {
        let cls = if s.complete == s.onenote {
            ""
        } else {
            " class=\"bad\""
        };
        let _ = writeln!(
            h,
            "<tr{cls}><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td>{}</td></tr>",
            esc(&s.path.join(" / ")),
            s.onenote,
            s.in_notion,
            s.complete,
            s.failed,
            esc(s.way.as_deref().unwrap_or("–"))
        );
    }
    h.push_str("</table></div>\n");

    if !a.notes.is_empty() {
        // Said, not failed: nothing of them can be read, by this run or a later one.
        h.push_str("<h3>Notes</h3>\n<ul class=\"notes\">\n");
        for n in &a.notes {
            let _ = writeln!(h, "<li>{}</li>", esc(n));
        }
        h.push_str("</ul>\n");
    }

    h.push_str("<h3>Failed items</h3>\n");
    if a.failures.is_empty() {
        h.push_str("<p class=\"ok\">None.</p>\n");
    } else {
        h.push_str("<div class=\"scroll\"><table class=\"failures\">\n<tr><th>Item</th><th>Reason</th></tr>\n");
        for f in &a.failures {
            let _ = writeln!(
                h,
                "<tr><td>{} <span class=\"muted\">({})</span></td><td>{}</td></tr>",
                esc(&f.name),
                esc(&f.kind),
                esc(&f.reason)
            );
        }
        h.push_str("</table></div>\n");
    }

    if !a.recreated.is_empty() {
        h.push_str(
            "<h3>Created again, not moved</h3>\n<p>These pages went from where they were in \
             OneNote while pages of the same title and created time appeared, and no OneNote GUID \
             told which was which: each was handled as a deletion and a creation, so links to \
             the old Notion page do not lead to the new one.</p>\n\
             <div class=\"scroll\"><table class=\"recreated\">\n<tr><th>Page</th><th>Old \
             Notion page</th><th>Why</th></tr>\n",
        );
        for r in &a.recreated {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&r.title),
                esc(&r.notion_page_id),
                esc(&r.why),
            );
        }
        h.push_str("</table></div>\n");
    }

    if !a.conflicts.is_empty() {
        // Not failed, and nothing lost: the person's page stands, the OneNote version beside it.
        h.push_str(
            "<h3>Edited in Notion: left as they are</h3>\n<p>These pages were edited in Notion \
             since notebridge wrote them. Where OneNote changed a page's content, its OneNote \
             version is kept beside it; where OneNote renamed, moved or deleted it, the page \
             stays where and as it is.</p>\n\
             <div class=\"scroll\"><table class=\"conflicts\">\n<tr><th>Page</th><th>Notion page\
             </th><th>In OneNote</th><th>OneNote version kept as</th></tr>\n",
        );
        for c in &a.conflicts {
            let kept = match c.change {
                Change::Changed => format!(
                    "{} <span class=\"muted\">({})</span>",
                    esc(c.kept_title.as_deref().unwrap_or("not written yet")),
                    esc(c.kept_page_id.as_deref().unwrap_or("no page yet"))
                ),
                _ => "<span class=\"muted\">nothing to keep</span>".to_owned(),
            };
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{kept}</td></tr>",
                esc(&c.title),
                esc(&c.notion_page_id),
                c.change.as_str(),
            );
        }
        h.push_str("</table></div>\n");
    }

    h.push_str("<h3>What could only be approximated</h3>\n");
    if a.approximations.is_empty() {
        h.push_str("<p class=\"ok\">Nothing.</p>\n");
    } else {
        h.push_str(
            "<div class=\"scroll\"><table class=\"approximations\">\n<tr><th>In OneNote</th><th>In \
             Notion</th><th class=\"n\">Times</th><th class=\"n\">Pages</th></tr>\n",
        );
        for x in &a.approximations {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(&x.element),
                esc(&x.action),
                x.count,
                x.pages
            );
        }
        h.push_str("</table></div>\n");
    }
    h.push_str("</section>\n");
}

/// Chart geometry: a 600 x 200 view box with margins for the axis labels.
const W: f64 = 600.0;
const HGT: f64 = 200.0;
const LEFT: f64 = 44.0;
const BOTTOM: f64 = 22.0;
const TOP: f64 = 8.0;
const RIGHT: f64 = 8.0;

/// Pages done over time: the cumulative count at each completion (downsampled to at most
/// [`MAX_CHART_POINTS`]).
fn pages_chart(h: &mut String, done: &[UnixMillis]) {
    let points = chart_points(done);
    let _ = write!(
        h,
        "<figure><svg class=\"chart\" data-chart=\"pages\" data-points=\"{}\" viewBox=\"0 0 {W} {HGT}\" \
         role=\"img\" aria-label=\"Pages done over time\">",
        points.len()
    );
    axes(h);
    if let (Some(first), Some(last)) = (points.first(), points.last()) {
        let (t0, t1) = (first.0, last.0.max(first.0 + 1));
        let ymax = last.1.max(1) as f64;
        let coords: Vec<String> = points
            .iter()
            .map(|(t, n)| {
                let x = LEFT + (t - t0) as f64 / (t1 - t0) as f64 * (W - LEFT - RIGHT);
                let y = HGT - BOTTOM - *n as f64 / ymax * (HGT - BOTTOM - TOP);
                format!("{x:.1},{y:.1}")
            })
            .collect();
        let _ = write!(
            h,
            "<polyline fill=\"none\" stroke=\"#1a7f37\" stroke-width=\"2\" points=\"{}\"/>",
            coords.join(" ")
        );
        let _ = write!(
            h,
            "<text x=\"{}\" y=\"{}\">{}</text><text x=\"2\" y=\"{}\">{}</text>\
             <text x=\"{LEFT}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            2,
            TOP + 10.0,
            last.1,
            HGT - BOTTOM,
            0,
            HGT - 6.0,
            esc(&when(t0)),
            W - RIGHT,
            HGT - 6.0,
            esc(&when(last.0))
        );
    } else {
        let _ = write!(
            h,
            "<text x=\"{}\" y=\"{}\">no page finished yet</text>",
            LEFT + 10.0,
            HGT / 2.0
        );
    }
    let _ = writeln!(
        h,
        "</svg><figcaption>Pages done over time ({} finished).</figcaption></figure>",
        done.len()
    );
}

/// (time, pages done by then) for each completion, downsampled evenly with the last kept.
fn chart_points(done: &[UnixMillis]) -> Vec<(UnixMillis, u64)> {
    let n = done.len();
    if n <= MAX_CHART_POINTS {
        return done
            .iter()
            .enumerate()
            .map(|(i, t)| (*t, i as u64 + 1))
            .collect();
    }
    (0..MAX_CHART_POINTS)
        .map(|k| {
            let i = (k * (n - 1)) / (MAX_CHART_POINTS - 1);
            (done[i], i as u64 + 1)
        })
        .collect()
}

/// Graph requests per hour as bars, with the account's hourly budget as a dashed line.
fn requests_chart(h: &mut String, a: &AccountSection) {
    let hours = &a.requests_per_hour;
    let _ = write!(
        h,
        "<figure><svg class=\"chart\" data-chart=\"requests\" data-points=\"{}\" viewBox=\"0 0 {W} {HGT}\" \
         role=\"img\" aria-label=\"Graph requests per hour against the budget\">",
        hours.len()
    );
    axes(h);
    let peak = hours.iter().map(|c| c.requests).max().unwrap_or(0);
    let ymax = peak.max(a.hourly_budget.unwrap_or(0)).max(1) as f64;
    let plot_h = HGT - BOTTOM - TOP;
    if let (Some(first), Some(last)) = (hours.first(), hours.last()) {
        let span = ((last.hour_start - first.hour_start) / 3_600_000 + 1) as f64;
        let slot = (W - LEFT - RIGHT) / span;
        for c in hours {
            let i = ((c.hour_start - first.hour_start) / 3_600_000) as f64;
            let bh = c.requests as f64 / ymax * plot_h;
            let _ = write!(
                h,
                "<rect class=\"bar\" x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{bh:.1}\" \
                 fill=\"#0969da\"><title>{}: {} requests</title></rect>",
                LEFT + i * slot + slot * 0.1,
                HGT - BOTTOM - bh,
                (slot * 0.8).max(0.5),
                esc(&when(c.hour_start)),
                c.requests
            );
        }
        let _ = write!(
            h,
            "<text x=\"{LEFT}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            HGT - 6.0,
            esc(&when(first.hour_start)),
            W - RIGHT,
            HGT - 6.0,
            esc(&when(last.hour_start))
        );
    } else {
        let _ = write!(
            h,
            "<text x=\"{}\" y=\"{}\">no Graph request recorded</text>",
            LEFT + 10.0,
            HGT / 2.0
        );
    }
    if let Some(b) = a.hourly_budget {
        let y = HGT - BOTTOM - b as f64 / ymax * plot_h;
        let _ = write!(
            h,
            "<line class=\"budget\" x1=\"{LEFT}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#cf222e\" \
             stroke-dasharray=\"6 4\"/><text x=\"2\" y=\"{:.1}\">{b}/h</text>",
            W - RIGHT,
            y + 4.0
        );
    }
    let budget = a
        .hourly_budget
        .map(|b| format!(" The dashed line is the account's budget, {b} requests per hour."))
        .unwrap_or_default();
    let _ = writeln!(
        h,
        "</svg><figcaption>Graph requests per hour ({} requests in {} hour(s), peak {peak}).{budget}\
         </figcaption></figure>",
        hours.iter().map(|c| c.requests).sum::<u64>(),
        hours.len()
    );
}

fn axes(h: &mut String) {
    let _ = write!(
        h,
        "<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{}\" stroke=\"#d1d9e0\"/>\
         <line x1=\"{LEFT}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#d1d9e0\"/>",
        HGT - BOTTOM,
        HGT - BOTTOM,
        W - RIGHT,
        HGT - BOTTOM
    );
}

fn when(ms: UnixMillis) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%Y-%m-%d %H:%M").to_string())
        .unwrap_or_else(|| ms.to_string())
}

/// Escapes text for HTML content and attribute values.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{ApproximationRow, FailureRow, SectionRow};
    use crate::store::history::HourCount;

    fn sample(done: usize) -> MigrationReport {
        MigrationReport {
            notion_pace: Vec::new(),
            generated_at: 1_700_000_000_000,
            accounts: vec![AccountSection {
                account: "alice".into(),
                title: "alice".into(),
                user_principal_name: "alice@contoso.test".into(),
                layout: "database".into(),
                source: NotionSource::Recorded,
                sections: vec![SectionRow {
                    path: vec!["NB".into(), "<script>alert(1)</script>".into()],
                    onenote: 3,
                    in_notion: 2,
                    complete: 2,
                    failed: 1,
                    way: Some("OneNote API instead of its file: <b>404</b>".into()),
                }],
                conflicts: Vec::new(),
                recreated: Vec::new(),
                failures: vec![FailureRow {
                    kind: "page".into(),
                    name: "Q&A".into(),
                    reason: "Graph answered 403".into(),
                }],
                approximations: vec![ApproximationRow {
                    element: "<sup>".into(),
                    action: "text kept".into(),
                    count: 4,
                    pages: 2,
                }],
                files: 5,
                placeholders: 1,
                pages_done: (0..done as i64)
                    .map(|i| 1_700_000_000_000 + i * 1000)
                    .collect(),
                requests_per_hour: vec![
                    HourCount {
                        hour_start: 3_600_000 * 10,
                        requests: 380,
                    },
                    HourCount {
                        hour_start: 3_600_000 * 12,
                        requests: 120,
                    },
                ],
                hourly_budget: Some(400),
                notes: vec!["the notebook's table of contents names the folder G".into()],
            }],
        }
    }

    #[test]
    fn text_is_escaped_and_nothing_is_fetched() {
        let html = render(&sample(2));
        assert!(!html.contains("<script"), "page text is escaped");
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(html.contains("Q&amp;A"));
        assert!(
            html.contains("<td>OneNote API instead of its file: &lt;b&gt;404&lt;/b&gt;</td>"),
            "each section says which way it took, escaped"
        );
        assert!(html.contains("Layout: <b>database</b> (one Notion database per section"));
        for needle in ["src=", "href=", "url(", "@import", "http://", "https://"] {
            assert!(!html.contains(needle), "{needle} in the report");
        }
    }

    #[test]
    fn charts_have_a_point_per_page_and_a_bar_per_hour() {
        let html = render(&sample(7));
        assert!(html.contains("data-chart=\"pages\" data-points=\"7\""));
        assert!(html.contains("data-chart=\"requests\" data-points=\"2\""));
        assert_eq!(html.matches("<rect class=\"bar\"").count(), 2);
        assert!(html.contains("class=\"budget\""));
        let big = render(&sample(2000));
        assert!(big.contains(&format!("data-points=\"{MAX_CHART_POINTS}\"")));
    }

    #[test]
    fn downsampling_keeps_the_first_and_last_completion() {
        let done: Vec<i64> = (0..1234).collect();
        let p = chart_points(&done);
        assert_eq!(p.len(), MAX_CHART_POINTS);
        assert_eq!(p[0], (0, 1));
        assert_eq!(*p.last().unwrap(), (1233, 1234));
    }
}
