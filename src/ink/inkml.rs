//! InkML (W3C REC 2011) as OneNote writes it: `<definitions>` with contexts (ink source, trace format,
//! channel units and resolutions) and brushes, then traces, possibly inside trace groups. Coordinates
//! are converted to CSS px from the units the document declares (OneNote declares `himetric`,
//! 1/2540 inch; Office ink declares `cm` with a resolution), so drawings land in the unit of the page
//! HTML's outline positions.

use std::collections::HashMap;

use roxmltree::{Document, Node};

use super::InkError;

const INKML_NS: &str = "http://www.w3.org/2003/InkML";
const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";

/// CSS px per inch (CSS 2.1 §4.3.2: 1in = 96px).
const PX_PER_IN: f64 = 96.0;

/// How one stroke is drawn.
#[derive(Clone, Debug, PartialEq)]
pub struct Brush {
    /// `#RRGGBB`.
    pub color: String,
    /// Pen width in CSS px.
    pub width: f64,
    /// Opacity 0..=1 (1 - transparency).
    pub opacity: f64,
    /// `rasterOp="maskPen"`: a highlighter.
    pub highlighter: bool,
    /// `tip="rectangle"` (highlighters); ellipse otherwise.
    pub rectangle_tip: bool,
    /// `fitToCurve="true"`: OneNote smooths the stroke.
    pub fit_to_curve: bool,
}

impl Default for Brush {
    fn default() -> Self {
        // No brush at all: OneNote's default pen, black, about 0.5 mm.
        Self {
            color: "#000000".into(),
            width: 53.0 * himetric_px(),
            opacity: 1.0,
            highlighter: false,
            rectangle_tip: false,
            fit_to_curve: false,
        }
    }
}

/// One stroke, in page CSS px.
#[derive(Clone, Debug, PartialEq)]
pub struct Stroke {
    /// Points in CSS px, page coordinates.
    pub points: Vec<(f64, f64)>,
    /// Its brush.
    pub brush: Brush,
    /// Start time in ms when the document says (`timeOffset` or a `T` channel); else `None`.
    pub time_ms: Option<f64>,
}

/// A parsed InkML document.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ink {
    /// Strokes in document order.
    pub strokes: Vec<Stroke>,
}

fn himetric_px() -> f64 {
    PX_PER_IN / 2540.0
}

/// CSS px per one of `unit`, for the length units InkML documents use.
fn unit_px(unit: &str) -> Option<f64> {
    Some(match unit.trim() {
        "himetric" => himetric_px(),
        "cm" => PX_PER_IN / 2.54,
        "mm" => PX_PER_IN / 25.4,
        "in" => PX_PER_IN,
        "pt" => PX_PER_IN / 72.0,
        "pc" => PX_PER_IN / 6.0,
        "px" => 1.0,
        "m" => PX_PER_IN / 0.0254,
        _ => return None,
    })
}

/// Milliseconds per one of `unit` for time channels and offsets.
fn time_unit_ms(unit: &str) -> Option<f64> {
    Some(match unit.trim() {
        "ms" => 1.0,
        "s" => 1000.0,
        "min" => 60_000.0,
        "us" => 0.001,
        _ => return None,
    })
}

#[derive(Clone, Debug)]
struct Channel {
    name: String,
    /// Page px (X, Y) or ms (T) per coordinate unit; `None` for channels we do not scale.
    scale: Option<f64>,
}

#[derive(Clone, Debug)]
struct Format {
    regular: Vec<Channel>,
    intermittent: Vec<Channel>,
}

impl Default for Format {
    /// InkML §3.1.2: without a trace format, points are `X Y`. OneNote's unit is assumed.
    fn default() -> Self {
        let ch = |n: &str| Channel {
            name: n.into(),
            scale: Some(himetric_px()),
        };
        Self {
            regular: vec![ch("X"), ch("Y")],
            intermittent: Vec::new(),
        }
    }
}

#[derive(Clone, Debug, Default)]
struct Context {
    format: Format,
    brush: Option<Brush>,
}

