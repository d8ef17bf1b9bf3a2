//! Generates OneNote content for the Graph test server: notebooks, section groups, sections, pages
//! (with subpage levels) and resources, deterministic from a seed, from a tiny notebook up to the
//! 1,300-page / 40-section incident size.
//!
//! Page bodies are rendered on request in the shape OneNote's GET content returns (spec §5 and the
//! public samples): `head` with `title` and `meta created`, `body data-absolute-enabled`, absolutely
//! positioned outline divs (not always in visual order), styled p/h1-h3/spans, lists with
//! `list-style-type` on each `li`, `data-tag` to-dos, tables, `img` with `src` + `data-fullres-src`, and
//! `object` attachments. Resource bytes are computed from the seed at any offset, so a 40 MB resource is
//! streamed without ever being held in memory.

use std::collections::HashMap;
use std::fmt::Write as _;

use bytes::Bytes;
use chrono::{DateTime, TimeZone, Utc};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::graph::model::{
    Notebook, Page, Resource, ResourceKind, Section, SectionGroup, UserNotes,
};

/// What to generate for one user.
#[derive(Clone, Debug, PartialEq)]
pub struct NotebookSpec {
    /// Number of notebooks.
    pub notebooks: usize,
    /// How deep section groups nest (0 = none).
    pub section_groups_depth: usize,
    /// Section groups in each container (notebook or group) above the maximum depth.
    pub section_groups_per_container: usize,
    /// Sections in each container (notebook and every section group).
    pub sections_per_container: usize,
    /// Pages in each section (ignored when `total_pages` is set).
    pub pages_per_section: usize,
    /// Exact page count spread evenly over all sections (the incident's 1,300).
    pub total_pages: Option<usize>,
    /// Share of pages (after the first of a section) that are subpages (level 1 or 2).
    pub subpage_ratio: f64,
    /// `img` elements per page.
    pub images_per_page: usize,
    /// `object` attachments per page.
    pub attachments_per_page: usize,
    /// Size of ordinary resources in bytes.
    pub resource_bytes: u64,
    /// When set, the first resource generated gets this size (e.g. 40 MB) to test streaming.
    pub large_resource_bytes: Option<u64>,
    /// Seed of everything.
    pub seed: u64,
    /// Every page also holds an e-mail (`mailto:`) link, for tests of refused link schemes.
    pub mail_links: bool,
    /// Links to other pages carry the target's title as their text (what OneNote's "Copy Link to
    /// Page" pastes), instead of "the linked page".
    pub title_links: bool,
    /// Every page also holds a fourth-level heading (OneNote's "Heading 4" style, `<h4>`).
    pub fourth_headings: bool,
    /// Every page also holds this many more one-line paragraphs (past 100 blocks a page's body
    /// takes appends after its creation).
    pub extra_paragraphs: usize,
}

impl Default for NotebookSpec {
    fn default() -> Self {
        Self {
            notebooks: 1,
            section_groups_depth: 0,
            section_groups_per_container: 1,
            sections_per_container: 2,
            pages_per_section: 3,
            total_pages: None,
            subpage_ratio: 0.3,
            images_per_page: 1,
            attachments_per_page: 0,
            resource_bytes: 2048,
            large_resource_bytes: None,
            seed: 1,
            mail_links: false,
            title_links: false,
            fourth_headings: false,
            extra_paragraphs: 0,
        }
    }
}

impl NotebookSpec {
    /// One notebook, one section, two pages, no resources.
    pub fn tiny(seed: u64) -> Self {
        Self {
            sections_per_container: 1,
            pages_per_section: 2,
            images_per_page: 0,
            seed,
            ..Self::default()
        }
    }

    /// The incident's size: one notebook, 40 sections (10 top-level, 3 section groups of 10 each),
    /// 1,300 pages.
    pub fn incident(seed: u64) -> Self {
        Self {
            notebooks: 1,
            section_groups_depth: 1,
            section_groups_per_container: 3,
            sections_per_container: 10,
            pages_per_section: 0,
            total_pages: Some(1300),
            subpage_ratio: 0.25,
            images_per_page: 1,
            attachments_per_page: 0,
            resource_bytes: 1024,
            large_resource_bytes: None,
            seed,
            mail_links: false,
            title_links: false,
            fourth_headings: false,
            extra_paragraphs: 0,
        }
    }
}

