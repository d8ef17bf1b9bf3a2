//! Unicode characters of MathML token elements and their LaTeX commands.

/// Function names that LaTeX sets upright with their own spacing (`\sin x`).
pub const FUNCTIONS: &[&str] = &[
    "sin", "cos", "tan", "cot", "sec", "csc", "sinh", "cosh", "tanh", "coth", "arcsin", "arccos",
    "arctan", "log", "ln", "lg", "exp", "lim", "liminf", "limsup", "max", "min", "sup", "inf",
    "det", "dim", "gcd", "deg", "arg", "ker", "Pr", "hom",
];

/// Operators that take limits below and above (`\sum_{i}^{n}`).
pub fn is_big_operator(latex: &str) -> bool {
    matches!(
        latex.trim(),
        "\\sum"
            | "\\prod"
            | "\\coprod"
            | "\\int"
            | "\\iint"
            | "\\iiint"
            | "\\oint"
            | "\\bigcup"
            | "\\bigcap"
            | "\\bigvee"
            | "\\bigwedge"
            | "\\bigoplus"
            | "\\bigotimes"
            | "\\lim"
            | "\\max"
            | "\\min"
            | "\\sup"
            | "\\inf"
    )
}

/// The LaTeX for one character, or `None` when it stands for itself.
pub fn map_char(c: char) -> Option<&'static str> {
    Some(match c {
        // Greek, lower case (U+03B5 is the curly epsilon in Unicode; U+03F5 the lunate one).
        'α' => "\\alpha",
        'β' => "\\beta",
        'γ' => "\\gamma",
        'δ' => "\\delta",
        'ε' => "\\varepsilon",
        'ϵ' => "\\epsilon",
        'ζ' => "\\zeta",
        'η' => "\\eta",
        'θ' => "\\theta",
        'ϑ' => "\\vartheta",
        'ι' => "\\iota",
        'κ' => "\\kappa",
        'λ' => "\\lambda",
        'μ' => "\\mu",
        'ν' => "\\nu",
        'ξ' => "\\xi",
        'ο' => "o",
        'π' => "\\pi",
        'ϖ' => "\\varpi",
        'ρ' => "\\rho",
        'ϱ' => "\\varrho",
        'σ' => "\\sigma",
        'ς' => "\\varsigma",
        'τ' => "\\tau",
        'υ' => "\\upsilon",
        'φ' => "\\varphi",
        'ϕ' => "\\phi",
        'χ' => "\\chi",
        'ψ' => "\\psi",
        'ω' => "\\omega",
        // Greek, upper case (those without a command look like Latin letters).
        'Α' => "A",
        'Β' => "B",
        'Γ' => "\\Gamma",
        'Δ' => "\\Delta",
        'Ε' => "E",
        'Ζ' => "Z",
        'Η' => "H",
        'Θ' => "\\Theta",
        'Ι' => "I",
        'Κ' => "K",
        'Λ' => "\\Lambda",
        'Μ' => "M",
        'Ν' => "N",
        'Ξ' => "\\Xi",
        'Ο' => "O",
        'Π' => "\\Pi",
        'Ρ' => "P",
        'Σ' => "\\Sigma",
        'Τ' => "T",
        'Υ' => "\\Upsilon",
        'Φ' => "\\Phi",
        'Χ' => "X",
        'Ψ' => "\\Psi",
        'Ω' => "\\Omega",
        // Arithmetic and relations.
        '−' | '‐' | '–' => "-",
        '±' => "\\pm",
        '∓' => "\\mp",
        '×' => "\\times",
        '÷' => "\\div",
        '⋅' | '·' => "\\cdot",
        '∗' => "\\ast",
        '⋆' => "\\star",
        '∘' => "\\circ",
        '•' => "\\bullet",
        '≤' | '⩽' => "\\le",
        '≥' | '⩾' => "\\ge",
        '≠' => "\\ne",
        '≈' => "\\approx",
        '≡' => "\\equiv",
        '∼' => "\\sim",
        '≃' => "\\simeq",
        '≅' => "\\cong",
        '∝' => "\\propto",
        '≪' => "\\ll",
        '≫' => "\\gg",
        '≺' => "\\prec",
        '≻' => "\\succ",
        '≜' => "\\triangleq",
        '∞' => "\\infty",
        '∂' => "\\partial",
        '∇' => "\\nabla",
        '∑' => "\\sum",
        '∏' => "\\prod",
        '∐' => "\\coprod",
        '∫' => "\\int",
        '∬' => "\\iint",
        '∭' => "\\iiint",
        '∮' => "\\oint",
        '√' => "\\surd",
        '⊕' => "\\oplus",
        '⊗' => "\\otimes",
        '⊥' => "\\perp",
        '∥' => "\\parallel",
        '∠' => "\\angle",
        '△' => "\\triangle",
        '°' => "^{\\circ}",
        '′' => "\\prime",
        '″' => "\\prime\\prime",
        '‴' => "\\prime\\prime\\prime",
        // Sets and logic.
        '∈' => "\\in",
        '∉' => "\\notin",
        '∋' => "\\ni",
        '⊂' => "\\subset",
        '⊃' => "\\supset",
        '⊆' => "\\subseteq",
        '⊇' => "\\supseteq",
        '∪' => "\\cup",
        '∩' => "\\cap",
        '∅' => "\\emptyset",
        '∀' => "\\forall",
        '∃' => "\\exists",
        '∄' => "\\nexists",
        '¬' => "\\neg",
        '∧' => "\\wedge",
        '∨' => "\\vee",
        '⋃' => "\\bigcup",
        '⋂' => "\\bigcap",
        'ℝ' => "\\mathbb{R}",
        'ℕ' => "\\mathbb{N}",
        'ℤ' => "\\mathbb{Z}",
        'ℚ' => "\\mathbb{Q}",
        'ℂ' => "\\mathbb{C}",
        'ℏ' => "\\hbar",
        'ℓ' => "\\ell",
        'ℵ' => "\\aleph",
        // Arrows.
        '→' => "\\to",
        '←' => "\\leftarrow",
        '↔' => "\\leftrightarrow",
        '⇒' => "\\Rightarrow",
        '⇐' => "\\Leftarrow",
        '⇔' => "\\Leftrightarrow",
        '↦' => "\\mapsto",
        '↑' => "\\uparrow",
        '↓' => "\\downarrow",
        '⟶' => "\\longrightarrow",
        '⟹' => "\\Longrightarrow",
        // Dots, brackets, accents (as written in <mover>/<munder>).
        '…' => "\\ldots",
        '⋯' => "\\cdots",
        '⋮' => "\\vdots",
        '⋱' => "\\ddots",
        '⟨' | '〈' => "\\langle",
        '⟩' | '〉' => "\\rangle",
        '⌈' => "\\lceil",
        '⌉' => "\\rceil",
        '⌊' => "\\lfloor",
        '⌋' => "\\rfloor",
        '‖' => "\\|",
        '{' => "\\{",
        '}' => "\\}",
        '^' | '\u{302}' => "\\hat{}",
        '~' | '\u{303}' => "\\sim",
        '¯' | '‾' | '\u{305}' => "\\overline{}",
        '\u{332}' => "\\underline{}",
        '\u{20d7}' => "\\vec{}",
        '˙' | '\u{307}' => "\\dot{}",
        '¨' | '\u{308}' => "\\ddot{}",
        'ˇ' => "\\check{}",
        '˘' => "\\breve{}",
        '⏞' => "\\overbrace{}",
        '⏟' => "\\underbrace{}",
        '#' => "\\#",
        '$' => "\\$",
        '%' => "\\%",
        '&' => "\\&",
        '_' => "\\_",
        '\\' => "\\backslash",
        // Invisible operators (function application, times, separator, plus).
        '\u{2061}'..='\u{2064}' => "",
        '\u{a0}' | '\u{2009}' | '\u{200a}' => "\\ ",
        _ => return None,
    })
}

