//! MathML (as OneNote puts equations into page HTML: a `<math>` element, HTML-serialised, with
//! `&nbsp;` and self-closed `<mrow />`) to LaTeX that Notion's KaTeX renders. Pure; unknown elements
//! keep their text and are reported rather than failing the page.

mod symbols;

use scraper::{ElementRef, Html};

/// Why an equation could not be converted at all.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MathError {
    /// The input holds no `<math>` element.
    #[error("no <math> element in the equation markup")]
    NoMath,
    /// The `<math>` element holds nothing to show.
    #[error("the <math> element is empty")]
    Empty,
}

impl crate::failure::Classify for MathError {
    /// An equation that cannot be converted is kept as text and reported.
    fn class(&self) -> crate::failure::Class {
        use crate::failure::{Class, Next, Scope};
        match self {
            MathError::NoMath | MathError::Empty => Class::new(Scope::Resource, Next::Degrade),
        }
    }
}

/// A converted equation with what was approximated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MathReport {
    /// The LaTeX expression (no `$` delimiters).
    pub latex: String,
    /// `display="block"`: a display equation (Notion `equation` block), else inline.
    pub display: bool,
    /// What could not be carried exactly (unknown elements, odd structures).
    pub warnings: Vec<String>,
}

/// Converts the outer HTML of a `<math>` element to LaTeX.
pub fn mathml_to_latex(mathml: &str) -> Result<String, MathError> {
    convert(mathml).map(|r| r.latex)
}

/// Converts the outer HTML of a `<math>` element, reporting approximations.
pub fn convert(mathml: &str) -> Result<MathReport, MathError> {
    let frag = Html::parse_fragment(mathml);
    let math = frag
        .root_element()
        .descendants()
        .filter_map(ElementRef::wrap)
        .find(|e| e.value().name() == "math")
        .ok_or(MathError::NoMath)?;
    convert_element(math)
}

/// Converts a `<math>` element already parsed with the page (the HTML converter's entry point).
pub fn convert_element(math: ElementRef<'_>) -> Result<MathReport, MathError> {
    let mut cx = Cx::default();
    let latex = cx.row(math);
    let latex = latex.trim().to_owned();
    if latex.is_empty() {
        return Err(MathError::Empty);
    }
    Ok(MathReport {
        latex,
        display: math.value().attr("display") == Some("block"),
        warnings: cx.warnings,
    })
}

/// Element nesting past which an equation's content is kept as text (real equations nest a
/// dozen levels; the limit keeps the stack bounded on hostile input).
pub const MAX_MATH_DEPTH: usize = 48;

#[derive(Default)]
struct Cx {
    warnings: Vec<String>,
    /// Elements open around the one being converted.
    depth: usize,
}

/// Appends `piece`, with a space where a command name would otherwise run into a letter.
fn push(out: &mut String, piece: &str) {
    push_piece(out, piece)
}

fn push_piece(out: &mut String, piece: &str) {
    if piece.is_empty() {
        return;
    }
    let ends_in_command = {
        let tail: String = out
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        !tail.is_empty() && out[..out.len() - tail.len()].ends_with('\\')
    };
    if ends_in_command && piece.starts_with(|c: char| c.is_ascii_alphabetic()) {
        out.push(' ');
    }
    out.push_str(piece);
}

/// Braces unless `s` is one symbol (one char or one command).
fn group(s: &str) -> String {
    let t = s.trim();
    let single = t.chars().count() == 1
        || (t.starts_with('\\') && t.len() > 1 && t[1..].chars().all(|c| c.is_ascii_alphabetic()));
    if single {
        t.to_owned()
    } else {
        format!("{{{t}}}")
    }
}

/// Elements read from their element children only (their own text would be dropped).
const STRUCTURES: &[&str] = &[
    "mfrac",
    "msqrt",
    "mroot",
    "msup",
    "msub",
    "msubsup",
    "munder",
    "mover",
    "munderover",
    "mmultiscripts",
    "mfenced",
    "menclose",
    "mtable",
    "mtr",
    "mlabeledtr",
    "semantics",
    "mspace",
    "none",
    "mprescripts",
    "maligngroup",
    "malignmark",
];

/// Whether `e` has non-blank text nodes of its own (not inside a child element).
fn has_loose_text(e: ElementRef) -> bool {
    e.children().any(|c| {
        c.value()
            .as_text()
            .is_some_and(|t| !t.trim_matches(is_space).is_empty())
    })
}