/// Generates the content of one user.
pub fn generate(spec: &NotebookSpec) -> UserNotes {
    let mut g = Gen {
        rng: StdRng::seed_from_u64(spec.seed),
        spec,
        notes: UserNotes::default(),
        large_left: spec.large_resource_bytes,
        section_counter: 0,
    };
    for n in 0..spec.notebooks {
        let created = g.date();
        let nb = Notebook {
            id: g.container_id(),
            display_name: format!("Notebook {}", n + 1),
            created,
            modified: created + chrono::Duration::days(30),
            is_default: n == 0,
        };
        let nb_id = nb.id.clone();
        g.notes.notebooks.push(nb);
        g.fill_container(&nb_id, None, 0, "");
    }
    if let Some(total) = spec.total_pages {
        let sections: Vec<String> = g.notes.sections.iter().map(|s| s.id.clone()).collect();
        let count = sections.len().max(1);
        for (i, s) in sections.iter().enumerate() {
            let n = total / count + usize::from(i < total % count);
            g.fill_section(s, n);
        }
    } else {
        let sections: Vec<String> = g.notes.sections.iter().map(|s| s.id.clone()).collect();
        for s in sections {
            g.fill_section(&s, spec.pages_per_section);
        }
    }
    // Every sixth page links to the page five further on (wrapping to the start), so there are links
    // forward, to pages not migrated yet when the linking page is written, and back.
    let ids: Vec<String> = g.notes.pages.iter().map(|p| p.id.clone()).collect();
    if ids.len() > 1 {
        for (i, page) in g.notes.pages.iter_mut().enumerate() {
            if i % 6 == 2 {
                page.links.push(ids[(i + 5) % ids.len()].clone());
            }
        }
    }
    if spec.title_links {
        let titles: HashMap<String, String> = g
            .notes
            .pages
            .iter()
            .map(|p| (p.id.clone(), p.title.clone()))
            .collect();
        for page in &mut g.notes.pages {
            page.link_texts = page.links.iter().map(|l| titles[l].clone()).collect();
        }
    }
    g.notes
}

/// New pages for an existing section (re-scan tests add pages), deterministic from `seed`.
pub fn extra_pages(
    notes: &UserNotes,
    section_id: &str,
    count: usize,
    seed: u64,
) -> Vec<(Page, Vec<Resource>)> {
    let spec = NotebookSpec {
        seed,
        ..NotebookSpec::default()
    };
    let mut g = Gen {
        rng: StdRng::seed_from_u64(seed),
        spec: &spec,
        notes: UserNotes::default(),
        large_left: None,
        section_counter: 0,
    };
    let first_order = notes
        .pages
        .iter()
        .filter(|p| p.section_id == section_id)
        .map(|p| p.order + 1)
        .max()
        .unwrap_or(0);
    (0..count)
        .map(|i| {
            let (page, res) = g.page(section_id, first_order + i as u32, 0);
            (page, res)
        })
        .collect()
}

struct Gen<'a> {
    rng: StdRng,
    spec: &'a NotebookSpec,
    notes: UserNotes,
    large_left: Option<u64>,
    section_counter: usize,
}

const TOPICS: &[&str] = &[
    "Weekly sync",
    "Project kickoff",
    "Reading notes",
    "Budget review",
    "Recipes",
    "Travel plans",
    "Design ideas",
    "Interview notes",
    "Retrospective",
    "Research log",
    "Meeting minutes",
    "Lecture",
];

const WORDS: &[&str] = &[
    "alpha",
    "river",
    "budget",
    "quarterly",
    "draft",
    "review",
    "migrate",
    "notebook",
    "customer",
    "timeline",
    "summary",
    "risk",
    "owner",
    "follow",
    "up",
    "deadline",
    "metrics",
    "design",
    "plan",
    "café",
    "naïve",
    "Zürich",
    "東京",
    "data",
    "sync",
    "release",
    "notes",
    "question",
    "answer",
];