fn local<'a>(n: &Node<'a, '_>) -> &'a str {
    n.tag_name().name()
}

fn is_ink(n: &Node, name: &str) -> bool {
    n.is_element() && local(n) == name && matches!(n.tag_name().namespace(), None | Some(INKML_NS))
}

fn xml_id<'a>(n: &Node<'a, '_>) -> Option<&'a str> {
    n.attribute((XML_NS, "id")).or_else(|| n.attribute("id"))
}

fn strip_ref(r: &str) -> &str {
    r.trim().trim_start_matches('#')
}

struct Defs<'a, 'i> {
    by_id: HashMap<&'a str, Node<'a, 'i>>,
}

impl<'a, 'i> Defs<'a, 'i> {
    fn get(&self, element: &str, reference: &str, kind: &str) -> Result<Node<'a, 'i>, InkError> {
        self.by_id
            .get(strip_ref(reference))
            .copied()
            .filter(|n| local(n) == kind)
            .ok_or_else(|| InkError::Dangling {
                element: element.into(),
                reference: reference.into(),
            })
    }

    fn brush(&self, element: &str, reference: &str) -> Result<Brush, InkError> {
        self.brush_at(element, reference, 0)
    }

    fn brush_at(&self, element: &str, reference: &str, hops: usize) -> Result<Brush, InkError> {
        let n = self.get(element, reference, "brush")?;
        self.brush_of_at(n, hops)
    }

    fn brush_of(&self, n: Node) -> Result<Brush, InkError> {
        self.brush_of_at(n, 0)
    }

    fn brush_of_at(&self, n: Node, hops: usize) -> Result<Brush, InkError> {
        let mut b = match n.attribute("brushRef") {
            Some(r) => self.brush_at("brush", r, chain(hops, "brushRef", r)?)?,
            None => Brush::default(),
        };
        let id = xml_id(&n).unwrap_or("(no id)");
        let mut transparency: Option<f64> = None;
        for p in n.children().filter(|c| is_ink(c, "brushProperty")) {
            let name = p.attribute("name").unwrap_or("");
            let value = p.attribute("value").unwrap_or("").trim();
            let num = || {
                value.parse::<f64>().map_err(|_| {
                    InkError::Definition(format!(
                        "brush {id}: property {name} has non-numeric value {value:?}"
                    ))
                })
            };
            match name {
                "width" => {
                    // OneNote writes himetric; honour any other length unit declared.
                    let unit = p.attribute("units").unwrap_or("himetric");
                    let s = unit_px(unit).ok_or_else(|| {
                        InkError::Definition(format!("brush {id}: unknown width unit {unit:?}"))
                    })?;
                    b.width = num()? * s;
                }
                "color" => {
                    b.color = parse_color(value).ok_or_else(|| {
                        InkError::Definition(format!("brush {id}: colour {value:?} is not #RRGGBB"))
                    })?
                }
                "transparency" => transparency = Some(num()?),
                "rasterOp" => b.highlighter = value.eq_ignore_ascii_case("maskPen"),
                "tip" => b.rectangle_tip = value.eq_ignore_ascii_case("rectangle"),
                "fitToCurve" => b.fit_to_curve = matches!(value, "true" | "1"),
                _ => {}
            }
        }
        if let Some(t) = transparency {
            // Office writes 0..255 (ISF); some writers use a 0..1 fraction.
            let t = if t > 1.0 { t / 255.0 } else { t };
            b.opacity = (1.0 - t).clamp(0.0, 1.0);
        }
        Ok(b)
    }

