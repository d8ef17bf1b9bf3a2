//! The inventory as `scan` prints it: each notebook a tree of its section groups and sections,
//! with page counts and when each was last changed.

use super::output::Printer;
use crate::store::inventory::{Notebook, Section, SectionGroup};

/// Prints `nb` and everything under it.
pub(super) fn print_tree(printer: &Printer, nb: &Notebook) {
    let pages = count_pages(&nb.section_groups, &nb.sections);
    printer.out(format!(
        "{}  ({pages} pages{})",
        nb.name,
        modified(&nb.last_modified)
    ));
    print_children(printer, &nb.section_groups, &nb.sections, "");
}

pub(super) fn print_children(
    printer: &Printer,
    groups: &[SectionGroup],
    sections: &[Section],
    indent: &str,
) {
    let n = groups.len() + sections.len();
    let mut i = 0;
    for g in groups {
        i += 1;
        let (branch, next) = if i == n {
            ("└── ", "    ")
        } else {
            ("├── ", "│   ")
        };
        let pages = count_pages(&g.section_groups, &g.sections);
        printer.out(format!(
            "{indent}{branch}{}/  ({pages} pages{})",
            g.name,
            modified(&g.last_modified)
        ));
        print_children(
            printer,
            &g.section_groups,
            &g.sections,
            &format!("{indent}{next}"),
        );
    }
    for s in sections {
        i += 1;
        let branch = if i == n { "└── " } else { "├── " };
        let last = s.pages.iter().filter_map(|p| p.last_modified.clone()).max();
        printer.out(format!(
            "{indent}{branch}{}  ({} pages{})",
            s.name,
            s.pages.len(),
            modified(&last.or_else(|| s.last_modified.clone()))
        ));
    }
}

fn count_pages(groups: &[SectionGroup], sections: &[Section]) -> usize {
    sections.iter().map(|s| s.pages.len()).sum::<usize>()
        + groups
            .iter()
            .map(|g| count_pages(&g.section_groups, &g.sections))
            .sum::<usize>()
}

fn modified(d: &Option<String>) -> String {
    match d {
        Some(d) => format!(", last modified {}", d.get(..10).unwrap_or(d)),
        None => String::new(),
    }
}
