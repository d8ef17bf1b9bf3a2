//! OneNote equations as MathML for the converter. In the file an equation is text in math-formatted
//! runs, structured the way RichEdit's TOM keeps math (`ITextRange2::GetInlineObject`): U+FDD0
//! opens an inline object (fraction, script, radical, ...) whose kind comes with the run, U+FDEE
//! separates its arguments and U+FDEF closes it. The MathML goes through the same `mathml`
//! conversion to LaTeX as the API route's, with its rules and report.

use std::fmt::Write as _;

use onenote_parser::contents::{MathInlineObject, MathObjectType};

/// Opens an inline object.
pub const START: char = '\u{fdd0}';
/// Separates an object's arguments.
pub const SEPARATOR: char = '\u{fdee}';
/// Closes an inline object.
pub const END: char = '\u{fdef}';
/// Objects nested deeper than this keep their text in the enclosing argument (the walk never
/// depends on the input's depth).
const MAX_DEPTH: usize = 32;

/// A piece of math text and the object its run carries (for the run's U+FDD0).
pub struct MathRun<'a> {
    /// The run's text.
    pub text: &'a str,
    /// Its inline object, when it has one.
    pub object: Option<&'a MathInlineObject>,
}

/// The kinds of objects that matter for the markup (the parser's, or a plain group).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Object {
    kind: ObjectKind,
    arg_count: u32,
    columns: u8,
    char: Option<char>,
    char1: Option<char>,
    char2: Option<char>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ObjectKind {
    Group,
    Accent,
    Boxed,
    Brackets,
    BracketsWithSeps,
    EquationArray,
    Fraction,
    SlashedFraction,
    FunctionApply,
    LeftSubSup,
    LowerLimit,
    UpperLimit,
    Matrix,
    Nary,
    Overbar,
    Underbar,
    Phantom,
    Radical,
    Stack,
    Subscript,
    Superscript,
    SubSup,
}

impl Object {
    fn of(o: &MathInlineObject) -> Self {
        let kind = match o.object_type() {
            MathObjectType::Accent => ObjectKind::Accent,
            MathObjectType::BoxedFormula => ObjectKind::Boxed,
            MathObjectType::Brackets => ObjectKind::Brackets,
            MathObjectType::BracketsWithSeps => ObjectKind::BracketsWithSeps,
            MathObjectType::EquationArray => ObjectKind::EquationArray,
            MathObjectType::Fraction => ObjectKind::Fraction,
            MathObjectType::SlashedFraction => ObjectKind::SlashedFraction,
            MathObjectType::FunctionApply => ObjectKind::FunctionApply,
            MathObjectType::LeftSubSup => ObjectKind::LeftSubSup,
            MathObjectType::LowerLimit => ObjectKind::LowerLimit,
            MathObjectType::UpperLimit => ObjectKind::UpperLimit,
            MathObjectType::Matrix => ObjectKind::Matrix,
            MathObjectType::Nary => ObjectKind::Nary,
            MathObjectType::Overbar => ObjectKind::Overbar,
            MathObjectType::Underbar => ObjectKind::Underbar,
            MathObjectType::Phantom => ObjectKind::Phantom,
            MathObjectType::Radical => ObjectKind::Radical,
            MathObjectType::Stack | MathObjectType::StretchStack => ObjectKind::Stack,
            MathObjectType::Subscript => ObjectKind::Subscript,
            MathObjectType::Superscript => ObjectKind::Superscript,
            MathObjectType::SubSup => ObjectKind::SubSup,
            _ => ObjectKind::Group,
        };
        Object {
            kind,
            arg_count: o.arg_count(),
            columns: o.column().unwrap_or(0),
            char: o.char(),
            char1: o.char1(),
            char2: o.char2(),
        }
    }

    fn group() -> Self {
        Object {
            kind: ObjectKind::Group,
            arg_count: 0,
            columns: 0,
            char: None,
            char1: None,
            char2: None,
        }
    }
}

struct Frame {
    object: Object,
    args: Vec<String>,
    current: String,
}

