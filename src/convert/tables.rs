//! `<table>` to a Notion table: spans expanded to an even grid, each cell's blocks joined into
//! one rich-text array, and what a cell cannot hold placed after the table.

use scraper::ElementRef;

use super::blocks::is_spacer;
use super::blocks::{Annotations, Block, Color, RichKind, RichText};
use super::css;
use super::rich_text::{merge_plain, split_text, MAX_TEXT};
use super::walker::{Sink, Style, TextBlockKind, Walker};

/// Notion cell arrays share the 100-object limit of every rich-text array.
const MAX_ITEMS: usize = 100;
/// A hostile `colspan`/`rowspan` must not allocate without bound.
const MAX_SPAN: usize = 64;

struct Cell<'a> {
    el: ElementRef<'a>,
    /// The background of the row, row group or table around the cell (the nearest one).
    covering: Option<&'a str>,
    header: bool,
    colspan: usize,
    rowspan: usize,
}

impl Walker<'_> {
    /// The table block, followed by what its cells could not hold.
    pub fn table(&mut self, table: ElementRef<'_>, st: &Style, depth: usize) -> Vec<Block> {
        let mut before = Vec::new();
        let rows = collect_rows(table);
        for cap in table
            .child_elements()
            .filter(|c| c.value().name() == "caption")
        {
            let mut sink = Sink::new(TextBlockKind::Paragraph, false);
            self.children(cap, st, &mut sink, depth + 1);
            sink.flush(self);
            before.extend(sink.blocks);
        }
        // Lay the cells on a grid; spanned slots stay empty.
        let mut grid: Vec<Vec<Option<Vec<RichText>>>> = Vec::new();
        let mut taken: Vec<Vec<bool>> = Vec::new();
        let mut after: Vec<Block> = Vec::new();
        let mut header_row = false;
        let n_rows = rows.len();
        for (r, row) in rows.iter().enumerate() {
            ensure_row(&mut grid, &mut taken, r);
            if r == 0 {
                header_row = !row.is_empty() && row.iter().all(|c| c.header);
            }
            let mut c = 0;
            for cell in row {
                while taken[r].get(c).copied().unwrap_or(false) {
                    c += 1;
                }
                if cell.colspan > 1 || cell.rowspan > 1 {
                    self.report.add(
                        "table cell span (colspan/rowspan)",
                        "expanded to single cells; content kept in the first",
                    );
                }
                let rowspan = cell.rowspan.min(n_rows - r).max(1);
                for rr in r..r + rowspan {
                    ensure_row(&mut grid, &mut taken, rr);
                    for cc in c..c + cell.colspan {
                        set(&mut taken[rr], cc, true);
                        if grid[rr].len() <= cc {
                            grid[rr].resize_with(cc + 1, || None);
                        }
                    }
                }
                let content = self.cell(cell.el, cell.covering, st, depth, &mut after);
                grid[r][c] = Some(content);
                c += cell.colspan;
            }
        }
        let width = grid.iter().map(Vec::len).max().unwrap_or(0);
        let mut out = before;
        if width == 0 {
            out.extend(after);
            return out;
        }
        let rows: Vec<Vec<Vec<RichText>>> = grid
            .into_iter()
            .map(|row| {
                let mut cells: Vec<Vec<RichText>> =
                    row.into_iter().map(Option::unwrap_or_default).collect();
                cells.resize_with(width, Vec::new);
                cells
            })
            .collect();
        out.push(Block::Table {
            width,
            has_column_header: header_row,
            rows,
        });
        out.extend(after);
        out
    }

    /// One cell's content as a single rich-text array; media and overflow go to `after`.
    fn cell(
        &mut self,
        el: ElementRef<'_>,
        covering: Option<&str>,
        st: &Style,
        depth: usize,
        after: &mut Vec<Block>,
    ) -> Vec<RichText> {
        // The cell's own style (bold, colour); its background is carried on its text, the nearest
        // Notion background colour, since Notion tables have no cell colours.
        let mut cst = self.style_of(el, st);
        let background = background_of(el)
            .or(covering)
            .map(|v| css::parse_color(v).map(css::background_color));
        if let Some(Some(bg)) = background {
            cst = cst.with_background(bg);
        }
        let st = &cst;
        let mut sink = Sink::new(TextBlockKind::Paragraph, false);
        self.children(el, st, &mut sink, depth + 1);
        sink.flush(self);
        let mut lines: Vec<Vec<RichText>> = Vec::new();
        for b in sink.blocks {
            self.flatten_block(b, &mut lines, after);
        }
        let first = lines
            .iter()
            .position(|l| !l.is_empty())
            .unwrap_or(lines.len());
        let last = lines
            .iter()
            .rposition(|l| !l.is_empty())
            .map_or(first, |i| i + 1);
        let mut rich: Vec<RichText> = Vec::new();
        for (i, line) in lines.drain(first..last).enumerate() {
            if i > 0 {
                rich.push(RichText::plain("\n"));
            }
            rich.extend(line);
        }
        let rich = merge_plain(rich);
        match background {
            None => {}
            Some(None) => self
                .report
                .add("table cell background (colour not readable)", "not kept"),
            Some(Some(Color::Default)) => self.report.add(
                "table cell background (white)",
                "kept: Notion's default background",
            ),
            Some(Some(_)) if rich.is_empty() => self.report.add(
                "table cell background on an empty cell",
                "not kept (Notion colours text, and the cell has none)",
            ),
            Some(Some(_)) => self.report.add(
                "table cell background",
                "nearest Notion background colour on the cell's text",
            ),
        }
        if rich.len() <= MAX_ITEMS {
            return rich;
        }
        // Too many styled runs for one cell: keep every character, drop the styling.
        self.report.add(
            "table cell with more than 100 styled runs",
            "its text kept without styling",
        );
        let text: String = rich.iter().map(RichText::visible_text).collect();
        let mut parts: Vec<RichText> = split_text(&text, MAX_TEXT)
            .into_iter()
            .map(RichText::plain)
            .collect();
        if parts.len() > MAX_ITEMS {
            self.report.add(
                "table cell longer than 200,000 characters",
                "the rest follows the table as paragraphs",
            );
            let rest = parts.split_off(MAX_ITEMS);
            after.push(Block::Paragraph(super::blocks::TextBlock::new(rest)));
        }
        parts
    }

    /// A block inside a cell as lines of text, with a marker showing what it was.
    fn flatten_block(&mut self, b: Block, lines: &mut Vec<Vec<RichText>>, after: &mut Vec<Block>) {
        if is_spacer(&b) {
            // A blank line inside the cell's text (those at its edges are trimmed by the caller).
            lines.push(Vec::new());
            return;
        }
        if !matches!(b, Block::Paragraph(_)) {
            self.report.add(
                format!("{} in a table cell", b.type_name()),
                match &b {
                    Block::Table { .. } => "its rows kept as text lines",
                    Block::Divider => "removed (a cell holds only text)",
                    Block::Image { .. }
                    | Block::File { .. }
                    | Block::Pdf { .. }
                    | Block::Video { .. }
                    | Block::Embed { .. } => "placed after the table",
                    Block::Equation { .. } => "kept as an inline equation in the cell",
                    Block::Heading { .. } => "kept as bold text lines of the cell",
                    Block::Code { .. } => "kept as text lines of the cell",
                    _ => "kept as text lines of the cell, with its marker",
                },
            );
        }
        let marker = match &b {
            Block::Bulleted(_) => Some("• ".to_string()),
            Block::Numbered(_) => Some("1. ".to_string()),
            Block::ToDo { checked, .. } => Some(if *checked { "☑ " } else { "☐ " }.to_string()),
            Block::Callout { emoji, .. } => Some(format!("{emoji} ")),
            _ => None,
        };
        match b {
            Block::Code { rich_text, .. } => lines.push(rich_text),
            Block::Table { rows, .. } => {
                for row in rows {
                    let mut line = Vec::new();
                    for (i, cell) in row.into_iter().enumerate() {
                        if i > 0 {
                            line.push(RichText::plain(" | "));
                        }
                        line.extend(cell);
                    }
                    lines.push(line);
                }
            }
            Block::Equation { expression } => lines.push(vec![RichText {
                kind: RichKind::Equation { expression },
                annotations: Annotations::default(),
            }]),
            Block::Divider => {}
            media @ (Block::Image { .. }
            | Block::File { .. }
            | Block::Pdf { .. }
            | Block::Video { .. }
            | Block::Embed { .. }) => after.push(media),
            mut text_like => {
                if let Block::Heading { .. } = text_like {
                    super::walker::embolden(&mut text_like);
                }
                if let Some(t) = text_like.text_mut() {
                    let mut line = Vec::new();
                    if let Some(m) = marker {
                        line.push(RichText::plain(m));
                    }
                    line.append(&mut t.rich_text);
                    lines.push(line);
                    for c in std::mem::take(&mut t.children) {
                        self.flatten_block(c, lines, after);
                    }
                }
            }
        }
    }
}