    fn format_of(&self, n: Node, props: Option<Node>) -> Result<Format, InkError> {
        let mut resolution: HashMap<&str, (f64, &str)> = HashMap::new();
        if let Some(props) = props {
            for p in props.children().filter(|c| is_ink(c, "channelProperty")) {
                if p.attribute("name") == Some("resolution") {
                    let ch = p.attribute("channel").unwrap_or("");
                    let v: f64 = p
                        .attribute("value")
                        .and_then(|v| v.trim().parse().ok())
                        .unwrap_or(0.0);
                    resolution.insert(ch, (v, p.attribute("units").unwrap_or("")));
                }
            }
        }
        let channel = |c: Node| -> Result<Channel, InkError> {
            let name = c.attribute("name").unwrap_or("").to_owned();
            let is_xy = name == "X" || name == "Y";
            let is_t = name == "T";
            let per = |u: &str| {
                if is_t {
                    time_unit_ms(u)
                } else {
                    unit_px(u)
                }
            };
            let scale = if !(is_xy || is_t) {
                None
            } else if let Some(&(v, u)) = resolution.get(name.as_str()).filter(|(v, _)| *v > 0.0) {
                // resolution v in "1/unit": v coordinates per unit.
                let unit = u.trim().strip_prefix("1/").unwrap_or(u);
                match per(unit) {
                    Some(s) => Some(s / v),
                    None if unit == "dev" && is_xy => Some(himetric_px()),
                    None => {
                        return Err(InkError::Definition(format!(
                            "channel {name}: unknown resolution unit {u:?}"
                        )))
                    }
                }
            } else {
                match c.attribute("units") {
                    Some(u) => match per(u) {
                        Some(s) => Some(s),
                        // "dev" (device units) says nothing; OneNote's own unit is the best guess.
                        None if is_xy && u == "dev" => Some(himetric_px()),
                        None => {
                            return Err(InkError::Definition(format!(
                                "channel {name}: unknown unit {u:?}"
                            )))
                        }
                    },
                    None if is_xy => Some(himetric_px()),
                    None => Some(1.0),
                }
            };
            Ok(Channel { name, scale })
        };
        let mut f = Format {
            regular: Vec::new(),
            intermittent: Vec::new(),
        };
        for c in n.children().filter(Node::is_element) {
            if is_ink(&c, "channel") {
                f.regular.push(channel(c)?);
            } else if is_ink(&c, "intermittentChannels") {
                for ic in c.children().filter(|x| is_ink(x, "channel")) {
                    f.intermittent.push(channel(ic)?);
                }
            }
        }
        let has = |n: &str| f.regular.iter().any(|c| c.name == n);
        if !has("X") || !has("Y") {
            return Err(InkError::Definition(format!(
                "traceFormat {} has no X and Y channels",
                xml_id(&n).unwrap_or("(no id)")
            )));
        }
        Ok(f)
    }

    fn source_format(&self, src: Node) -> Result<Format, InkError> {
        let props = src.children().find(|c| is_ink(c, "channelProperties"));
        match src.children().find(|c| is_ink(c, "traceFormat")) {
            Some(tf) => match tf.attribute("href") {
                Some(r) => self.format_of(self.get("traceFormat", r, "traceFormat")?, props),
                None => self.format_of(tf, props),
            },
            None => Ok(Format::default()),
        }
    }

    fn context(&self, n: Node, base: &Context) -> Result<Context, InkError> {
        self.context_at(n, base, 0)
    }

    fn context_at(&self, n: Node, base: &Context, hops: usize) -> Result<Context, InkError> {
        let mut c = base.clone();
        if let Some(r) = n.attribute("contextRef") {
            let hops = chain(hops, "contextRef", r)?;
            c = self.context_at(self.get("context", r, "context")?, base, hops)?;
        }
        if let Some(r) = n.attribute("inkSourceRef") {
            c.format = self.source_format(self.get("context", r, "inkSource")?)?;
        }
        if let Some(r) = n.attribute("traceFormatRef") {
            c.format = self.format_of(self.get("context", r, "traceFormat")?, None)?;
        }
        if let Some(r) = n.attribute("brushRef") {
            c.brush = Some(self.brush("context", r)?);
        }
        for ch in n.children().filter(Node::is_element) {
            if is_ink(&ch, "inkSource") {
                c.format = self.source_format(ch)?;
            } else if is_ink(&ch, "traceFormat") {
                c.format = self.format_of(ch, None)?;
            } else if is_ink(&ch, "brush") {
                c.brush = Some(self.brush_of(ch)?);
            }
        }
        Ok(c)
    }
}

