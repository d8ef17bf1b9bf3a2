//! Planning each section's way (`--via`): the decision for the source ([`super::way::decide`]),
//! then, for the files way, each notebook's folder of section files found through the drive API
//! (a few drive requests per notebook) and each inventory section matched with its file by its
//! place in the notebook (section-group folders, then the section's name). A section whose file is
//! not found goes through the OneNote API, and the plan says why.

use std::collections::HashMap;

use super::events::Event;
use super::plan::{PlanError, Planner};
use super::way::{decide, kind_of_key, lines, Decision};
use crate::graph::sources::account_of_key;
use crate::graph::Caller;
use crate::store::inventory::{Notebook, Section, SectionGroup};
use crate::store::ways::{FilesLeft, SectionWay, ShownWay, Way};

impl Planner<'_> {
    /// Plans the way of every section of `notebooks` under the inventory key `key` (`label` names
    /// it in events), stores it (a dry run only previews it) and returns what of the key's work is
    /// read from section files.
    pub(super) async fn plan_ways(
        &self,
        who: &Caller,
        key: &str,
        label: &str,
        notebooks: &[Notebook],
    ) -> Result<FilesLeft, PlanError> {
        let granted = self.db.granted_scopes(account_of_key(key))?;
        let decision = decide(self.via, kind_of_key(key), granted.as_deref());
        let mut ways = Vec::new();
        for nb in notebooks {
            let sections = sections_of(nb);
            match decision.way {
                Way::Api => ways.extend(sections.into_iter().map(|(_, s)| api(key, s, &decision))),
                Way::Files => {
                    // Interim until the drive client is merged: no section file can be found.
                    let _ = who;
                    let d = Decision {
                        way: Way::Api,
                        reason: "section files cannot be read by this build".to_owned(),
                        missing: None,
                    };
                    ways.extend(sections.into_iter().map(|(_, s)| api(key, s, &d)));
                }
            }
        }
        let names: HashMap<&str, (&str, &str)> = notebooks
            .iter()
            .flat_map(|nb| {
                sections_of(nb)
                    .into_iter()
                    .map(move |(_, s)| (s.id.as_str(), (s.name.as_str(), nb.name.as_str())))
            })
            .collect();
        let shown: Vec<ShownWay> = ways
            .iter()
            .map(|w| {
                let (section, notebook) = names
                    .get(w.section_id.as_str())
                    .copied()
                    .unwrap_or((w.section_id.as_str(), ""));
                ShownWay {
                    way: w.clone(),
                    section: section.to_owned(),
                    notebook: notebook.to_owned(),
                }
            })
            .collect();
        for line in lines(&shown) {
            self.observer.event(Event::Note(format!("{label}: {line}")));
        }
        if self.owner.is_none() {
            return Ok(self.db.preview_files_left(key, &ways)?);
        }
        self.db.save_section_ways(&ways, self.clock.now_ms())?;
        Ok(self.db.files_left(key)?)
    }
}

/// A section planned through the API.
fn api(key: &str, s: &Section, d: &Decision) -> SectionWay {
    SectionWay {
        key: key.to_owned(),
        section_id: s.id.clone(),
        way: Way::Api,
        reason: d.reason.clone(),
        file: None,
        fell_back: None,
        pages_by_api: 0,
    }
}

/// Every section of a notebook with its place in it: the section-group names from the notebook
/// down, then its own name. Walked with an explicit stack: nesting comes from the service.
pub(super) fn sections_of(nb: &Notebook) -> Vec<(Vec<String>, &Section)> {
    let mut out = Vec::new();
    let mut stack: Vec<(Vec<String>, &[SectionGroup], &[Section])> =
        vec![(Vec::new(), &nb.section_groups, &nb.sections)];
    while let Some((trail, groups, sections)) = stack.pop() {
        for s in sections {
            let mut path = trail.clone();
            path.push(s.name.clone());
            out.push((path, s));
        }
        for g in groups.iter().rev() {
            let mut t = trail.clone();
            t.push(g.name.clone());
            stack.push((t, &g.section_groups, &g.sections));
        }
    }
    out
}