fn ensure_row(grid: &mut Vec<Vec<Option<Vec<RichText>>>>, taken: &mut Vec<Vec<bool>>, r: usize) {
    while grid.len() <= r {
        grid.push(Vec::new());
        taken.push(Vec::new());
    }
}

fn set(v: &mut Vec<bool>, i: usize, val: bool) {
    if v.len() <= i {
        v.resize(i + 1, false);
    }
    v[i] = val;
}

fn span(e: ElementRef<'_>, name: &str) -> usize {
    e.attr(name)
        .and_then(|v| v.trim().parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, MAX_SPAN)
}

/// The background an element gives what it covers: `background-color` or `background` in its
/// style, else its `bgcolor` attribute.
fn background_of(e: ElementRef<'_>) -> Option<&str> {
    e.attr("style")
        .and_then(|s| css::property(s, "background-color").or(css::property(s, "background")))
        .or_else(|| e.attr("bgcolor"))
        .map(str::trim)
        .filter(|v| !v.is_empty())
}

/// The rows of this table (not of tables nested in its cells).
fn collect_rows(table: ElementRef<'_>) -> Vec<Vec<Cell<'_>>> {
    let table_bg = background_of(table);
    let mut rows = Vec::new();
    for child in table.child_elements() {
        match child.value().name() {
            "tr" => rows.push(row_cells(child, false, table_bg)),
            "thead" | "tbody" | "tfoot" => {
                let head = child.value().name() == "thead";
                let group_bg = background_of(child).or(table_bg);
                for tr in child.child_elements().filter(|c| c.value().name() == "tr") {
                    rows.push(row_cells(tr, head, group_bg));
                }
            }
            _ => {}
        }
    }
    rows
}

fn row_cells<'a>(tr: ElementRef<'a>, in_head: bool, around: Option<&'a str>) -> Vec<Cell<'a>> {
    let covering = background_of(tr).or(around);
    tr.child_elements()
        .filter(|c| matches!(c.value().name(), "td" | "th"))
        .map(|c| Cell {
            el: c,
            covering,
            header: in_head || c.value().name() == "th",
            colspan: span(c, "colspan"),
            rowspan: span(c, "rowspan"),
        })
        .collect()
}
