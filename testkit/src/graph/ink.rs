//! Ink on generated pages. About one page in three has handwriting: 1-3 drawings, each a few strokes
//! drawn through one spot to the right of an outline, written as OneNote writes InkML (a himetric
//! context with a pressure channel, `brush` definitions, explicit and difference-encoded traces).
//!
//! Without `includeInkML=true` the page HTML carries one `<!-- InkNode is not supported -->` comment
//! per drawing, as the service does; with it the answer is `multipart/mixed` with the HTML part and an
//! `application/inkml+xml` part. A page without ink answers the flag with the HTML part alone (the
//! service's behaviour there is not documented; the client must handle both shapes anyway).

use std::fmt::Write as _;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::model::Page;
use super::routes::{Body, Reply};

/// Himetric units per CSS px (2540 per inch, 96 px per inch).
const HIMETRIC_PER_PX: f64 = 2540.0 / 96.0;

/// A generated drawing as the client should find it.
#[derive(Clone, Debug, PartialEq)]
pub struct GeneratedDrawing {
    /// Left of the ink box (points widened by half the pen width), CSS px.
    pub left: f64,
    /// Top of the ink box, CSS px.
    pub top: f64,
    /// Right of the ink box, CSS px.
    pub right: f64,
    /// Bottom of the ink box, CSS px.
    pub bottom: f64,
    /// Strokes in it.
    pub strokes: usize,
    /// Drawn with the highlighter.
    pub highlighter: bool,
    /// `left`/`top` of the outline it was drawn beside.
    pub outline: (f64, f64),
}

/// A page's ink.
#[derive(Clone, Debug, PartialEq)]
pub struct PageInk {
    /// The drawings, in generation order.
    pub drawings: Vec<GeneratedDrawing>,
    /// The InkML document.
    pub inkml: String,
}

/// Outline positions (`left`, `top`) of a page's HTML, in document order.
pub fn outline_positions(html: &str) -> Vec<(f64, f64)> {
    let mut out = Vec::new();
    for part in html.split("position:absolute;left:").skip(1) {
        let num = |s: &str| -> Option<f64> {
            let end = s.find("px")?;
            s[..end].trim().parse().ok()
        };
        let Some(left) = num(part) else { continue };
        let Some(top) = part.find("top:").and_then(|i| num(&part[i + 4..])) else {
            continue;
        };
        out.push((left, top));
    }
    out
}

/// The page's ink, if it has any; `html` is the page's generated HTML (for outline positions).
pub fn page_ink(page: &Page, html: &str) -> Option<PageInk> {
    let mut rng = StdRng::seed_from_u64(page.content_seed ^ 0x1A4B_0000_0000_1A4B);
    if rng.random_range(0..3) != 0 {
        return None;
    }
    let outlines = outline_positions(html);
    if outlines.is_empty() {
        return None;
    }
    let count = rng.random_range(1..=outlines.len().min(3));
    let mut x = String::from(INKML_HEAD);
    let mut drawings = Vec::new();
    x.push_str("<inkml:traceGroup>\n");
    let mut id = 0;
    for (j, &(ol, ot)) in outlines.iter().take(count).enumerate() {
        let highlighter = j == 2;
        let (brush, half) = if highlighter {
            ("#brHL", 300.0 / HIMETRIC_PER_PX / 2.0)
        } else if j == 1 {
            ("#brRed", 53.0 / HIMETRIC_PER_PX / 2.0)
        } else {
            ("#br0", 100.0 / HIMETRIC_PER_PX / 2.0)
        };
        // Right of the 624 px wide outline, a little below its top.
        let cx = ol + 660.0 + rng.random_range(0.0..40.0);
        let cy = ot + 40.0 + rng.random_range(0.0..20.0);
        let strokes = rng.random_range(3..=8);
        let mut b = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        for s in 0..strokes {
            // Every stroke passes through the drawing's centre, so the strokes touch.
            let n = rng.random_range(6..=14);
            let mut pts: Vec<(i64, i64)> = Vec::with_capacity(n);
            let (mut px, mut py) = (cx, cy);
            for _ in 0..n {
                pts.push((
                    (px * HIMETRIC_PER_PX).round() as i64,
                    (py * HIMETRIC_PER_PX).round() as i64,
                ));
                px = (px + rng.random_range(-12.0..12.0)).clamp(cx - 60.0, cx + 60.0);
                py = (py + rng.random_range(-8.0..8.0)).clamp(cy - 30.0, cy + 30.0);
            }
            for &(hx, hy) in &pts {
                let (fx, fy) = (hx as f64 / HIMETRIC_PER_PX, hy as f64 / HIMETRIC_PER_PX);
                b = (
                    b.0.min(fx - half),
                    b.1.min(fy - half),
                    b.2.max(fx + half),
                    b.3.max(fy + half),
                );
            }
            let _ = writeln!(
                x,
                "<inkml:trace xml:id=\"st{id}\" contextRef=\"#ctxCoordinatesWithPressure\" brushRef=\"{brush}\">{}</inkml:trace>",
                encode(&pts, s % 2 == 1, &mut rng)
            );
            id += 1;
        }
        drawings.push(GeneratedDrawing {
            left: b.0,
            top: b.1,
            right: b.2,
            bottom: b.3,
            strokes,
            highlighter,
            outline: (ol, ot),
        });
    }
    x.push_str("</inkml:traceGroup>\n</inkml:ink>\n");
    Some(PageInk { drawings, inkml: x })
}