/// The `<math>` element for consecutive math runs; `display`: the equation is its paragraph.
pub fn mathml(runs: &[MathRun<'_>], display: bool) -> String {
    let items: Vec<(&str, Option<Object>)> = runs
        .iter()
        .map(|r| (r.text, r.object.map(Object::of)))
        .collect();
    mathml_of(&items, display)
}

fn mathml_of(runs: &[(&str, Option<Object>)], display: bool) -> String {
    let mut root = String::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut skipped = 0usize;
    for (text, object) in runs {
        let mut object = *object;
        for c in text.chars() {
            match c {
                START if stack.len() >= MAX_DEPTH => skipped += 1,
                START => stack.push(Frame {
                    object: object.take().unwrap_or_else(Object::group),
                    args: Vec::new(),
                    current: String::new(),
                }),
                SEPARATOR if skipped == 0 => {
                    if let Some(f) = stack.last_mut() {
                        let a = std::mem::take(&mut f.current);
                        f.args.push(a);
                    }
                }
                END if skipped > 0 => skipped -= 1,
                END => close(&mut stack, &mut root),
                SEPARATOR => {}
                c => match stack.last_mut() {
                    Some(f) => token(&mut f.current, c),
                    None => token(&mut root, c),
                },
            }
        }
    }
    while !stack.is_empty() {
        close(&mut stack, &mut root);
    }
    let d = if display { " display=\"block\"" } else { "" };
    format!("<math{d}><mrow>{root}</mrow></math>")
}

fn close(stack: &mut Vec<Frame>, root: &mut String) {
    let Some(mut f) = stack.pop() else {
        return;
    };
    let last = std::mem::take(&mut f.current);
    f.args.push(last);
    let markup = render(&f.object, &f.args);
    match stack.last_mut() {
        Some(p) => p.current.push_str(&markup),
        None => root.push_str(&markup),
    }
}

fn row(s: &str) -> String {
    format!("<mrow>{s}</mrow>")
}

fn mo(c: char) -> String {
    let mut s = String::from("<mo>");
    escape(&mut s, c);
    s.push_str("</mo>");
    s
}

/// One object's markup from its arguments' markup.
fn render(o: &Object, args: &[String]) -> String {
    let arg = |i: usize| row(args.get(i).map(String::as_str).unwrap_or(""));
    match o.kind {
        ObjectKind::Group | ObjectKind::Phantom => args.iter().map(|a| row(a)).collect(),
        ObjectKind::Fraction => format!("<mfrac>{}{}</mfrac>", arg(0), arg(1)),
        ObjectKind::SlashedFraction => format!("{}<mo>/</mo>{}", arg(0), arg(1)),
        ObjectKind::Superscript => format!("<msup>{}{}</msup>", arg(0), arg(1)),
        ObjectKind::Subscript => format!("<msub>{}{}</msub>", arg(0), arg(1)),
        ObjectKind::SubSup => format!("<msubsup>{}{}{}</msubsup>", arg(0), arg(1), arg(2)),
        ObjectKind::LeftSubSup => format!(
            "<mmultiscripts>{}<mprescripts />{}{}</mmultiscripts>",
            arg(2),
            arg(0),
            arg(1)
        ),
        ObjectKind::Radical => {
            let degree = args.first().filter(|d| !d.is_empty() && args.len() > 1);
            match degree {
                Some(d) => format!("<mroot>{}{}</mroot>", arg(1), row(d)),
                None => format!("<msqrt>{}</msqrt>", arg(args.len().saturating_sub(1))),
            }
        }
        ObjectKind::Brackets | ObjectKind::BracketsWithSeps => {
            let open = o.char.unwrap_or('(');
            let shut = o.char1.unwrap_or(')');
            let sep = o.char2.unwrap_or('|');
            let inner: Vec<String> = args.iter().map(|a| row(a)).collect();
            format!(
                "<mrow>{}{}{}</mrow>",
                mo(open),
                inner.join(&mo(sep)),
                mo(shut)
            )
        }
        ObjectKind::Nary => {
            let op = mo(o.char.unwrap_or('∫'));
            format!(
                "<munderover>{op}{}{}</munderover>{}",
                arg(0),
                arg(1),
                arg(2)
            )
        }
        ObjectKind::LowerLimit => format!("<munder>{}{}</munder>", arg(0), arg(1)),
        ObjectKind::UpperLimit | ObjectKind::Stack => {
            format!("<mover>{}{}</mover>", arg(0), arg(1))
        }
        ObjectKind::Accent => format!(
            "<mover accent=\"true\">{}{}</mover>",
            arg(0),
            mo(o.char.unwrap_or('\u{302}'))
        ),
        ObjectKind::Overbar => format!("<mover>{}<mo>¯</mo></mover>", arg(0)),
        ObjectKind::Underbar => format!("<munder>{}<mo>_</mo></munder>", arg(0)),
        ObjectKind::Boxed => format!("<menclose notation=\"box\">{}</menclose>", arg(0)),
        ObjectKind::FunctionApply => format!("{}<mo>\u{2061}</mo>{}", arg(0), arg(1)),
        ObjectKind::Matrix | ObjectKind::EquationArray => {
            let cols = if o.kind == ObjectKind::Matrix {
                usize::from(o.columns.max(1))
            } else {
                1
            };
            let _ = o.arg_count;
            let mut t = String::from("<mtable>");
            for r in args.chunks(cols) {
                t.push_str("<mtr>");
                for c in r {
                    let _ = write!(t, "<mtd>{}</mtd>", row(c));
                }
                t.push_str("</mtr>");
            }
            t.push_str("</mtable>");
            t
        }
    }
}

/// A character as a token element: digits `<mn>`, letters `<mi>`, the rest `<mo>`; spaces go.
fn token(out: &mut String, c: char) {
    if c.is_whitespace() {
        return;
    }
    let tag = if c.is_ascii_digit() || c == '.' {
        "mn"
    } else if c.is_alphabetic() {
        "mi"
    } else {
        "mo"
    };
    let _ = write!(out, "<{tag}>");
    escape(out, c);
    let _ = write!(out, "</{tag}>");
}

fn escape(out: &mut String, c: char) {
    match c {
        '&' => out.push_str("&amp;"),
        '<' => out.push_str("&lt;"),
        '>' => out.push_str("&gt;"),
        c if c.is_control() => {}
        c => out.push(c),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(kind: ObjectKind) -> Option<Object> {
        Some(Object {
            kind,
            ..Object::group()
        })
    }

    fn latex(runs: &[(&str, Option<Object>)]) -> String {
        crate::mathml::mathml_to_latex(&mathml_of(runs, true)).unwrap()
    }

    #[test]
    fn objects_become_the_latex_of_the_api_route() {
        // x = (a+1)/2
        let runs = [
            ("x=", None),
            ("\u{fdd0}", obj(ObjectKind::Fraction)),
            ("a+1\u{fdee}2\u{fdef}", None),
        ];
        assert_eq!(latex(&runs), "x=\\frac{a+1}{2}");
        // e^{i\pi} and a root of degree 3.
        assert_eq!(
            latex(&[
                ("\u{fdd0}", obj(ObjectKind::Superscript)),
                ("e\u{fdee}iπ\u{fdef}", None)
            ]),
            "e^{i\\pi}"
        );
        assert_eq!(
            latex(&[
                ("\u{fdd0}", obj(ObjectKind::Radical)),
                ("3\u{fdee}x\u{fdef}", None)
            ]),
            "\\sqrt[3]{x}"
        );
        // Nested: a fraction in a subscript.
        let runs = [
            ("\u{fdd0}", obj(ObjectKind::Subscript)),
            ("x\u{fdee}", None),
            ("\u{fdd0}", obj(ObjectKind::Fraction)),
            ("1\u{fdee}n\u{fdef}\u{fdef}", None),
        ];
        assert_eq!(latex(&runs), "x_{\\frac{1}{n}}");
    }

    #[test]
    fn unbalanced_or_deep_input_still_gives_markup() {
        let open = "\u{fdd0}".repeat(200);
        let m = mathml_of(&[(open.as_str(), None), ("x", None)], false);
        assert!(m.starts_with("<math><mrow>") && m.ends_with("</mrow></math>"));
        assert!(m.contains("<mi>x</mi>"));
        let m = mathml_of(&[("\u{fdef}\u{fdee}a<b", None)], false);
        assert!(m.contains("<mo>&lt;</mo>"), "{m}");
    }
}
