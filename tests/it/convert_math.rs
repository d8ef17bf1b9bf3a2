//! Equations through the HTML converter: display math alone in its paragraph becomes an `equation`
//! block, other math inline equation rich text, over-long LaTeX a `latex` code block (reported), and
//! what MathML could only approximate is in the page report.

use std::path::PathBuf;

use notebridge::convert::{convert_page, Block, RichKind};

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/math")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn page(body: &str) -> notebridge::convert::ConvertedPage {
    convert_page(&format!("<html><body>{body}</body></html>"))
}

/// The inline equations of a block, in order.
fn inline_equations(b: &Block) -> Vec<String> {
    b.text()
        .map(|t| {
            t.rich_text
                .iter()
                .filter_map(|r| match &r.kind {
                    RichKind::Equation { expression } => Some(expression.clone()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn fixtures_become_equation_blocks_or_inline_equations() {
    // (file, display, LaTeX): fractions, roots, sub/superscripts, matrices, Greek letters.
    let cases = [
        (
            "fraction-nested.html",
            true,
            r"f\left( x \right)\ =\ \frac{1+\frac{a}{b}}{2x-3}",
        ),
        ("roots.html", false, r"\sqrt{a^{2}+b^{2}}\ne\sqrt[3]{x+1}"),
        (
            "scripts.html",
            true,
            r"x_{i}^{2}=\sum_{k=1}^{n}a_{k}e^{-\lambda t}+\lim_{t\to0}\vec{v}",
        ),
        (
            "matrix.html",
            true,
            r"A=\begin{pmatrix} 1 & 0 \\ 0 & d_{2} \end{pmatrix},\begin{bmatrix} a & b \end{bmatrix}",
        ),
        (
            "greek.html",
            false,
            r"\Delta\varphi=2\pi\cdot\frac{\Omega}{\omega}\pm\varepsilon\le\infty\quad\text{for all }\theta\in\mathbb{R}",
        ),
    ];
    for (file, display, want) in cases {
        let p = page(&format!("<p>{}</p>", fixture(file)));
        assert_eq!(p.blocks.len(), 1, "{file}");
        if display {
            assert_eq!(
                p.blocks[0],
                Block::Equation {
                    expression: want.to_string()
                },
                "{file}"
            );
        } else {
            assert_eq!(p.blocks[0].type_name(), "paragraph", "{file}");
            assert_eq!(inline_equations(&p.blocks[0]), vec![want.to_string()]);
        }
        assert_eq!(p.report.items.len(), 1, "{file}: {:?}", p.report);
        assert_eq!(p.report.items[0].element, "<math>");
    }
}

#[test]
fn display_math_beside_text_stays_inline() {
    let p = page(
        "<p>Area: <math display=\"block\"><mi>π</mi><msup><mi>r</mi><mn>2</mn></msup></math>.</p>",
    );
    assert_eq!(p.blocks.len(), 1);
    assert_eq!(p.blocks[0].type_name(), "paragraph");
    assert_eq!(inline_equations(&p.blocks[0]), vec![r"\pi r^{2}"]);
    let json = p.blocks_json();
    assert_eq!(
        json[0]["paragraph"]["rich_text"][1]["equation"]["expression"],
        r"\pi r^{2}"
    );
}

#[test]
fn over_long_latex_becomes_a_latex_code_block_and_is_reported() {
    let math: String = (0..300).map(|i| format!("<mi>v{i}</mi>")).collect();
    let p = page(&format!(
        "<p>before</p><p><math display=\"block\">{math}</math></p>"
    ));
    let code = p
        .blocks
        .iter()
        .find(|b| b.type_name() == "code")
        .expect("a code block");
    let json = code.to_json();
    assert_eq!(json["code"]["language"], "latex");
    let text: String = json["code"]["rich_text"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["text"]["content"].as_str().unwrap())
        .collect();
    assert!(text.chars().count() > 1000);
    assert!(text.starts_with(r"\mathrm{v0}\mathrm{v1}"), "{text:.40}");
    let r = &p.report.items;
    assert_eq!(r.len(), 1, "{r:?}");
    assert_eq!(r[0].element, "<math> longer than 1000 characters of LaTeX");
    assert_eq!(r[0].action, "kept as a LaTeX code block");
    // At the limit it is still an equation.
    let ok: String = (0..70).map(|i| format!("<mi>v{i}</mi>")).collect();
    let p = page(&format!("<p><math display=\"block\">{ok}</math></p>"));
    assert_eq!(p.blocks[0].type_name(), "equation");
}

#[test]
fn unknown_elements_are_reported_as_approximations() {
    let p = page(&format!("<p>{}</p>", fixture("unknown.html")));
    assert_eq!(
        inline_equations(&p.blocks[0]),
        vec![r"y=\text{odd}+\frac{x}{}"]
    );
    let elements: Vec<(&str, usize, &str)> = p
        .report
        .items
        .iter()
        .map(|a| (a.element.as_str(), a.count, a.action.as_str()))
        .collect();
    assert_eq!(
        elements,
        vec![
            (
                "<math>: unknown element <mfoo> kept as its text",
                1,
                "approximated in the equation's LaTeX"
            ),
            (
                "<math>: fraction with an empty denominator (kept as is)",
                1,
                "approximated in the equation's LaTeX"
            ),
            ("<math>", 1, "MathML converted to a KaTeX equation"),
        ]
    );
}

#[test]
fn public_sample_04_equation_in_a_list_item_is_inline() {
    let Some(html) =
        crate::public_samples::read("public_sample_04_equation_in_a_list_item_is_inline", "04-")
    else {
        return;
    };
    let p = convert_page(&html);
    let item = p
        .blocks
        .iter()
        .find(|b| b.type_name() == "bulleted_list_item")
        .expect("the list item");
    assert_eq!(
        inline_equations(item),
        vec![r"Real\ Wages\ =\ PPP\ \star\ Big\text{ Mac price}"]
    );
}
