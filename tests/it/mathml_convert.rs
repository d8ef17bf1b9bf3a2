//! MathML -> LaTeX on our own fixtures (fractions, roots, scripts, matrices, Greek letters, an unknown
//! element) and on the two public OneNote samples that hold equations.

use std::path::PathBuf;

use notebridge::mathml::{convert, mathml_to_latex};

fn fixture(name: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/math")
        .join(name);
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Every `<math>...</math>` in a page, as the converter will hand them over.
fn maths(html: &str) -> Vec<String> {
    let doc = scraper::Html::parse_document(html);
    let sel = scraper::Selector::parse("math").unwrap();
    doc.select(&sel).map(|m| m.html()).collect()
}

#[test]
fn own_fixtures_convert_to_the_expected_latex() {
    let cases = [
        (
            "fraction-nested.html",
            r"f\left( x \right)\ =\ \frac{1+\frac{a}{b}}{2x-3}",
        ),
        ("roots.html", r"\sqrt{a^{2}+b^{2}}\ne\sqrt[3]{x+1}"),
        (
            "scripts.html",
            r"x_{i}^{2}=\sum_{k=1}^{n}a_{k}e^{-\lambda t}+\lim_{t\to0}\vec{v}",
        ),
        (
            "matrix.html",
            r"A=\begin{pmatrix} 1 & 0 \\ 0 & d_{2} \end{pmatrix},\begin{bmatrix} a & b \end{bmatrix}",
        ),
        (
            "greek.html",
            r"\Delta\varphi=2\pi\cdot\frac{\Omega}{\omega}\pm\varepsilon\le\infty\quad\text{for all }\theta\in\mathbb{R}",
        ),
    ];
    for (file, want) in cases {
        let r = convert(&fixture(file)).unwrap();
        assert_eq!(r.latex, want, "{file}");
        assert!(r.warnings.is_empty(), "{file}: {:?}", r.warnings);
    }
    assert!(convert(&fixture("scripts.html")).unwrap().display);
    assert!(!convert(&fixture("roots.html")).unwrap().display);
}

#[test]
fn unknown_elements_and_empty_denominators_are_reported_not_fatal() {
    let r = convert(&fixture("unknown.html")).unwrap();
    assert_eq!(r.latex, r"y=\text{odd}+\frac{x}{}");
    assert_eq!(
        r.warnings,
        vec![
            "unknown element <mfoo> kept as its text",
            "fraction with an empty denominator (kept as is)"
        ]
    );
}

#[test]
fn public_sample_01_quadratic_formula() {
    let Some(html) = crate::public_samples::read("public_sample_01_quadratic_formula", "01-")
    else {
        return;
    };
    let m = maths(&html);
    assert_eq!(m.len(), 1);
    let r = convert(&m[0]).unwrap();
    // OneNote wrote the denominator after the fraction (`<mrow />` then `2a`); kept as written.
    assert_eq!(
        r.latex,
        r"x\ =\frac{\left( -b\ \pm\ \sqrt{b^{2}-4ac} \right)}{}2a"
    );
    assert!(r.display);
    assert_eq!(
        r.warnings,
        vec!["fraction with an empty denominator (kept as is)"]
    );
}

#[test]
fn public_sample_04_nbsp_and_star() {
    let Some(html) = crate::public_samples::read("public_sample_04_nbsp_and_star", "04-") else {
        return;
    };
    let m = maths(&html);
    assert_eq!(m.len(), 1);
    assert_eq!(
        mathml_to_latex(&m[0]).unwrap(),
        r"Real\ Wages\ =\ PPP\ \star\ Big\text{ Mac price}"
    );
}