/// Deepest element nesting handed to roxmltree, whose tokenizer recurses once per level (real
/// InkML nests three or four).
const MAX_XML_DEPTH: usize = 256;

/// Whether elements nest deeper than `max`, by a scan of the tags (comments, CDATA, declarations
/// and quoted attribute values skipped). XML has no implied end tags, so counting is exact for
/// well-formed input and never low for broken input.
fn nested_deeper_than(xml: &str, max: usize) -> bool {
    let b = xml.as_bytes();
    let skip_to = |from: usize, end: &str| xml[from..].find(end).map(|k| from + k + end.len());
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(k) = xml[i..].find('<') {
        let j = i + k + 1;
        let rest = &b[j..];
        let next = if rest.starts_with(b"!--") {
            skip_to(j, "-->")
        } else if rest.starts_with(b"![CDATA[") {
            skip_to(j, "]]>")
        } else if rest.starts_with(b"?") || rest.starts_with(b"!") {
            skip_to(j, ">")
        } else if rest.starts_with(b"/") {
            depth = depth.saturating_sub(1);
            skip_to(j, ">")
        } else {
            // A start tag: its end is the first `>` outside a quoted value.
            let mut quote = None;
            let mut end = None;
            for (off, &c) in rest.iter().enumerate() {
                match (quote, c) {
                    (None, b'"' | b'\'') => quote = Some(c),
                    (Some(q), c) if c == q => quote = None,
                    (None, b'>') => {
                        end = Some(j + off);
                        break;
                    }
                    _ => {}
                }
            }
            match end {
                Some(e) => {
                    if b[e - 1] != b'/' {
                        depth += 1;
                        if depth > max {
                            return true;
                        }
                    }
                    Some(e + 1)
                }
                None => None,
            }
        };
        match next {
            Some(n) => i = n,
            None => break,
        }
    }
    false
}

/// Longest chain of `brushRef`/`contextRef` followed (real documents use one or two).
const MAX_REF_CHAIN: usize = 32;

/// One more hop along a reference chain, or the error naming it (a cycle, or hostile input).
fn chain(hops: usize, attr: &str, reference: &str) -> Result<usize, InkError> {
    if hops >= MAX_REF_CHAIN {
        return Err(InkError::Definition(format!(
            "{attr} chain longer than {MAX_REF_CHAIN} at {reference:?} (a cycle?)"
        )));
    }
    Ok(hops + 1)
}

fn parse_color(v: &str) -> Option<String> {
    let h = v.trim().strip_prefix('#')?;
    let ok = |s: &str| s.chars().all(|c| c.is_ascii_hexdigit());
    match h.len() {
        6 if ok(h) => Some(format!("#{}", h.to_ascii_uppercase())),
        // #AARRGGBB (alpha first, as .NET writes it): keep the colour.
        8 if ok(h) => Some(format!("#{}", h[2..].to_ascii_uppercase())),
        3 if ok(h) => Some(format!(
            "#{}",
            h.chars()
                .flat_map(|c| [c, c])
                .collect::<String>()
                .to_ascii_uppercase()
        )),
        _ => None,
    }
}

/// Parses an InkML document into strokes in CSS px.
pub fn parse(inkml: &str) -> Result<Ink, InkError> {
    if nested_deeper_than(inkml, MAX_XML_DEPTH) {
        return Err(InkError::Xml(format!(
            "elements nested deeper than {MAX_XML_DEPTH} levels"
        )));
    }
    let doc = Document::parse(inkml).map_err(|e| InkError::Xml(e.to_string()))?;
    let root = doc.root_element();
    if local(&root) != "ink" {
        return Err(InkError::NotInk(local(&root).to_owned()));
    }
    let mut by_id = HashMap::new();
    for n in root.descendants().filter(Node::is_element) {
        if let Some(id) = xml_id(&n) {
            by_id.insert(id, n);
        }
    }
    let defs = Defs { by_id };
    let mut ink = Ink::default();
    let mut count = 0usize;
    walk(&defs, root, &Context::default(), &mut ink, &mut count)?;
    Ok(ink)
}