impl Gen<'_> {
    fn hex(&mut self, n: usize) -> String {
        (0..n)
            .map(|_| char::from_digit(self.rng.random_range(0..16), 16).expect("digit"))
            .collect()
    }

    /// Ids in the real service's shape: `1-{32 hex}!{n}-{16 HEX}!{k}`.
    fn container_id(&mut self) -> String {
        let a = self.hex(32);
        let b = self.hex(16).to_uppercase();
        let k = self.rng.random_range(100..99_999);
        format!("1-{a}!1-{b}!{k}")
    }

    fn page_id(&mut self) -> String {
        let a = self.hex(32);
        let b = self.hex(16).to_uppercase();
        let k = self.rng.random_range(100..99_999);
        format!("1-{a}!{}-{b}!{k}", self.rng.random_range(1..60))
    }

    fn resource_id(&mut self) -> String {
        let a = self.hex(32);
        let b = self.hex(16).to_uppercase();
        let k = self.rng.random_range(100..99_999);
        format!("0-{a}!1-{b}!{k}")
    }

    fn date(&mut self) -> DateTime<Utc> {
        let base = Utc
            .with_ymd_and_hms(2022, 1, 3, 8, 0, 0)
            .single()
            .expect("valid date");
        base + chrono::Duration::seconds(self.rng.random_range(0..(2 * 365 * 86_400)))
    }

    fn fill_container(&mut self, nb: &str, group: Option<&str>, depth: usize, prefix: &str) {
        for _ in 0..self.spec.sections_per_container {
            self.section_counter += 1;
            let created = self.date();
            let s = Section {
                id: self.container_id(),
                display_name: format!("{prefix}Section {:02}", self.section_counter),
                created,
                modified: created + chrono::Duration::days(10),
                notebook_id: nb.to_owned(),
                parent_group: group.map(str::to_owned),
                is_default: self.section_counter == 1,
            };
            self.notes.sections.push(s);
        }
        if depth < self.spec.section_groups_depth {
            for i in 0..self.spec.section_groups_per_container {
                let created = self.date();
                let name = format!("{prefix}Group {}", i + 1);
                let sg = SectionGroup {
                    id: self.container_id(),
                    display_name: name.clone(),
                    created,
                    modified: created + chrono::Duration::days(5),
                    notebook_id: nb.to_owned(),
                    parent_group: group.map(str::to_owned),
                };
                let id = sg.id.clone();
                self.notes.section_groups.push(sg);
                self.fill_container(nb, Some(&id), depth + 1, &format!("{name} / "));
            }
        }
    }

    fn fill_section(&mut self, section: &str, n: usize) {
        let mut level = 0u8;
        for order in 0..n {
            level = if order > 0
                && self
                    .rng
                    .random_bool(self.spec.subpage_ratio.clamp(0.0, 1.0))
            {
                (level + 1).clamp(1, 2)
            } else {
                0
            };
            let (page, res) = self.page(section, order as u32, level);
            for r in res {
                self.notes.resources.insert(r.id.clone(), r);
            }
            self.notes.pages.push(page);
        }
    }

    fn page(&mut self, section: &str, order: u32, level: u8) -> (Page, Vec<Resource>) {
        let created = self.date();
        let topic = TOPICS[self.rng.random_range(0..TOPICS.len())];
        let title = format!("{topic} {}", order + 1);
        let mut resources = Vec::new();
        for i in 0..self.spec.images_per_page {
            let mime = if i % 2 == 0 {
                "image/png"
            } else {
                "image/jpeg"
            };
            resources.push(Resource {
                id: self.resource_id(),
                mime: mime.into(),
                kind: ResourceKind::Image {
                    width: self.rng.random_range(200..800),
                    height: self.rng.random_range(100..600),
                },
                len: self.resource_len(),
                seed: self.rng.random(),
            });
        }
        for i in 0..self.spec.attachments_per_page {
            let (mime, name) = match i % 3 {
                0 => ("application/pdf", format!("report-{order}-{i}.pdf")),
                1 => ("text/plain", format!("notes-{order}-{i}.txt")),
                _ => (
                    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                    format!("figures-{order}-{i}.xlsx"),
                ),
            };
            resources.push(Resource {
                id: self.resource_id(),
                mime: mime.into(),
                kind: ResourceKind::Attachment { file_name: name },
                len: self.resource_len(),
                seed: self.rng.random(),
            });
        }
        let page = Page {
            id: self.page_id(),
            title,
            created,
            modified: created + chrono::Duration::minutes(self.rng.random_range(0..100_000)),
            section_id: section.to_owned(),
            level,
            order,
            content_seed: self.rng.random(),
            resources: resources.iter().map(|r| r.id.clone()).collect(),
            links: Vec::new(),
            link_texts: Vec::new(),
            mail_link: self.spec.mail_links,
            fourth_heading: self.spec.fourth_headings,
            extra_paragraphs: self.spec.extra_paragraphs,
        };
        (page, resources)
    }

    fn resource_len(&mut self) -> u64 {
        match self.large_left.take() {
            Some(big) => big,
            None => self.spec.resource_bytes,
        }
    }
}

fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const P_STYLE: &str = "margin-top:0pt;margin-bottom:0pt";

/// The page's HTML as GET `pages/{id}/content` returns it. `base` is the server's `/v1.0` URL; resource
/// URLs are rooted at `users('{user_id}')` as the real service writes them.
pub fn page_html(
    page: &Page,
    resources: &HashMap<String, Resource>,
    base: &str,
    user_id: &str,
) -> String {
    page_html_at(page, resources, base, &format!("users('{user_id}')"))
}

/// [`page_html`] of an owner named by its OData segment (`users('x')`, `groups('x')`, `sites('x')`):
/// resource URLs are rooted there.
pub fn page_html_at(
    page: &Page,
    resources: &HashMap<String, Resource>,
    base: &str,
    owner: &str,
) -> String {
    let mut rng = StdRng::seed_from_u64(page.content_seed);
    let words = |rng: &mut StdRng, n: usize| -> String {
        (0..n)
            .map(|_| WORDS[rng.random_range(0..WORDS.len())])
            .collect::<Vec<_>>()
            .join(" ")
    };
    let created = page.created.format("%Y-%m-%dT%H:%M:%S.0000000");
    let mut h = String::new();
    let _ = write!(
        h,
        "<html lang=\"en-US\">\n\t<head>\n\t\t<title>{}</title>\n\t\t<meta http-equiv=\"Content-Type\" \
         content=\"text/html; charset=utf-8\" />\n\t\t<meta name=\"created\" content=\"{created}\" />\n\t</head>\n\
         \t<body data-absolute-enabled=\"true\" style=\"font-family:Calibri;font-size:11pt\">\n",
        esc(&page.title)
    );
    // The first outline is the default one at the usual spot; further outlines are free-floating and
    // emitted out of visual order now and then, as OneNote does.
    let outlines = rng.random_range(1..=3usize);
    let mut tops: Vec<u32> = (0..outlines)
        .map(|i| 115 + i as u32 * rng.random_range(150..300))
        .collect();
    if outlines > 1 && rng.random_bool(0.5) {
        tops.swap(0, outlines - 1);
    }
    let res: Vec<&Resource> = page
        .resources
        .iter()
        .filter_map(|id| resources.get(id))
        .collect();
    for (o, top) in tops.iter().enumerate() {
        let left = if o == 0 {
            48
        } else {
            rng.random_range(48..600)
        };
        let data_id = if o == 0 { " data-id=\"_default\"" } else { "" };
        let _ = writeln!(
            h,
            "\t\t<div{data_id} style=\"position:absolute;left:{left}px;top:{top}px;width:624px\">"
        );
        let blocks = rng.random_range(3..9);
        for _ in 0..blocks {
            match rng.random_range(0..10) {
                0 => {
                    let (tag, style) = match rng.random_range(1..=3) {
                        1 => ("h1", "font-size:16pt;color:#1e4e79"),
                        2 => ("h2", "font-size:14pt;color:#2e75b5"),
                        _ => ("h3", "font-size:12pt;color:#1f3763"),
                    };
                    let _ = writeln!(
                        h,
                        "\t\t\t<{tag} style=\"{style};{P_STYLE}\">{}</{tag}>",
                        esc(&words(&mut rng, 3))
                    );
                }
                1 => {
                    let done = if rng.random_bool(0.5) {
                        ":completed"
                    } else {
                        ""
                    };
                    let _ = writeln!(
                        h,
                        "\t\t\t<p data-tag=\"to-do{done}\" style=\"{P_STYLE}\">{}</p>",
                        esc(&words(&mut rng, 4))
                    );
                }
                2 => {
                    let ordered = rng.random_bool(0.5);
                    let (tag, kinds): (&str, &[&str]) = if ordered {
                        ("ol", &["decimal", "lower-alpha", "lower-roman"])
                    } else {
                        ("ul", &["disc", "circle", "square"])
                    };
                    let _ = writeln!(h, "\t\t\t<{tag}>");
                    for i in 0..rng.random_range(1..4) {
                        let kind = kinds[0];
                        let value = if ordered {
                            format!(" value=\"{}\"", i + 1)
                        } else {
                            String::new()
                        };
                        let _ = write!(
                            h,
                            "\t\t\t\t<li{value} style=\"list-style-type:{kind}\"><p style=\"{P_STYLE}\">{}</p>",
                            esc(&words(&mut rng, 3))
                        );
                        if rng.random_bool(0.3) {
                            let _ = write!(
                                h,
                                "\n\t\t\t\t\t<{tag}><li style=\"list-style-type:{}\"><span>{}</span></li></{tag}>\n\t\t\t\t",
                                kinds[1],
                                esc(&words(&mut rng, 2))
                            );
                        }
                        h.push_str("</li>\n");
                    }
                    let _ = writeln!(h, "\t\t\t</{tag}>");
                }
                3 => {
                    let border = if rng.random_bool(0.5) {
                        (
                            "border:1px solid;border-collapse:collapse",
                            "border:1px solid",
                        )
                    } else {
                        ("border:0px", "border:0px")
                    };
                    let _ = writeln!(h, "\t\t\t<table style=\"{}\">", border.0);
                    let cols = rng.random_range(2..4);
                    for _ in 0..rng.random_range(2..4) {
                        h.push_str("\t\t\t\t<tr>\n");
                        for _ in 0..cols {
                            let _ = writeln!(
                                h,
                                "\t\t\t\t\t<td style=\"{}\">{}</td>",
                                border.1,
                                esc(&words(&mut rng, 2))
                            );
                        }
                        h.push_str("\t\t\t\t</tr>\n");
                    }
                    h.push_str("\t\t\t</table>\n");
                }
                4 => {
                    let _ = writeln!(
                        h,
                        "\t\t\t<p style=\"font-family:Consolas;{P_STYLE}\">let x = {};</p>",
                        rng.random_range(0..100)
                    );
                }
                5 => h.push_str("\t\t\t<br />\n"),
                6 => {
                    let _ = writeln!(
                        h,
                        "\t\t\t<p style=\"{P_STYLE}\">See <a href=\"https://example.com/{}\">{}</a> for more.</p>",
                        rng.random_range(0..1000),
                        esc(&words(&mut rng, 2))
                    );
                }
                _ => {
                    let span_style = match rng.random_range(0..6) {
                        0 => "font-weight:bold",
                        1 => "font-style:italic",
                        2 => "text-decoration:underline",
                        3 => "text-decoration:line-through",
                        4 => "background-color:yellow",
                        _ => "color:#c00000",
                    };
                    let _ = writeln!(
                        h,
                        "\t\t\t<p style=\"{P_STYLE}\">{} <span style=\"{span_style}\">{}</span> {}</p>",
                        esc(&words(&mut rng, 4)),
                        esc(&words(&mut rng, 2)),
                        esc(&words(&mut rng, 3))
                    );
                }
            }
        }
        if o == 0 {
            for r in &res {
                let url = format!("{base}/{owner}/onenote/resources/{}/$value", r.id);
                match &r.kind {
                    ResourceKind::Image { width, height } => {
                        let _ = writeln!(
                            h,
                            "\t\t\t<img alt=\"{}\" width=\"{width}\" height=\"{height}\" src=\"{url}\" data-src-type=\"{m}\" \
                             data-fullres-src=\"{url}\" data-fullres-src-type=\"{m}\" />",
                            esc(&words(&mut rng, 2)),
                            m = r.mime
                        );
                    }
                    ResourceKind::Attachment { file_name } => {
                        let _ = writeln!(
                            h,
                            "\t\t\t<object data-attachment=\"{}\" type=\"{}\" data=\"{url}\" />",
                            esc(file_name),
                            r.mime
                        );
                    }
                }
                h.push_str("\t\t\t<br />\n");
            }
        }
        h.push_str("\t\t</div>\n");
    }
    // The extras name the page by a label of its content, not by its `order`: a reorder
    // leaves a page's content as it was.
    let label = page.content_seed % 1000;
    if page.extra_paragraphs > 0 {
        h.push_str("\t\t<div style=\"position:absolute;left:48px;top:4400px;width:624px\">\n");
        for i in 0..page.extra_paragraphs {
            let _ = writeln!(
                h,
                "\t\t\t<p style=\"{P_STYLE}\">Line {i} of page {}</p>",
                label
            );
        }
        h.push_str("\t\t</div>\n");
    }
    if page.fourth_heading {
        let _ = writeln!(
            h,
            "\t\t<div style=\"position:absolute;left:48px;top:4600px;width:624px\">\n\t\t\t<h4 style=\"font-size:12pt;color:#2f5496;font-style:italic;margin-top:0pt;margin-bottom:0pt\">Level four of page {}</h4>\n\t\t</div>",
            label
        );
    }
    // The e-mail link goes beside the first page link when there is one (so rewriting that link
    // later carries it too), else in an outline of its own.
    if page.mail_link && page.links.is_empty() {
        let _ = writeln!(
            h,
            "\t\t<div style=\"position:absolute;left:48px;top:4800px;width:624px\">\n\t\t\t<p style=\"{P_STYLE}\">Questions: <a href=\"mailto:author{}@example.com\">write to the author</a></p>\n\t\t</div>",
            label
        );
    }
    // Links to other pages of the notebook, as OneNote writes them, in an outline of their own below
    // the rest.
    if !page.links.is_empty() {
        h.push_str("\t\t<div style=\"position:absolute;left:48px;top:5000px;width:624px\">\n");
        for (i, target) in page.links.iter().enumerate() {
            let guid = crate::graph::routes::guid_of(target);
            let mail = if page.mail_link && i == 0 {
                format!(
                    " or <a href=\"mailto:author{}@example.com\">write to the author</a>",
                    label
                )
            } else {
                String::new()
            };
            let text = page.link_texts.get(i).map_or_else(
                || "the linked page".to_owned(),
                |t| t.replace('&', "&amp;").replace('<', "&lt;"),
            );
            let _ = writeln!(
                h,
                "\t\t\t<p style=\"{P_STYLE}\">See also <a href=\"onenote:#Linked%20page&amp;section-id={{00000000-0000-0000-0000-000000000000}}&amp;page-id={{{guid}}}&amp;end\">{text}</a>{mail}</p>"
            );
        }
        h.push_str("\t\t</div>\n");
    }
    h.push_str("\t</body>\n</html>\n");
    h
}

