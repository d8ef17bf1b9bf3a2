//! Inline CSS as OneNote writes it: the few properties that carry meaning, CSS colours of any
//! form, and the nearest Notion colour.

use super::blocks::{Color, Hue};

/// The declarations of a `style` attribute, lower-cased property names, values trimmed.
pub fn declarations(style: &str) -> impl Iterator<Item = (String, &str)> {
    style.split(';').filter_map(|decl| {
        let (k, v) = decl.split_once(':')?;
        let k = k.trim().to_ascii_lowercase();
        let v = v.trim();
        (!k.is_empty() && !v.is_empty()).then_some((k, v))
    })
}

/// The value of one property in a `style` attribute (the last one wins, as in CSS).
pub fn property<'a>(style: &'a str, name: &str) -> Option<&'a str> {
    declarations(style)
        .filter(|(k, _)| k == name)
        .map(|(_, v)| v)
        .last()
}

/// A length in px (unitless and `pt` accepted; OneNote writes both).
pub fn length_px(value: &str) -> Option<f64> {
    let v = value.trim().to_ascii_lowercase();
    let (num, factor) = if let Some(n) = v.strip_suffix("px") {
        (n, 1.0)
    } else if let Some(n) = v.strip_suffix("pt") {
        (n, 4.0 / 3.0)
    } else {
        (v.as_str(), 1.0)
    };
    num.trim()
        .parse::<f64>()
        .ok()
        .filter(|n| n.is_finite())
        .map(|n| n * factor)
}

/// Whether a `font-family` value names a monospace font (only the first family counts: it is
/// the one OneNote shows).
pub fn is_monospace(family: &str) -> bool {
    let first = family
        .split(',')
        .next()
        .unwrap_or("")
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .to_ascii_lowercase();
    const MONO: [&str; 9] = [
        "consolas",
        "courier",
        "monospace",
        "lucida console",
        "menlo",
        "monaco",
        "mono",
        "cascadia code",
        "source code",
    ];
    MONO.iter().any(|m| first.contains(m))
}

/// Whether a `font-weight` value is bold.
pub fn is_bold_weight(v: &str) -> Option<bool> {
    let v = v.trim().to_ascii_lowercase();
    match v.as_str() {
        "bold" | "bolder" => Some(true),
        "normal" | "lighter" => Some(false),
        n => n.parse::<u32>().ok().map(|w| w >= 600),
    }
}

/// An sRGB colour.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rgb(pub u8, pub u8, pub u8);

/// Parses a CSS colour: names, `#rgb`, `#rrggbb` (and the alpha forms), `rgb()`/`rgba()`.
/// `None` for `transparent`, `inherit` and anything unreadable.
pub fn parse_color(value: &str) -> Option<Rgb> {
    let v = value.trim().to_ascii_lowercase();
    let v = v.trim_end_matches("!important").trim();
    if let Some(hex) = v.strip_prefix('#') {
        return parse_hex(hex);
    }
    if let Some(args) = v
        .strip_prefix("rgba(")
        .or_else(|| v.strip_prefix("rgb("))
        .and_then(|r| r.strip_suffix(')'))
    {
        let parts: Vec<&str> = args
            .split(|c: char| c == ',' || c == '/' || c.is_whitespace())
            .filter(|p| !p.is_empty())
            .collect();
        if parts.len() < 3 {
            return None;
        }
        if let Some(alpha) = parts.get(3) {
            if channel(alpha, 1.0) == Some(0) {
                return None;
            }
        }
        return Some(Rgb(
            channel(parts[0], 255.0)?,
            channel(parts[1], 255.0)?,
            channel(parts[2], 255.0)?,
        ));
    }
    named(v)
}

/// One rgb() channel: a number of `scale` or a percentage, clamped to 0..=255.
fn channel(s: &str, scale: f64) -> Option<u8> {
    let (n, max) = match s.strip_suffix('%') {
        Some(p) => (p.parse::<f64>().ok()?, 100.0),
        None => (s.parse::<f64>().ok()?, scale),
    };
    if !n.is_finite() {
        return None;
    }
    Some(((n / max).clamp(0.0, 1.0) * 255.0).round() as u8)
}

fn parse_hex(hex: &str) -> Option<Rgb> {
    if !hex.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let d = |i: usize| u8::from_str_radix(&hex[i..i + 1], 16).ok();
    let dd = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    match hex.len() {
        3 | 4 => Some(Rgb(d(0)? * 17, d(1)? * 17, d(2)? * 17)),
        6 | 8 => Some(Rgb(dd(0)?, dd(2)?, dd(4)?)),
        _ => None,
    }
}

fn named(name: &str) -> Option<Rgb> {
    // The CSS names OneNote's palette and highlighter produce, plus the common basic ones.
    let rgb = match name {
        "black" => (0, 0, 0),
        "white" => (255, 255, 255),
        "silver" => (192, 192, 192),
        "gray" | "grey" => (128, 128, 128),
        "darkgray" | "darkgrey" => (169, 169, 169),
        "lightgray" | "lightgrey" => (211, 211, 211),
        "dimgray" | "dimgrey" => (105, 105, 105),
        "red" => (255, 0, 0),
        "darkred" | "maroon" => (128, 0, 0),
        "orange" => (255, 165, 0),
        "darkorange" => (255, 140, 0),
        "yellow" => (255, 255, 0),
        "gold" => (255, 215, 0),
        "olive" => (128, 128, 0),
        "lime" => (0, 255, 0),
        "green" => (0, 128, 0),
        "darkgreen" => (0, 100, 0),
        "teal" => (0, 128, 128),
        "aqua" | "cyan" => (0, 255, 255),
        "turquoise" => (64, 224, 208),
        "blue" => (0, 0, 255),
        "navy" | "darkblue" => (0, 0, 128),
        "lightblue" => (173, 216, 230),
        "skyblue" => (135, 206, 235),
        "purple" => (128, 0, 128),
        "violet" => (238, 130, 238),
        "indigo" => (75, 0, 130),
        "fuchsia" | "magenta" => (255, 0, 255),
        "pink" => (255, 192, 203),
        "hotpink" => (255, 105, 180),
        "brown" => (165, 42, 42),
        "chocolate" => (210, 105, 30),
        "tan" => (210, 180, 140),
        "beige" => (245, 245, 220),
        _ => return None,
    };
    Some(Rgb(rgb.0, rgb.1, rgb.2))
}

