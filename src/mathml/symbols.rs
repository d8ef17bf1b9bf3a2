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

/// A token's text in LaTeX, command names kept apart from letters that follow.
pub fn map_str(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
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
