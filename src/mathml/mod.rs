//! MathML -> LaTeX (placeholder while writing)