/// The letters of the Greek blocks of Mathematical Alphanumeric Symbols, in their order.
const GREEK: [&str; 58] = [
    "A",
    "B",
    "\\Gamma",
    "\\Delta",
    "E",
    "Z",
    "H",
    "\\Theta",
    "I",
    "K",
    "\\Lambda",
    "M",
    "N",
    "\\Xi",
    "O",
    "\\Pi",
    "P",
    "\\Theta",
    "\\Sigma",
    "T",
    "\\Upsilon",
    "\\Phi",
    "X",
    "\\Psi",
    "\\Omega",
    "\\nabla",
    "\\alpha",
    "\\beta",
    "\\gamma",
    "\\delta",
    "\\varepsilon",
    "\\zeta",
    "\\eta",
    "\\theta",
    "\\iota",
    "\\kappa",
    "\\lambda",
    "\\mu",
    "\\nu",
    "\\xi",
    "o",
    "\\pi",
    "\\rho",
    "\\varsigma",
    "\\sigma",
    "\\tau",
    "\\upsilon",
    "\\varphi",
    "\\chi",
    "\\psi",
    "\\omega",
    "\\partial",
    "\\epsilon",
    "\\vartheta",
    "\\varkappa",
    "\\phi",
    "\\varrho",
    "\\varpi",
];