/// Hue in degrees, saturation and lightness in 0..=1.
fn hsl(Rgb(r, g, b): Rgb) -> (f64, f64, f64) {
    let (r, g, b) = (r as f64 / 255.0, g as f64 / 255.0, b as f64 / 255.0);
    let max = r.max(g).max(b);
    let min = r.min(g).min(b);
    let l = (max + min) / 2.0;
    let d = max - min;
    if d == 0.0 {
        return (0.0, 0.0, l);
    }
    let s = d / (1.0 - (2.0 * l - 1.0).abs());
    let h = if max == r {
        60.0 * (((g - b) / d).rem_euclid(6.0))
    } else if max == g {
        60.0 * ((b - r) / d + 2.0)
    } else {
        60.0 * ((r - g) / d + 4.0)
    };
    (h, s, l)
}

/// The Notion hue for a saturated colour.
fn hue_of(h: f64, l: f64) -> Hue {
    match h {
        h if !(12.0..345.0).contains(&h) => Hue::Red,
        h if h < 45.0 && l < 0.35 => Hue::Brown,
        h if h < 45.0 => Hue::Orange,
        h if h < 70.0 => Hue::Yellow,
        h if h < 165.0 => Hue::Green,
        h if h < 255.0 => Hue::Blue,
        h if h < 290.0 => Hue::Purple,
        _ => Hue::Pink,
    }
}

/// The nearest Notion text colour: near-black is the default, greys are gray.
pub fn text_color(c: Rgb) -> Color {
    let (h, s, l) = hsl(c);
    if l < 0.16 || (s < 0.15 && l < 0.25) {
        Color::Default
    } else if s < 0.15 || l > 0.93 {
        Color::Text(Hue::Gray)
    } else {
        Color::Text(hue_of(h, l))
    }
}

/// The nearest Notion background colour: white is none, greys are gray.
pub fn background_color(c: Rgb) -> Color {
    let (h, s, l) = hsl(c);
    if l > 0.97 {
        Color::Default
    } else if s < 0.15 || l < 0.12 {
        Color::Background(Hue::Gray)
    } else {
        Color::Background(hue_of(h, l))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_forms_parse() {
        assert_eq!(parse_color("#fff"), Some(Rgb(255, 255, 255)));
        assert_eq!(parse_color("#1E4E79"), Some(Rgb(0x1e, 0x4e, 0x79)));
        assert_eq!(parse_color("rgb(10, 20, 30)"), Some(Rgb(10, 20, 30)));
        assert_eq!(parse_color("rgb(100%,0%,0%)"), Some(Rgb(255, 0, 0)));
        assert_eq!(parse_color("rgba(1,2,3,0)"), None);
        assert_eq!(parse_color("Yellow"), Some(Rgb(255, 255, 0)));
        assert_eq!(parse_color("#12"), None);
        assert_eq!(parse_color("#ééé"), None);
        assert_eq!(parse_color("transparent"), None);
    }

    #[test]
    fn nearest_notion_colours() {
        let t = |s| text_color(parse_color(s).unwrap());
        let b = |s| background_color(parse_color(s).unwrap());
        assert_eq!(t("black"), Color::Default);
        assert_eq!(t("#595959"), Color::Text(Hue::Gray));
        assert_eq!(t("#1e4e79"), Color::Text(Hue::Blue));
        assert_eq!(t("#2e75b5"), Color::Text(Hue::Blue));
        assert_eq!(t("red"), Color::Text(Hue::Red));
        assert_eq!(t("#00b050"), Color::Text(Hue::Green));
        assert_eq!(t("#7030a0"), Color::Text(Hue::Purple));
        assert_eq!(t("fuchsia"), Color::Text(Hue::Pink));
        assert_eq!(t("#c55a11"), Color::Text(Hue::Orange));
        assert_eq!(t("#843c0c"), Color::Text(Hue::Brown));
        assert_eq!(b("yellow"), Color::Background(Hue::Yellow));
        assert_eq!(b("white"), Color::Default);
        assert_eq!(b("silver"), Color::Background(Hue::Gray));
        assert_eq!(b("#d8d8d8"), Color::Background(Hue::Gray));
        assert_eq!(b("#00ffff"), Color::Background(Hue::Blue));
    }

    #[test]
    fn style_properties() {
        let s = "font-family:Consolas;font-size:11pt; COLOR : red;color:blue";
        assert_eq!(property(s, "color"), Some("blue"));
        assert!(is_monospace(property(s, "font-family").unwrap()));
        assert!(!is_monospace("Calibri Light"));
        assert!(is_monospace("'Courier New', serif"));
        assert_eq!(length_px("115px"), Some(115.0));
        assert_eq!(length_px("150"), Some(150.0));
        assert_eq!(is_bold_weight("700"), Some(true));
        assert_eq!(is_bold_weight("normal"), Some(false));
    }
}