/// Signature bytes so a resource looks like its type to a sniffing client.
fn magic(mime: &str) -> &'static [u8] {
    match mime {
        "image/png" => b"\x89PNG\r\n\x1a\n",
        "image/jpeg" => b"\xff\xd8\xff\xe0",
        "application/pdf" => b"%PDF-1.7\n",
        _ => b"",
    }
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// Bytes `[offset, offset + len)` of a resource (clamped to its length), the same on every call.
pub fn resource_bytes(res: &Resource, offset: u64, len: usize) -> Vec<u8> {
    let end = (offset + len as u64).min(res.len);
    let head = magic(&res.mime);
    (offset..end)
        .map(|i| {
            if (i as usize) < head.len() {
                head[i as usize]
            } else {
                splitmix(res.seed ^ (i / 8)).to_le_bytes()[(i % 8) as usize]
            }
        })
        .collect()
}

/// A resource's bytes as a stream of 64 KiB chunks, computed as they are sent.
pub fn resource_stream(
    res: Resource,
) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    const CHUNK: usize = 64 * 1024;
    futures::stream::unfold(0u64, move |offset| {
        let res = res.clone();
        async move {
            if offset >= res.len {
                return None;
            }
            let chunk = resource_bytes(&res, offset, CHUNK);
            let next = offset + chunk.len() as u64;
            Some((Ok(Bytes::from(chunk)), next))
        }
    })
}

