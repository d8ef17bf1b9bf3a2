//! Renders a drawing's strokes as one SVG document in CSS px: a path per stroke with the pen's colour,
//! width and opacity, highlighters with square ends, and a viewBox fitted to the drawing's ink box.

use std::fmt::Write as _;

use super::group::Bounds;
use super::inkml::Stroke;

/// Highlighter ink is see-through even when the brush declares no transparency, as OneNote draws it.
const HIGHLIGHTER_OPACITY: f64 = 0.5;

fn num(v: f64) -> String {
    let r = super::round2(v);
    let s = format!("{r:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.into()
    }
}

/// The SVG of `strokes`, whose ink box is `b`; coordinates are relative to the box's top-left.
pub fn render(strokes: &[&Stroke], b: &Bounds) -> String {
    let (w, h) = (b.right - b.left, b.bottom - b.top);
    let mut out = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\">\n",
        num(w.ceil()),
        num(h.ceil()),
        num(w),
        num(h)
    );
    for s in strokes {
        let pt = |&(x, y): &(f64, f64)| format!("{} {}", num(x - b.left), num(y - b.top));
        let br = &s.brush;
        let opacity = if br.highlighter {
            br.opacity.min(HIGHLIGHTER_OPACITY)
        } else {
            br.opacity
        };
        let op = if opacity < 1.0 {
            format!(" stroke-opacity=\"{}\"", num(opacity))
        } else {
            String::new()
        };
        let cap = if br.rectangle_tip {
            "square\" stroke-linejoin=\"miter"
        } else {
            "round\" stroke-linejoin=\"round"
        };
        let d = if s.points.len() == 1 {
            // A dot: a zero-length segment shows its caps.
            format!("M{} l0 0", pt(&s.points[0]))
        } else if br.fit_to_curve && s.points.len() > 2 {
            // Quadratic curves through the midpoints: the smoothing OneNote applies on screen.
            let p = &s.points;
            let mut d = format!("M{}", pt(&p[0]));
            for i in 1..p.len() - 1 {
                let m = ((p[i].0 + p[i + 1].0) / 2.0, (p[i].1 + p[i + 1].1) / 2.0);
                let _ = write!(d, " Q{} {}", pt(&p[i]), pt(&m));
            }
            let _ = write!(d, " L{}", pt(&p[p.len() - 1]));
            d
        } else {
            let mut d = format!("M{}", pt(&s.points[0]));
            for p in &s.points[1..] {
                let _ = write!(d, " L{}", pt(p));
            }
            d
        };
        let _ = writeln!(
            out,
            "<path d=\"{d}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\"{op} stroke-linecap=\"{cap}\"/>",
            br.color,
            num(br.width)
        );
    }
    out.push_str("</svg>\n");
    out
}
