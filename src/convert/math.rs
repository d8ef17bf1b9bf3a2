//! MathML (OneNote equations) to the KaTeX expressions Notion renders.
//!
//! Only the structure OneNote writes is translated (fractions, roots, scripts, fences, over/under);
//! any other element contributes its children, so no character is lost.

use scraper::{ElementRef, Node};

/// The KaTeX expression for a `<math>` element; empty when it holds no text.
pub fn to_latex(math: ElementRef<'_>) -> String {
    let mut out = String::new();
    children(math, &mut out, 0);
    out.trim().to_string()
}

/// The plain text of a `<math>` element (the fallback when the expression is too long).
pub fn plain_text(math: ElementRef<'_>) -> String {
    math.text().collect::<Vec<_>>().join(" ")
}

/// Deeper than this, the rest is taken as plain text (a hostile page cannot exhaust the stack).
const MAX_DEPTH: usize = 64;

fn children(e: ElementRef<'_>, out: &mut String, depth: usize) {
    for child in e.children() {
        match child.value() {
            Node::Text(t) => token(t, out),
            Node::Element(_) => {
                if let Some(c) = ElementRef::wrap(child) {
                    element(c, out, depth + 1);
                }
            }
            _ => {}
        }
    }
}

/// Text of a token element: escaped, no-break spaces become explicit spaces.
fn token(text: &str, out: &mut String) {
    let t = text.trim_matches(|c: char| c.is_ascii_whitespace());
    for c in t.chars() {
        match c {
            '\u{a0}' => out.push_str("\\ "),
            '{' | '}' | '#' | '%' | '&' | '$' | '_' => {
                out.push('\\');
                out.push(c);
            }
            '\\' => out.push_str("\\backslash "),
            '^' => out.push_str("\\hat{}"),
            '~' => out.push_str("\\sim "),
            c if c.is_ascii_whitespace() => out.push(' '),
            c => out.push(c),
        }
    }
}

fn group(e: Option<ElementRef<'_>>, out: &mut String, depth: usize) {
    out.push('{');
    if let Some(e) = e {
        element(e, out, depth + 1);
    }
    out.push('}');
}

fn element(e: ElementRef<'_>, out: &mut String, depth: usize) {
    if depth > MAX_DEPTH {
        for t in e.text() {
            token(t, out);
        }
        return;
    }
    let kids: Vec<ElementRef<'_>> = e.child_elements().collect();
    let arg = |i: usize| kids.get(i).copied();
    // Loose text beside the arguments (broken markup) would be lost by the structured forms.
    let loose_text = e
        .children()
        .any(|c| c.value().as_text().is_some_and(|t| !t.trim().is_empty()));
    let name = match e.value().name() {
        "mfrac" | "mroot" | "msup" | "msub" | "msubsup" | "mover" | "munder" if loose_text => {
            "mrow"
        }
        n => n,
    };
    match name {
        "mfrac" if kids.len() == 2 => {
            out.push_str("\\frac");
            group(arg(0), out, depth);
            group(arg(1), out, depth);
        }
        "msqrt" => {
            out.push_str("\\sqrt{");
            children(e, out, depth);
            out.push('}');
        }
        "mroot" if kids.len() == 2 => {
            out.push_str("\\sqrt[");
            element(kids[1], out, depth + 1);
            out.push(']');
            group(arg(0), out, depth);
        }
        "msup" if kids.len() == 2 => {
            group(arg(0), out, depth);
            out.push('^');
            group(arg(1), out, depth);
        }
        "msub" if kids.len() == 2 => {
            group(arg(0), out, depth);
            out.push('_');
            group(arg(1), out, depth);
        }
        "msubsup" if kids.len() == 3 => {
            group(arg(0), out, depth);
            out.push('_');
            group(arg(1), out, depth);
            out.push('^');
            group(arg(2), out, depth);
        }
        "mover" if kids.len() == 2 => {
            out.push_str("\\overset");
            group(arg(1), out, depth);
            group(arg(0), out, depth);
        }
        "munder" if kids.len() == 2 => {
            out.push_str("\\underset");
            group(arg(1), out, depth);
            group(arg(0), out, depth);
        }
        "mfenced" => {
            let open = e.attr("open").unwrap_or("(");
            let close = e.attr("close").unwrap_or(")");
            out.push_str("\\left");
            out.push_str(fence(open));
            for (i, k) in kids.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                element(*k, out, depth + 1);
            }
            out.push_str("\\right");
            out.push_str(fence(close));
        }
        "mtext" => {
            out.push_str("\\text{");
            children(e, out, depth);
            out.push('}');
        }
        "mi" | "mn" | "mo" | "ms" => {
            children(e, out, depth);
            out.push(' ');
        }
        "mspace" => out.push_str("\\ "),
        _ => children(e, out, depth),
    }
}

fn fence(f: &str) -> &'static str {
    match f.trim() {
        "(" => "(",
        ")" => ")",
        "[" => "[",
        "]" => "]",
        "{" => "\\{",
        "}" => "\\}",
        "|" => "|",
        "‖" => "\\|",
        "⟨" => "\\langle",
        "⟩" => "\\rangle",
        _ => ".",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scraper::{Html, Selector};

    #[test]
    fn quadratic_formula() {
        let html = Html::parse_fragment(
            "<math><mi>x</mi><mo>=</mo><mfrac><mrow><mo>−</mo><mi>b</mi><mo>&#177;</mo>\
             <msqrt><msup><mi>b</mi><mn>2</mn></msup><mo>−</mo><mn>4</mn><mi>a</mi><mi>c</mi></msqrt>\
             </mrow><mrow><mn>2</mn><mi>a</mi></mrow></mfrac></math>",
        );
        let sel = Selector::parse("math").unwrap();
        let math = html.select(&sel).next().unwrap();
        assert_eq!(
            to_latex(math),
            "x = \\frac{− b ± \\sqrt{{b }^{2 }− 4 a c }}{2 a }"
        );
    }
}
