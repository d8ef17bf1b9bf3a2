//! The per-page list of what could only be approximated.

use serde::Serialize;

/// One kind of approximation on a page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Approximation {
    /// The source element or feature (e.g. `<sup>`, `data-tag="idea"`).
    pub element: String,
    /// How many times it occurred.
    pub count: usize,
    /// What was done instead.
    pub action: String,
}

/// Approximations in order of first occurrence; serialises as a plain list.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct Report {
    /// The entries.
    pub items: Vec<Approximation>,
}

impl Report {
    /// Counts one occurrence of `element` handled by `action`.
    pub fn add(&mut self, element: impl AsRef<str>, action: &str) {
        let element = element.as_ref();
        match self
            .items
            .iter_mut()
            .find(|a| a.element == element && a.action == action)
        {
            Some(a) => a.count += 1,
            None => self.items.push(Approximation {
                element: element.to_string(),
                count: 1,
                action: action.to_string(),
            }),
        }
    }

    /// Whether nothing was approximated.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_element_and_action() {
        let mut r = Report::default();
        r.add("<sup>", "text kept");
        r.add("<sub>", "text kept");
        r.add("<sup>", "text kept");
        assert_eq!(r.items.len(), 2);
        assert_eq!(r.items[0].count, 2);
        assert_eq!(
            serde_json::to_value(&r).unwrap()[1]["element"],
            serde_json::json!("<sub>")
        );
    }
}
