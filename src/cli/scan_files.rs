//! `notebridge scan --from PATH`: what OneNote's own files hold, read offline (no account, no
//! network, no database) and printed as `scan` prints an account's notebooks, with the sections
//! that cannot be read and their reasons. Nothing is stored: the files are their own inventory,
//! and `migrate --from` reads them again when it plans, so a stored copy would only go stale.

use std::collections::HashMap;

use serde_json::{json, Value};

use super::output::Printer;
use super::tree::{print_children, print_tree};
use crate::cli::exit::{CliResult, Exit, Failure};
use crate::imports::{self, Inventory};
use crate::store::inventory::{totals, Notebook, Section, SectionGroup};

use super::scan::ScanArgs;

/// Runs `scan --from`.
pub fn run(printer: &Printer, args: ScanArgs) -> CliResult<Exit> {
    let given = args.from.expect("dispatched with --from");
    let path = imports::absolute(&given)?;
    let read = super::runtime()?.block_on(imports::read(&path))?;
    let inv = Inventory::of(&read);
    let (notebooks, loose): (Vec<_>, Vec<_>) = inv
        .notebooks
        .iter()
        .cloned()
        .partition(|n| n.id != imports::LOOSE_NOTEBOOK);
    let sections: Vec<Section> = loose.into_iter().flat_map(|n| n.sections).collect();
    let mut t = totals(&notebooks);
    t.sections += sections.len();
    t.pages += sections.iter().map(|s| s.pages.len()).sum::<usize>();
    let shown = path.display().to_string();
    if printer.json {
        let mut doc = json!({
            "source": {"kind": "files", "path": shown},
            "notebooks": notebooks,
            "totals": t,
            "unreadable_sections": inv.problems.iter().map(|p| json!({
                "id": p.section_id, "name": p.name, "reason": p.reason,
            })).collect::<Vec<_>>(),
            "recycle_bin": read.recycle_bin.as_ref().map(|b| b.display().to_string()),
            "missing_folders": read.missing_folders.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        });
        if !sections.is_empty() {
            doc["sections"] = serde_json::to_value(&sections).map_err(Failure::unexpected)?;
        }
        mark_problems(&mut doc, &inv);
        printer.json_line(&doc);
    } else {
        let (notebooks, sections) = mark_damaged_pages(&inv, notebooks, sections);
        for nb in &notebooks {
            print_tree(printer, nb);
        }
        if !sections.is_empty() {
            print_children(printer, &[], &sections, "");
        }
        printer.out(format!(
            "{} notebooks, {} section groups, {} sections, {} pages",
            t.notebooks, t.section_groups, t.sections, t.pages
        ));
    }
    printer.note(format!(
        "read {shown} (OneNote's own files; nothing was stored)"
    ));
    if let Some(bin) = &read.recycle_bin {
        printer.note(imports::recycle_bin_note(bin));
    }
    for f in &read.missing_folders {
        printer.note(crate::engine::plan::missing_folder_note(f));
    }
    for t in &read.unreadable_tocs {
        printer.note(crate::engine::plan::unreadable_toc_note(t));
    }
    for p in &inv.damaged_pages {
        printer.note(format!("unreadable {p}"));
    }
    for p in &inv.problems {
        printer.problem(p.to_string());
    }
    Ok(if inv.problems.is_empty() {
        Exit::Done
    } else {
        Exit::SomeFailed
    })
}

/// Puts each unreadable section's and damaged page's reason beside it in the document
/// (`"problem"`), walking the tree with an explicit stack (the depth is the files').
fn mark_problems(doc: &mut Value, inv: &Inventory) {
    let reasons: HashMap<&str, &str> = inv
        .problems
        .iter()
        .map(|p| (p.section_id.as_str(), p.reason.as_str()))
        .collect();
    let pages: HashMap<(&str, &str), &str> = inv
        .damaged_pages
        .iter()
        .map(|p| {
            (
                (p.section_id.as_str(), p.page_id.as_str()),
                p.reason.as_str(),
            )
        })
        .collect();
    if reasons.is_empty() && pages.is_empty() {
        return;
    }
    let mut stack: Vec<&mut Value> = vec![doc];
    while let Some(v) = stack.pop() {
        match v {
            Value::Object(o) => {
                let is_section = o.contains_key("pages");
                if is_section {
                    let id = o
                        .get("id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned();
                    if let Some(r) = reasons.get(id.as_str()) {
                        o.insert("problem".into(), Value::String((*r).to_owned()));
                    }
                    let listed = o.get_mut("pages").and_then(Value::as_array_mut);
                    for page in listed.into_iter().flatten() {
                        let pid = page.get("id").and_then(Value::as_str).unwrap_or_default();
                        if let Some(r) = pages.get(&(id.as_str(), pid)) {
                            page["problem"] = Value::String((*r).to_owned());
                        }
                    }
                }
                for (k, child) in o.iter_mut() {
                    if matches!(k.as_str(), "notebooks" | "section_groups" | "sections") {
                        stack.push(child);
                    }
                }
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            _ => {}
        }
    }
}

/// The tree as the human listing shows it: a section with pages that cannot be read says how
/// many and which beside its name (the tree lists sections, not pages). Explicit stack, as above.
fn mark_damaged_pages(
    inv: &Inventory,
    mut notebooks: Vec<Notebook>,
    mut sections: Vec<Section>,
) -> (Vec<Notebook>, Vec<Section>) {
    if inv.damaged_pages.is_empty() {
        return (notebooks, sections);
    }
    let mark = |s: &mut Section| {
        let bad: Vec<String> = inv
            .damaged_pages
            .iter()
            .filter(|p| p.section_id == s.id)
            .map(|p| format!("{:?}", p.title))
            .collect();
        if !bad.is_empty() {
            let n = bad.len();
            let pages = if n == 1 { "page" } else { "pages" };
            s.name = format!(
                "{}  [{n} {pages} cannot be read: {}]",
                s.name,
                bad.join(", ")
            );
        }
    };
    let mut groups: Vec<&mut SectionGroup> = Vec::new();
    for nb in &mut notebooks {
        nb.sections.iter_mut().for_each(mark);
        groups.extend(nb.section_groups.iter_mut());
    }
    while let Some(g) = groups.pop() {
        g.sections.iter_mut().for_each(mark);
        groups.extend(g.section_groups.iter_mut());
    }
    sections.iter_mut().for_each(mark);
    (notebooks, sections)
}