fn elements<'a>(e: ElementRef<'a>) -> Vec<ElementRef<'a>> {
    e.children().filter_map(ElementRef::wrap).collect()
}

fn text(e: ElementRef) -> String {
    e.text().collect()
}

/// Characters that mean nothing in LaTeX math but space (`&nbsp;`, thin spaces...).
fn is_space(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{a0}' | '\u{2009}' | '\u{200a}' | '\u{2002}'..='\u{2005}'
        )
}

fn escape_text(s: &str) -> String {
    let mut o = String::new();
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\textbackslash{}"),
            '{' | '}' | '#' | '$' | '%' | '&' | '_' => {
                o.push('\\');
                o.push(c);
            }
            '^' => o.push_str("\\^{}"),
            '~' => o.push_str("\\~{}"),
            c if is_space(c) => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

impl Cx {
    fn warn(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// Children as a row, recognising `( mtable )` as a bracketed matrix.
    fn row(&mut self, e: ElementRef) -> String {
        if has_loose_text(e) {
            return self.row_with_text(e);
        }
        let kids = elements(e);
        let mut out = String::new();
        let mut i = 0;
        while i < kids.len() {
            if i + 2 < kids.len() && kids[i + 1].value().name() == "mtable" {
                let (o, c) = (kids[i], kids[i + 2]);
                if o.value().name() == "mo" && c.value().name() == "mo" {
                    if let Some(env) = matrix_env(text(o).trim(), text(c).trim()) {
                        push(&mut out, &self.table(kids[i + 1], env));
                        i += 3;
                        continue;
                    }
                }
            }
            let piece = self.node(kids[i]);
            push(&mut out, &piece);
            i += 1;
        }
        out
    }

    /// A row holding text outside token elements (broken markup): the text is kept, in order,
    /// as `\text{..}` between the converted elements.
    fn row_with_text(&mut self, e: ElementRef) -> String {
        let name = e.value().name();
        self.warn(format!("text directly inside <{name}> kept as text"));
        let mut out = String::new();
        for c in e.children() {
            if let Some(t) = c.value().as_text() {
                let t = t.trim_matches(is_space);
                if !t.is_empty() {
                    push(&mut out, &format!("\\text{{{}}}", escape_text(t)));
                }
            } else if let Some(k) = ElementRef::wrap(c) {
                let piece = self.node(k);
                push(&mut out, &piece);
            }
        }
        out
    }

    /// The `n`th element child converted, or empty with a warning.
    fn arg(&mut self, kids: &[ElementRef], n: usize, parent: &str) -> String {
        match kids.get(n) {
            Some(k) => self.node(*k),
            None => {
                self.warn(format!("<{parent}> is missing argument {}", n + 1));
                String::new()
            }
        }
    }

    fn node(&mut self, e: ElementRef) -> String {
        if self.depth >= MAX_MATH_DEPTH {
            self.warn(format!(
                "nesting deeper than {MAX_MATH_DEPTH} levels kept as its text"
            ));
            // Iterative: the subtree's depth is the input's.
            let t = text(e);
            let t = t.trim_matches(is_space);
            return if t.is_empty() {
                String::new()
            } else {
                format!("\\text{{{}}}", escape_text(t))
            };
        }
        self.depth += 1;
        let out = self.node_at(e);
        self.depth -= 1;
        out
    }

    fn node_at(&mut self, e: ElementRef) -> String {
        let name = e.value().name();
        let kids = elements(e);
        // Structures read their arguments from element children; loose text beside them would
        // be lost, so such an element is read as a row instead.
        if STRUCTURES.contains(&name) && has_loose_text(e) {
            return self.row(e);
        }
        match name {
            "mrow" | "mstyle" | "mpadded" | "merror" | "math" | "mtd" => self.row(e),
            "mphantom" => format!("\\phantom{{{}}}", self.row(e)),
            "semantics" => {
                // A TeX annotation is the author's own source: prefer it.
                if let Some(tex) = kids.iter().find(|k| {
                    k.value().name() == "annotation"
                        && k.value().attr("encoding") == Some("application/x-tex")
                }) {
                    return text(*tex).trim().to_owned();
                }
                kids.first().map(|k| self.node(*k)).unwrap_or_default()
            }
            "annotation" | "annotation-xml" | "none" | "mprescripts" | "maligngroup"
            | "malignmark" => String::new(),
            "mi" => self.mi(e),
            "mn" => symbols::map_str(&text(e)),
            "mo" => self.mo(e),
            "mtext" => {
                let t = text(e);
                if t.chars().all(is_space) {
                    if t.is_empty() {
                        String::new()
                    } else {
                        "\\ ".into()
                    }
                } else {
                    format!("\\text{{{}}}", escape_text(&t))
                }
            }
            "ms" => format!("\\text{{\"{}\"}}", escape_text(&text(e))),
            "mspace" => mspace(e),
            "mfrac" => {
                let (a, b) = (self.arg(&kids, 0, name), self.arg(&kids, 1, name));
                if b.trim().is_empty() {
                    self.warn("fraction with an empty denominator (kept as is)".into());
                }
                if e.value().attr("bevelled") == Some("true") {
                    format!("{}/{}", group(&a), group(&b))
                } else if e.value().attr("linethickness").is_some_and(|t| {
                    t.trim_start_matches('0').trim_start_matches('.').is_empty()
                        || t.starts_with("0px")
                        || t.starts_with("0pt")
                }) {
                    format!("\\genfrac{{}}{{}}{{0pt}}{{}}{{{a}}}{{{b}}}")
                } else {
                    format!("\\frac{{{a}}}{{{b}}}")
                }
            }
            "msqrt" => format!("\\sqrt{{{}}}", self.row(e)),
            "mroot" => {
                let (b, i) = (self.arg(&kids, 0, name), self.arg(&kids, 1, name));
                format!("\\sqrt[{i}]{{{b}}}")
            }
            "msup" => {
                let (b, s) = (self.arg(&kids, 0, name), self.arg(&kids, 1, name));
                format!("{}^{{{s}}}", group(&b))
            }
            "msub" => {
                let (b, s) = (self.arg(&kids, 0, name), self.arg(&kids, 1, name));
                format!("{}_{{{s}}}", group(&b))
            }
            "msubsup" => {
                let b = self.arg(&kids, 0, name);
                let (s, p) = (self.arg(&kids, 1, name), self.arg(&kids, 2, name));
                format!("{}_{{{s}}}^{{{p}}}", group(&b))
            }
            "munder" => {
                let (b, u) = (self.arg(&kids, 0, name), self.arg(&kids, 1, name));
                self.under(&b, &u)
            }
            "mover" => {
                let (b, o) = (self.arg(&kids, 0, name), self.arg(&kids, 1, name));
                self.over(&b, &o)
            }
            "munderover" => {
                let b = self.arg(&kids, 0, name);
                let (u, o) = (self.arg(&kids, 1, name), self.arg(&kids, 2, name));
                if symbols::is_big_operator(&b) {
                    format!("{b}_{{{u}}}^{{{o}}}")
                } else {
                    format!("\\overset{{{o}}}{{\\underset{{{u}}}{{{b}}}}}")
                }
            }
            "mmultiscripts" => self.multiscripts(&kids),
            "mfenced" => self.fenced(e, &kids),
            "menclose" => {
                let inner = self.row(e);
                match e.value().attr("notation").unwrap_or("longdiv") {
                    n if n.contains("box") || n.contains("roundedbox") => {
                        format!("\\boxed{{{inner}}}")
                    }
                    n if n.contains("updiagonalstrike") || n.contains("horizontalstrike") => {
                        format!("\\cancel{{{inner}}}")
                    }
                    n => {
                        self.warn(format!(
                            "<menclose notation=\"{n}\"> drawn without its enclosure"
                        ));
                        inner
                    }
                }
            }
            "mtable" => self.table(e, "matrix"),
            "mtr" | "mlabeledtr" => {
                self.warn(format!("<{name}> outside a table"));
                self.row(e)
            }
            other => {
                self.warn(format!("unknown element <{other}> kept as its text"));
                let t = text(e);
                if t.trim().is_empty() {
                    String::new()
                } else {
                    format!("\\text{{{}}}", escape_text(t.trim()))
                }
            }
        }
    }

    fn mi(&mut self, e: ElementRef) -> String {
        let t = text(e);
        let t = t.trim_matches(is_space);
        if t.is_empty() {
            // OneNote writes `<mi>&nbsp;</mi>` for typed spaces.
            return if text(e).is_empty() {
                String::new()
            } else {
                "\\ ".into()
            };
        }
        let variant = e.value().attr("mathvariant");
        if t.chars().count() == 1 {
            let s = symbols::map_str(t);
            return match variant {
                Some("normal") if s.chars().all(|c| c.is_ascii_alphabetic()) => {
                    format!("\\mathrm{{{s}}}")
                }
                Some("bold") => format!("\\mathbf{{{s}}}"),
                Some("double-struck") => format!("\\mathbb{{{s}}}"),
                Some("script") => format!("\\mathcal{{{s}}}"),
                _ => s,
            };
        }
        if symbols::FUNCTIONS.contains(&t) {
            return format!("\\{t}");
        }
        if t.chars().all(|c| c.is_ascii_alphanumeric()) {
            format!("\\mathrm{{{t}}}")
        } else {
            symbols::map_str(t)
        }
    }

    fn mo(&mut self, e: ElementRef) -> String {
        let t = text(e);
        if !t.is_empty() && t.chars().all(is_space) {
            // `&nbsp;` operators are the spaces OneNote's equation editor shows around operators.
            return "\\ ".into();
        }
        let t = t.trim_matches(is_space);
        if symbols::FUNCTIONS.contains(&t) {
            return format!("\\{t}");
        }
        symbols::map_str(t)
    }

    fn under(&mut self, b: &str, u: &str) -> String {
        match u.trim() {
            "\\_" | "\\underline{}" | "\u{332}" | "-" => format!("\\underline{{{b}}}"),
            "\\underbrace{}" => format!("\\underbrace{{{b}}}"),
            _ if symbols::is_big_operator(b) || b.starts_with("\\lim") => format!("{b}_{{{u}}}"),
            _ => format!("\\underset{{{u}}}{{{b}}}"),
        }
    }

    fn over(&mut self, b: &str, o: &str) -> String {
        let accent = match o.trim() {
            "\\hat{}" | "\\^{}" | "ˆ" => "\\hat",
            "\\sim" | "˜" => "\\tilde",
            "\\overline{}" | "\\bar{}" | "-" | "\\_" => "\\overline",
            "\\to" | "\\rightarrow" | "\\vec{}" => "\\vec",
            "." | "\\dot{}" => "\\dot",
            "\\ddot{}" => "\\ddot",
            "\\overbrace{}" => "\\overbrace",
            "\\check{}" => "\\check",
            "\\breve{}" => "\\breve",
            _ => "",
        };
        if !accent.is_empty() {
            format!("{accent}{{{b}}}")
        } else if symbols::is_big_operator(b) {
            format!("{b}^{{{o}}}")
        } else {
            format!("\\overset{{{o}}}{{{b}}}")
        }
    }

    fn multiscripts(&mut self, kids: &[ElementRef]) -> String {
        let base = kids.first().map(|k| self.node(*k)).unwrap_or_default();
        let split = kids
            .iter()
            .position(|k| k.value().name() == "mprescripts")
            .unwrap_or(kids.len());
        let mut pairs = |range: &[ElementRef]| -> String {
            let mut o = String::new();
            for p in range.chunks(2) {
                let sub = self.node(p[0]);
                let sup = p.get(1).map(|k| self.node(*k)).unwrap_or_default();
                if !sub.is_empty() {
                    o.push_str(&format!("_{{{sub}}}"));
                }
                if !sup.is_empty() {
                    o.push_str(&format!("^{{{sup}}}"));
                }
            }
            o
        };
        let post = pairs(kids.get(1..split).unwrap_or(&[]));
        let pre = pairs(kids.get(split + 1..).unwrap_or(&[]));
        let pre = if pre.is_empty() {
            String::new()
        } else {
            format!("{{}}{pre}")
        };
        format!("{pre}{}{post}", group(&base))
    }

    fn fenced(&mut self, e: ElementRef, kids: &[ElementRef]) -> String {
        let open = e.value().attr("open").unwrap_or("(").trim().to_owned();
        let close = e.value().attr("close").unwrap_or(")").trim().to_owned();
        if kids.len() == 1 && kids[0].value().name() == "mtable" {
            if let Some(env) = matrix_env(&open, &close) {
                return self.table(kids[0], env);
            }
        }
        let seps: Vec<char> = e
            .value()
            .attr("separators")
            .unwrap_or(",")
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        let mut inner = String::new();
        for (i, k) in kids.iter().enumerate() {
            if i > 0 {
                if let Some(s) = seps.get(i - 1).or(seps.last()) {
                    push(&mut inner, &symbols::map_str(&s.to_string()));
                }
            }
            let piece = self.node(*k);
            push(&mut inner, &piece);
        }
        format!("\\left{} {inner} \\right{}", delim(&open), delim(&close))
    }

    fn table(&mut self, t: ElementRef, env: &str) -> String {
        let mut rows = Vec::new();
        for r in elements(t) {
            let name = r.value().name();
            if name != "mtr" && name != "mlabeledtr" {
                continue;
            }
            let mut cells: Vec<ElementRef> = elements(r)
                .into_iter()
                .filter(|c| c.value().name() == "mtd")
                .collect();
            if name == "mlabeledtr" && !cells.is_empty() {
                self.warn("equation label of an <mlabeledtr> dropped".into());
                cells.remove(0);
            }
            let cells: Vec<String> = cells.into_iter().map(|c| self.row(c)).collect();
            rows.push(cells.join(" & "));
        }
        format!("\\begin{{{env}}} {} \\end{{{env}}}", rows.join(" \\\\ "))
    }
}

fn matrix_env(open: &str, close: &str) -> Option<&'static str> {
    Some(match (open, close) {
        ("(", ")") => "pmatrix",
        ("[", "]") => "bmatrix",
        ("{", "}") => "Bmatrix",
        ("|", "|") => "vmatrix",
        ("‖", "‖") | ("∥", "∥") => "Vmatrix",
        _ => return None,
    })
}

fn delim(d: &str) -> String {
    match d {
        "" => ".".into(),
        "{" => "\\{".into(),
        "}" => "\\}".into(),
        "⟨" | "〈" => "\\langle".into(),
        "⟩" | "〉" => "\\rangle".into(),
        "‖" | "∥" => "\\|".into(),
        "⌈" => "\\lceil".into(),
        "⌉" => "\\rceil".into(),
        "⌊" => "\\lfloor".into(),
        "⌋" => "\\rfloor".into(),
        d => d.into(),
    }
}

fn mspace(e: ElementRef) -> String {
    if e.value().attr("linebreak") == Some("newline") {
        return "\\\\".into();
    }
    let w = e.value().attr("width").unwrap_or("");
    let em: f64 = if let Some(v) = w.strip_suffix("em") {
        v.trim().parse().unwrap_or(0.0)
    } else {
        match w {
            "thinmathspace" => 0.17,
            "mediummathspace" => 0.22,
            "thickmathspace" => 0.28,
            _ => 0.28,
        }
    };
    match em {
        e if e <= 0.0 => String::new(),
        e if e < 0.2 => "\\,".into(),
        e if e < 0.25 => "\\:".into(),
        e if e < 0.5 => "\\;".into(),
        e if e < 1.5 => "\\quad".into(),
        _ => "\\qquad".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn l(m: &str) -> String {
        mathml_to_latex(m).unwrap()
    }

    #[test]
    fn basics() {
        assert_eq!(
            l("<math><mi>α</mi><mo>+</mo><mi>x</mi></math>"),
            "\\alpha+x"
        );
        assert_eq!(l("<math><msup><mi>x</mi><mn>2</mn></msup></math>"), "x^{2}");
        assert_eq!(
            l("<math><mfrac><mn>1</mn><mrow><mi>a</mi><mo>+</mo><mi>b</mi></mrow></mfrac></math>"),
            "\\frac{1}{a+b}"
        );
        assert_eq!(l("<math><mi>sin</mi><mi>θ</mi></math>"), "\\sin\\theta");
        assert_eq!(convert("<p>no</p>"), Err(MathError::NoMath));
        assert_eq!(convert("<math> </math>"), Err(MathError::Empty));
    }

    #[test]
    fn loose_text_is_kept_and_reported() {
        let r = convert("<math><mfrac><mi>a</mi><mn>2</mn>&lt;</mfrac>x</math>").unwrap();
        assert_eq!(r.latex, "a2\\text{<}\\text{x}");
        assert_eq!(
            r.warnings,
            vec![
                "text directly inside <math> kept as text",
                "text directly inside <mfrac> kept as text"
            ]
        );
    }

    #[test]
    fn unknown_elements_keep_text_and_are_reported() {
        let r = convert("<math><mi>a</mi><mblob>zz</mblob></math>").unwrap();
        assert_eq!(r.latex, "a\\text{zz}");
        assert_eq!(r.warnings, vec!["unknown element <mblob> kept as its text"]);
    }
}