/// Document order walk; a bare `<context>` changes the current context for what follows (§4.1).
/// Iterative, one stack entry per open `<traceGroup>`: the nesting depth is the input's.
fn walk(
    defs: &Defs,
    parent: Node,
    ctx: &Context,
    ink: &mut Ink,
    count: &mut usize,
) -> Result<(), InkError> {
    let mut stack = vec![(parent.children(), ctx.clone())];
    while let Some((children, current)) = stack.last_mut() {
        let Some(n) = children.next() else {
            stack.pop();
            continue;
        };
        if !n.is_element() {
            continue;
        }
        if is_ink(&n, "context") {
            *current = defs.context(n, current)?;
        } else if is_ink(&n, "traceGroup") {
            let c = group_context(defs, n, current)?;
            stack.push((n.children(), c));
        } else if is_ink(&n, "trace") {
            *count += 1;
            let c = group_context(defs, n, current)?;
            let name = xml_id(&n)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("#{}", *count));
            let stroke = trace(&n, &c, &name)?;
            if !stroke.points.is_empty() {
                ink.strokes.push(stroke);
            }
        }
    }
    Ok(())
}

fn group_context(defs: &Defs, n: Node, base: &Context) -> Result<Context, InkError> {
    let mut c = base.clone();
    if let Some(r) = n.attribute("contextRef") {
        c = defs.context(defs.get(local(&n), r, "context")?, base)?;
    }
    if let Some(r) = n.attribute("brushRef") {
        c.brush = Some(defs.brush(local(&n), r)?);
    }
    Ok(c)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Explicit,
    First,
    Second,
}

fn trace(n: &Node, c: &Context, name: &str) -> Result<Stroke, InkError> {
    let err = |reason: String| InkError::Trace {
        trace: name.to_owned(),
        reason,
    };
    let text: String = n.children().filter_map(|t| t.text()).collect();
    let channels: Vec<&Channel> = c
        .format
        .regular
        .iter()
        .chain(c.format.intermittent.iter())
        .collect();
    let nreg = c.format.regular.len();
    let idx = |want: &str| channels.iter().position(|ch| ch.name == want);
    let (xi, yi) = (idx("X").unwrap_or(0), idx("Y").unwrap_or(1));
    let ti = idx("T");
    let mut value = vec![0.0f64; channels.len()];
    let mut velocity = vec![0.0f64; channels.len()];
    let mut mode = vec![Mode::Explicit; channels.len()];
    let mut seen = vec![false; channels.len()];
    let mut points = Vec::new();
    let mut first_t = None;
    for (pi, raw) in text.split(',').enumerate() {
        if raw.trim().is_empty() {
            if text.trim().is_empty() {
                break;
            }
            return Err(err(format!("point {} is empty", pi + 1)));
        }
        let vals = tokens(raw).map_err(|e| err(format!("point {}: {e}", pi + 1)))?;
        if vals.len() < nreg || vals.len() > channels.len() {
            return Err(err(format!(
                "point {} has {} values, the trace format has {} channels",
                pi + 1,
                vals.len(),
                nreg
            )));
        }
        for (ci, tok) in vals.iter().enumerate() {
            if let Some(m) = tok.mode {
                mode[ci] = m;
            }
            let Some(v) = tok.value else {
                // `*` / `?`: unchanged / unknown; keep the previous value.
                if !seen[ci] {
                    return Err(err(format!("point {} starts with a wildcard", pi + 1)));
                }
                continue;
            };
            if mode[ci] != Mode::Explicit && !seen[ci] {
                return Err(err(format!(
                    "point {}: a difference before any explicit value",
                    pi + 1
                )));
            }
            let prev = value[ci];
            match mode[ci] {
                Mode::Explicit => value[ci] = v,
                Mode::First => value[ci] = prev + v,
                Mode::Second => value[ci] = prev + velocity[ci] + v,
            }
            velocity[ci] = if seen[ci] { value[ci] - prev } else { 0.0 };
            seen[ci] = true;
        }
        let sx = channels[xi].scale.unwrap_or(1.0);
        let sy = channels[yi].scale.unwrap_or(1.0);
        points.push((value[xi] * sx, value[yi] * sy));
        if first_t.is_none() {
            if let Some(t) = ti {
                first_t = Some(value[t] * channels[t].scale.unwrap_or(1.0));
            }
        }
    }
    let offset = match n.attribute("timeOffset") {
        Some(o) => {
            Some(parse_time(o).ok_or_else(|| err(format!("timeOffset {o:?} is not a time")))?)
        }
        None => None,
    };
    let time_ms = match (offset, first_t) {
        (Some(o), Some(t)) => Some(o + t),
        (o, t) => o.or(t),
    };
    Ok(Stroke {
        points,
        brush: c.brush.clone().unwrap_or_default(),
        time_ms,
    })
}