/// A trace's points with pressure: explicit, or first-difference encoded with OneNote's packed
/// prefixes (`'12'-3'0`).
fn encode(pts: &[(i64, i64)], diff: bool, rng: &mut StdRng) -> String {
    let mut s = String::new();
    let mut prev = (0i64, 0i64, 0i64);
    for (i, &(x, y)) in pts.iter().enumerate() {
        let f = rng.random_range(1000..20000i64);
        if i > 0 {
            s.push_str(", ");
        }
        if i == 0 || !diff {
            let _ = write!(s, "{x} {y} {f}");
        } else {
            let _ = write!(s, "'{}'{}'{}", x - prev.0, y - prev.1, f - prev.2);
        }
        prev = (x, y, f);
    }
    s
}

const INKML_HEAD: &str = r##"<inkml:ink xmlns:emma="http://www.w3.org/2003/04/emma" xmlns:msink="http://schemas.microsoft.com/ink/2010/main" xmlns:inkml="http://www.w3.org/2003/InkML">
<inkml:definitions>
<inkml:context xml:id="ctxCoordinatesWithPressure">
<inkml:inkSource xml:id="inkSrcCoordinatesWithPressure">
<inkml:traceFormat>
<inkml:channel name="X" type="integer" max="32767" units="himetric"/>
<inkml:channel name="Y" type="integer" max="32767" units="himetric"/>
<inkml:channel name="F" type="integer" max="32767" units="dev"/>
</inkml:traceFormat>
<inkml:channelProperties>
<inkml:channelProperty channel="X" name="resolution" value="1" units="1/himetric"/>
<inkml:channelProperty channel="Y" name="resolution" value="1" units="1/himetric"/>
<inkml:channelProperty channel="F" name="resolution" value="1" units="1/dev"/>
</inkml:channelProperties>
</inkml:inkSource>
</inkml:context>
<inkml:brush xml:id="br0">
<inkml:brushProperty name="width" value="100" units="himetric"/>
<inkml:brushProperty name="height" value="100" units="himetric"/>
<inkml:brushProperty name="color" value="#000000"/>
<inkml:brushProperty name="transparency" value="0"/>
<inkml:brushProperty name="tip" value="ellipse"/>
<inkml:brushProperty name="rasterOp" value="copyPen"/>
<inkml:brushProperty name="ignorePressure" value="false"/>
<inkml:brushProperty name="antiAliased" value="true"/>
<inkml:brushProperty name="fitToCurve" value="false"/>
</inkml:brush>
<inkml:brush xml:id="brRed">
<inkml:brushProperty name="width" value="53" units="himetric"/>
<inkml:brushProperty name="height" value="53" units="himetric"/>
<inkml:brushProperty name="color" value="#E71224"/>
<inkml:brushProperty name="transparency" value="0"/>
<inkml:brushProperty name="tip" value="ellipse"/>
<inkml:brushProperty name="rasterOp" value="copyPen"/>
<inkml:brushProperty name="ignorePressure" value="false"/>
<inkml:brushProperty name="antiAliased" value="true"/>
<inkml:brushProperty name="fitToCurve" value="true"/>
</inkml:brush>
<inkml:brush xml:id="brHL">
<inkml:brushProperty name="width" value="300" units="himetric"/>
<inkml:brushProperty name="height" value="600" units="himetric"/>
<inkml:brushProperty name="color" value="#FFFF00"/>
<inkml:brushProperty name="transparency" value="0"/>
<inkml:brushProperty name="tip" value="rectangle"/>
<inkml:brushProperty name="rasterOp" value="maskPen"/>
<inkml:brushProperty name="ignorePressure" value="true"/>
<inkml:brushProperty name="antiAliased" value="true"/>
<inkml:brushProperty name="fitToCurve" value="false"/>
</inkml:brush>
</inkml:definitions>
"##;

/// The HTML with one ink comment per drawing at the top of the body, where the service leaves them.
pub fn with_ink_comments(html: &str, ink: &PageInk) -> String {
    let Some(body) = html.find("<body") else {
        return html.to_owned();
    };
    let Some(end) = html[body..].find('>').map(|i| body + i + 1) else {
        return html.to_owned();
    };
    let comments: String = ink
        .drawings
        .iter()
        .map(|_| "\n\t\t<!-- InkNode is not supported -->")
        .collect();
    format!("{}{comments}{}", &html[..end], &html[end..])
}

/// The multipart boundary of a page's answer: GUID-shaped, as the service's are, and stable.
fn boundary(page: &Page) -> String {
    let mut rng = StdRng::seed_from_u64(page.content_seed.rotate_left(17));
    let h: String = (0..32)
        .map(|_| char::from_digit(rng.random_range(0..16), 16).unwrap_or('0'))
        .collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// `multipart/mixed` body with the HTML part and, if given, the InkML part (CRLF line ends).
pub fn multipart(boundary: &str, html: &str, inkml: Option<&str>) -> Vec<u8> {
    let mut s = format!("--{boundary}\r\nContent-Type: text/html; charset=utf-8\r\n\r\n{html}\r\n");
    if let Some(ink) = inkml {
        let _ = write!(
            s,
            "--{boundary}\r\nContent-Type: application/inkml+xml\r\n\r\n{ink}\r\n"
        );
    }
    let _ = write!(s, "--{boundary}--\r\n");
    s.into_bytes()
}

/// The answer to `GET pages/{id}/content`, with or without `includeInkML=true`.
pub fn content_reply(page: &Page, html: String, include_inkml: bool) -> Reply {
    let ink = page_ink(page, &html);
    let html = match &ink {
        Some(ink) => with_ink_comments(&html, ink),
        None => html,
    };
    let body = if include_inkml {
        let b = boundary(page);
        Body::Raw {
            content_type: format!("multipart/mixed; boundary={b}"),
            bytes: multipart(&b, &html, ink.as_ref().map(|i| i.inkml.as_str())),
        }
    } else {
        Body::Html(html)
    };
    Reply {
        status: 200,
        headers: Vec::new(),
        body,
    }
}