/// The body of a pasted web clipping of about `bytes` bytes: parts of a heading, styled paragraphs
/// with links, a list with nested items and a table, repeated (issue 20's 50 MB page of ordinary
/// content); and the number of parts. Each part is 19 Notion blocks: the heading, 6 paragraphs, 4
/// list items and their 4 nested items, the table and its 3 rows.
pub fn clipping(bytes: usize) -> (String, u64) {
    let mut body = String::with_capacity(bytes + 4096);
    let mut n = 0;
    while body.len() < bytes {
        body.push_str(&format!(
            "<h2 style=\"font-size:14pt;color:#2e75b5\">Part {n}</h2>\n"
        ));
        for p in 0..6 {
            body.push_str(&format!(
                "<p style=\"margin-top:0pt;margin-bottom:0pt\">Paragraph {p} of part {n} with \
                 <span style=\"font-weight:bold\">bold</span>, <span style=\"font-style:italic\">\
                 italic</span> and <a href=\"https://example.com/{n}/{p}\">a link</a> in a sentence \
                 long enough to be typical.</p>\n"
            ));
        }
        body.push_str("<ul>\n");
        for i in 0..4 {
            body.push_str(&format!(
                "<li><p>Item {i} of part {n}</p><ol><li>Sub item {i}</li></ol></li>\n"
            ));
        }
        body.push_str("</ul>\n<table style=\"border:1px solid;border-collapse:collapse\">\n");
        for r in 0..3 {
            body.push_str("<tr>");
            for c in 0..4 {
                body.push_str(&format!(
                    "<td style=\"border:1px solid\">r{r} c{c} of {n}</td>"
                ));
            }
            body.push_str("</tr>\n");
        }
        body.push_str("</table>\n");
        n += 1;
    }
    (body, n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_content_and_different_seed_differs() {
        let spec = NotebookSpec {
            section_groups_depth: 2,
            attachments_per_page: 1,
            ..NotebookSpec::default()
        };
        let a = generate(&spec);
        assert_eq!(a, generate(&spec));
        let b = generate(&NotebookSpec { seed: 2, ..spec });
        assert_ne!(a.pages[0].id, b.pages[0].id);
        let p = &a.pages[0];
        let h1 = page_html(p, &a.resources, "http://x/v1.0", "u");
        assert_eq!(h1, page_html(p, &a.resources, "http://x/v1.0", "u"));
    }

    #[test]
    fn nesting_counts_follow_the_spec() {
        let spec = NotebookSpec {
            notebooks: 2,
            section_groups_depth: 2,
            section_groups_per_container: 2,
            sections_per_container: 1,
            pages_per_section: 2,
            ..NotebookSpec::default()
        };
        let n = generate(&spec);
        // per notebook: 1 + 2 + 4 containers, one section each; groups: 2 + 4
        assert_eq!(n.sections.len(), 2 * 7);
        assert_eq!(n.section_groups.len(), 2 * 6);
        assert_eq!(n.pages.len(), 2 * 7 * 2);
        assert!(n.section_groups.iter().any(|g| g.parent_group.is_some()));
    }

    #[test]
    fn incident_size_is_1300_pages_in_40_sections() {
        let n = generate(&NotebookSpec::incident(7));
        assert_eq!(n.sections.len(), 40);
        assert_eq!(n.pages.len(), 1300);
        assert!(n.pages.iter().all(|p| p.level <= 2));
        assert!(n.pages.iter().any(|p| p.level == 2));
        // first page of each section is level 0
        assert!(n
            .pages
            .iter()
            .filter(|p| p.order == 0)
            .all(|p| p.level == 0));
        assert_eq!(n.resources.len(), 1300);
    }

    #[test]
    fn html_has_onenote_shape() {
        let spec = NotebookSpec {
            images_per_page: 2,
            attachments_per_page: 1,
            pages_per_section: 10,
            ..NotebookSpec::default()
        };
        let n = generate(&spec);
        let all: String = n
            .pages
            .iter()
            .map(|p| page_html(p, &n.resources, "http://h/v1.0", "alice"))
            .collect();
        for needle in [
            "<body data-absolute-enabled=\"true\"",
            "<meta name=\"created\" content=\"",
            "style=\"position:absolute;left:48px;top:",
            "data-fullres-src=\"http://h/v1.0/users('alice')/onenote/resources/",
            "<object data-attachment=\"report-",
            "list-style-type:",
            "data-tag=\"to-do",
            "<table style=\"",
            "<h1 style=\"font-size:16pt;color:#1e4e79",
        ] {
            assert!(all.contains(needle), "missing {needle}");
        }
        let first = page_html(&n.pages[0], &n.resources, "http://h/v1.0", "alice");
        assert!(first.contains(&format!("<title>{}</title>", n.pages[0].title)));
        assert!(first.contains(".0000000\" />"));
    }

    #[test]
    fn resource_bytes_are_stable_at_any_offset() {
        let r = Resource {
            id: "r".into(),
            mime: "image/png".into(),
            kind: ResourceKind::Image {
                width: 1,
                height: 1,
            },
            len: 1000,
            seed: 9,
        };
        let all = resource_bytes(&r, 0, 5000);
        assert_eq!(all.len(), 1000);
        assert_eq!(&all[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(resource_bytes(&r, 300, 100), all[300..400].to_vec());
    }
}