/// `timeOffset`: a number of ms, or with an `ms`/`s` suffix.
fn parse_time(v: &str) -> Option<f64> {
    let v = v.trim();
    for (suffix, mul) in [("ms", 1.0), ("s", 1000.0)] {
        if let Some(n) = v.strip_suffix(suffix) {
            return n.trim().parse::<f64>().ok().map(|x| x * mul);
        }
    }
    v.parse().ok()
}

struct Tok {
    mode: Option<Mode>,
    value: Option<f64>,
}

/// The values of one point. Values may run together when unambiguous (`'0'265'0`, `10-5`), and a
/// prefix (`!` explicit, `'` first difference, `"` second difference) stays in force for later values
/// of the same channel (§3.2.1).
fn tokens(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let mode = match c {
            b'!' => Some(Mode::Explicit),
            b'\'' => Some(Mode::First),
            b'"' => Some(Mode::Second),
            _ => None,
        };
        if mode.is_some() {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
        }
        if i >= b.len() {
            return Err("a difference prefix without a value".into());
        }
        match b[i] {
            b'*' | b'?' => {
                out.push(Tok { mode, value: None });
                i += 1;
            }
            b'T' | b'F' => {
                out.push(Tok {
                    mode,
                    value: Some(if b[i] == b'T' { 1.0 } else { 0.0 }),
                });
                i += 1;
            }
            b'-' | b'+' | b'.' | b'0'..=b'9' => {
                let start = i;
                if matches!(b[i], b'-' | b'+') {
                    i += 1;
                }
                let mut dot = false;
                let mut digits = 0;
                while i < b.len() {
                    match b[i] {
                        b'0'..=b'9' => digits += 1,
                        b'.' if !dot => dot = true,
                        b'e' | b'E'
                            if digits > 0
                                && b.get(i + 1).is_some_and(|n| {
                                    n.is_ascii_digit() || *n == b'-' || *n == b'+'
                                }) =>
                        {
                            i += 2;
                            while i < b.len() && b[i].is_ascii_digit() {
                                i += 1;
                            }
                            break;
                        }
                        _ => break,
                    }
                    i += 1;
                }
                let t = &s[start..i];
                let v: f64 = t.parse().map_err(|_| format!("{t:?} is not a number"))?;
                out.push(Tok {
                    mode,
                    value: Some(v),
                });
            }
            other => {
                return Err(format!("unexpected character {:?}", other as char));
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEAD: &str = r##"<inkml:ink xmlns:inkml="http://www.w3.org/2003/InkML"><inkml:definitions>
<inkml:context xml:id="ctx0"><inkml:inkSource xml:id="src0"><inkml:traceFormat>
<inkml:channel name="X" type="integer" max="32767" units="himetric"/>
<inkml:channel name="Y" type="integer" max="32767" units="himetric"/>
<inkml:channel name="F" type="integer" max="32767" units="dev"/></inkml:traceFormat>
<inkml:channelProperties><inkml:channelProperty channel="X" name="resolution" value="1" units="1/himetric"/>
<inkml:channelProperty channel="Y" name="resolution" value="1" units="1/himetric"/></inkml:channelProperties>
</inkml:inkSource></inkml:context>
<inkml:brush xml:id="br0"><inkml:brushProperty name="width" value="100" units="himetric"/>
<inkml:brushProperty name="color" value="#0000ff"/><inkml:brushProperty name="transparency" value="0"/></inkml:brush>
</inkml:definitions>"##;

    fn doc(traces: &str) -> String {
        format!("{HEAD}{traces}</inkml:ink>")
    }

    #[test]
    fn difference_encoding_and_packed_values() {
        let d = doc(
            r##"<inkml:trace contextRef="#ctx0" brushRef="#br0">2540 2540 100, '254'0'5, "0 "0 "0, !0 5 !0</inkml:trace>"##,
        );
        let ink = parse(&d).unwrap();
        let p = &ink.strokes[0].points;
        let r = |v: (f64, f64)| ((v.0 * 100.0).round() / 100.0, (v.1 * 100.0).round() / 100.0);
        assert_eq!(r(p[0]), (96.0, 96.0));
        assert_eq!(r(p[1]), (105.6, 96.0));
        // second difference 0 keeps the velocity: one more 254 step
        assert_eq!(r(p[2]), (115.2, 96.0));
        // `!` applies to X only; Y stays in second-difference mode (velocity 0)
        assert_eq!(r(p[3]), (0.0, r((0.0, (2540.0 + 5.0) * 96.0 / 2540.0)).1));
        assert_eq!(ink.strokes[0].brush.color, "#0000FF");
        assert!((ink.strokes[0].brush.width - 100.0 * 96.0 / 2540.0).abs() < 1e-9);
    }

    #[test]
    fn errors_name_the_trace() {
        let e = parse(&doc(
            r##"<inkml:trace xml:id="st7" contextRef="#ctx0">1 2 3, 4 x 6</inkml:trace>"##,
        ))
        .unwrap_err();
        assert!(e.to_string().contains("st7"), "{e}");
        let e = parse(&doc(r##"<inkml:trace brushRef="#nope">1 2</inkml:trace>"##)).unwrap_err();
        assert!(matches!(e, InkError::Dangling { .. }), "{e}");
        let e = parse(&doc(
            r##"<inkml:trace contextRef="#ctx0">'1 2 3</inkml:trace>"##,
        ))
        .unwrap_err();
        assert!(e.to_string().contains("difference before"), "{e}");
        assert!(matches!(parse("<html/>"), Err(InkError::NotInk(_))));
        assert!(matches!(parse("<ink"), Err(InkError::Xml(_))));
    }

    #[test]
    fn declared_units_are_honoured() {
        let d = r##"<ink xmlns="http://www.w3.org/2003/InkML"><definitions>
<context xml:id="c"><inkSource><traceFormat><channel name="X" type="integer"/><channel name="Y" type="integer"/>
<channel name="T" type="integer" units="ms"/></traceFormat>
<channelProperties><channelProperty channel="X" name="resolution" value="1000" units="1/cm"/>
<channelProperty channel="Y" name="resolution" value="1000" units="1/cm"/></channelProperties></inkSource></context>
<brush xml:id="hl"><brushProperty name="width" value="0.35" units="cm"/><brushProperty name="color" value="#FFFF00"/>
<brushProperty name="tip" value="rectangle"/><brushProperty name="rasterOp" value="maskPen"/>
<brushProperty name="transparency" value="128"/></brush></definitions>
<trace contextRef="#c" brushRef="#hl" timeOffset="5s">2540 0 10, 5080 2540 20</trace></ink>"##;
        let ink = parse(d).unwrap();
        let s = &ink.strokes[0];
        assert!((s.points[0].0 - 96.0).abs() < 1e-9 && (s.points[1].1 - 96.0).abs() < 1e-9);
        assert!(s.brush.highlighter && s.brush.rectangle_tip);
        assert!((s.brush.width - 0.35 * 96.0 / 2.54).abs() < 1e-9);
        assert!((s.brush.opacity - (1.0 - 128.0 / 255.0)).abs() < 1e-9);
        assert_eq!(s.time_ms, Some(5010.0));
    }
}