/// The LaTeX of a Unicode mathematical alphanumeric (U+1D400..U+1D7FF, and the Letterlike
/// Symbols that fill its holes), e.g. U+1D70B (italic pi) as `\pi`, U+1D431 as `\mathbf{x}`.
pub fn alphanumeric(c: char) -> Option<String> {
    let wrap = |font: &str, base: &str| {
        if font.is_empty() {
            base.to_string()
        } else {
            format!("\\{font}{{{base}}}")
        }
    };
    let letter = |i: u32| {
        let i = i as u8;
        char::from(if i < 26 { b'A' + i } else { b'a' + i - 26 }).to_string()
    };
    let cp = c as u32;
    // Latin: 13 alphabets of 52 letters.
    const LATIN: [&str; 13] = [
        "mathbf",
        "",
        "boldsymbol",
        "mathcal",
        "mathcal",
        "mathfrak",
        "mathbb",
        "mathfrak",
        "mathsf",
        "mathsf",
        "mathsf",
        "mathsf",
        "mathtt",
    ];
    if (0x1D400..0x1D400 + 13 * 52).contains(&cp) {
        let off = cp - 0x1D400;
        let (font, i) = (LATIN[(off / 52) as usize], off % 52);
        let base = letter(i);
        return Some(match off / 52 {
            9 | 11 => format!("\\boldsymbol{{\\mathsf{{{base}}}}}"),
            _ => wrap(font, &base),
        });
    }
    match cp {
        0x1D6A4 => return Some("\\imath".into()),
        0x1D6A5 => return Some("\\jmath".into()),
        0x1D6A8..=0x1D7C9 => {
            let off = cp - 0x1D6A8;
            // Bold, italic, bold italic, sans-serif bold, sans-serif bold italic.
            let base = GREEK[(off % 58) as usize];
            return Some(match off / 58 {
                // Italic is how math shows Greek letters anyway.
                1 => base.to_string(),
                _ => format!("\\boldsymbol{{{base}}}"),
            });
        }
        0x1D7CA => return Some("\\boldsymbol{\\digamma}".into()),
        0x1D7CB => return Some("\\boldsymbol{\\digamma}".into()),
        0x1D7CE..=0x1D7FF => {
            let off = cp - 0x1D7CE;
            const DIGITS: [&str; 5] = ["mathbf", "mathbb", "mathsf", "mathsf", "mathtt"];
            let d = char::from(b'0' + (off % 10) as u8).to_string();
            return Some(match off / 10 {
                3 => format!("\\boldsymbol{{\\mathsf{{{d}}}}}"),
                k => wrap(DIGITS[k as usize], &d),
            });
        }
        _ => {}
    }
    // The holes of the block are Letterlike Symbols.
    let (font, base) = match c {
        'ℎ' => ("", "h"),
        'ℬ' => ("mathcal", "B"),
        'ℰ' => ("mathcal", "E"),
        'ℱ' => ("mathcal", "F"),
        'ℋ' => ("mathcal", "H"),
        'ℐ' => ("mathcal", "I"),
        'ℒ' => ("mathcal", "L"),
        'ℳ' => ("mathcal", "M"),
        'ℛ' => ("mathcal", "R"),
        'ℯ' => ("mathcal", "e"),
        'ℊ' => ("mathcal", "g"),
        'ℴ' => ("mathcal", "o"),
        'ℭ' => ("mathfrak", "C"),
        'ℌ' => ("mathfrak", "H"),
        'ℑ' => ("mathfrak", "I"),
        'ℜ' => ("mathfrak", "R"),
        'ℨ' => ("mathfrak", "Z"),
        'ℂ' => ("mathbb", "C"),
        'ℍ' => ("mathbb", "H"),
        'ℕ' => ("mathbb", "N"),
        'ℙ' => ("mathbb", "P"),
        'ℚ' => ("mathbb", "Q"),
        'ℝ' => ("mathbb", "R"),
        'ℤ' => ("mathbb", "Z"),
        _ => return None,
    };
    Some(wrap(font, base))
}

/// A token's text in LaTeX, command names kept apart from letters that follow.
pub fn map_str(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if let Some(m) = alphanumeric(c) {
            super::push_piece(&mut out, &m);
            continue;
        }
        match map_char(c) {
            Some(m) => super::push_piece(&mut out, m),
            None => {
                let mut b = [0u8; 4];
                super::push_piece(&mut out, c.encode_utf8(&mut b));
            }
        }
    }
    out
}
