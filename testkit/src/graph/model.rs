//! In-memory OneNote content for the Graph test server: flat tables with parent ids, so moves and
//! deletes are a field change, as they are for the real service's ids.

use std::collections::HashMap;

use chrono::{DateTime, Utc};

/// A notebook.
#[derive(Clone, Debug, PartialEq)]
pub struct Notebook {
    /// Graph id.
    pub id: String,
    /// `displayName`.
    pub display_name: String,
    /// `createdDateTime`.
    pub created: DateTime<Utc>,
    /// `lastModifiedDateTime`.
    pub modified: DateTime<Utc>,
    /// `isDefault`.
    pub is_default: bool,
}

/// A section group, inside a notebook or another section group.
#[derive(Clone, Debug, PartialEq)]
pub struct SectionGroup {
    /// Graph id.
    pub id: String,
    /// `displayName`.
    pub display_name: String,
    /// `createdDateTime`.
    pub created: DateTime<Utc>,
    /// `lastModifiedDateTime`.
    pub modified: DateTime<Utc>,
    /// The notebook it belongs to (at any depth).
    pub notebook_id: String,
    /// The section group directly above it, if any.
    pub parent_group: Option<String>,
}

/// A section.
#[derive(Clone, Debug, PartialEq)]
pub struct Section {
    /// Graph id.
    pub id: String,
    /// `displayName`.
    pub display_name: String,
    /// `createdDateTime`.
    pub created: DateTime<Utc>,
    /// `lastModifiedDateTime`.
    pub modified: DateTime<Utc>,
    /// The notebook it belongs to (at any depth).
    pub notebook_id: String,
    /// The section group directly above it; `None` for a top-level section.
    pub parent_group: Option<String>,
    /// `isDefault`.
    pub is_default: bool,
}

/// A page: metadata plus what the generator needs to render its HTML on request.
#[derive(Clone, Debug, PartialEq)]
pub struct Page {
    /// Graph id.
    pub id: String,
    /// `title`.
    pub title: String,
    /// `createdDateTime`.
    pub created: DateTime<Utc>,
    /// `lastModifiedDateTime`.
    pub modified: DateTime<Utc>,
    /// The section it is in.
    pub section_id: String,
    /// Indent level 0..=2 (subpages).
    pub level: u8,
    /// Position within the section.
    pub order: u32,
    /// Seed of the page body, so the HTML is the same on every request.
    pub content_seed: u64,
    /// Resource ids the body refers to, in document order.
    pub resources: Vec<String>,
    /// Pages this one links to with `onenote:` links.
    pub links: Vec<String>,
    /// The text of each link in `links` (missing: "the linked page").
    pub link_texts: Vec<String>,
    /// The body also holds a `mailto:` link.
    pub mail_link: bool,
    /// The body also holds a fourth-level heading (`<h4>`).
    pub fourth_heading: bool,
    /// The body also holds this many more one-line paragraphs.
    pub extra_paragraphs: usize,
}

/// What a resource is to the page that holds it.
#[derive(Clone, Debug, PartialEq)]
pub enum ResourceKind {
    /// An `img` (width/height in CSS px as OneNote reports them).
    Image {
        /// `width`.
        width: u32,
        /// `height`.
        height: u32,
    },
    /// An `object` attachment.
    Attachment {
        /// `data-attachment`.
        file_name: String,
    },
}

/// A binary resource. Its bytes are computed from `seed` on demand, never stored.
#[derive(Clone, Debug, PartialEq)]
pub struct Resource {
    /// Graph id.
    pub id: String,
    /// MIME type (`data-src-type` / `type`).
    pub mime: String,
    /// Image or attachment.
    pub kind: ResourceKind,
    /// Length in bytes.
    pub len: u64,
    /// Seed of the bytes.
    pub seed: u64,
}

/// Everything one user owns.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct UserNotes {
    /// Notebooks.
    pub notebooks: Vec<Notebook>,
    /// Section groups at every depth.
    pub section_groups: Vec<SectionGroup>,
    /// Sections at every depth.
    pub sections: Vec<Section>,
    /// Pages of every section.
    pub pages: Vec<Page>,
    /// Resources by id.
    pub resources: HashMap<String, Resource>,
    /// Pages a move gave a new id (the `renumber_moved_pages` field switch): their id now → the
    /// GUID their `onenote:` links kept (the one their first id gave).
    pub kept_guids: HashMap<String, String>,
}

/// Why a mutation could not be applied.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ModelError {
    /// No such item for this user.
    #[error("no {kind} with id {id} for user {user}")]
    NotFound {
        /// "page", "section", ...
        kind: &'static str,
        /// The id asked for.
        id: String,
        /// The user.
        user: String,
    },
    /// The change would leave the notebooks inconsistent (a section group of another notebook, a
    /// level OneNote does not have, a group moved into itself).
    #[error("cannot {what} for user {user}")]
    Invalid {
        /// What was asked and why it cannot be.
        what: String,
        /// The user.
        user: String,
    },
}

impl UserNotes {
    /// A notebook by id.
    pub fn notebook(&self, id: &str) -> Option<&Notebook> {
        self.notebooks.iter().find(|n| n.id == id)
    }

    /// A section group by id.
    pub fn section_group(&self, id: &str) -> Option<&SectionGroup> {
        self.section_groups.iter().find(|g| g.id == id)
    }

    /// A section by id.
    pub fn section(&self, id: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.id == id)
    }

    /// A page by id.
    pub fn page(&self, id: &str) -> Option<&Page> {
        self.pages.iter().find(|p| p.id == id)
    }

    /// Sections directly in a notebook (`parent_group` = None) or directly in a section group,
    /// sorted by name as the service does.
    pub fn sections_in(&self, notebook: Option<&str>, group: Option<&str>) -> Vec<&Section> {
        let mut v: Vec<&Section> = self
            .sections
            .iter()
            .filter(|s| match (notebook, group) {
                (Some(nb), None) => s.notebook_id == nb && s.parent_group.is_none(),
                (_, Some(g)) => s.parent_group.as_deref() == Some(g),
                (None, None) => true,
            })
            .collect();
        v.sort_by(|a, b| a.display_name.cmp(&b.display_name));
        v
    }

    /// Section groups directly in a notebook or a section group, sorted by name.
    pub fn groups_in(&self, notebook: Option<&str>, group: Option<&str>) -> Vec<&SectionGroup> {
        let mut v: Vec<&SectionGroup> = self
            .section_groups
            .iter()
            .filter(|g| match (notebook, group) {
                (Some(nb), None) => g.notebook_id == nb && g.parent_group.is_none(),
                (_, Some(p)) => g.parent_group.as_deref() == Some(p),
                (None, None) => true,
            })
            .collect();
        v.sort_by(|a, b| a.display_name.cmp(&b.display_name));
        v
    }

    /// Pages of a section in the service's default order (`lastModifiedDateTime desc`).
    pub fn pages_in(&self, section: &str) -> Vec<&Page> {
        let mut v: Vec<&Page> = self
            .pages
            .iter()
            .filter(|p| p.section_id == section)
            .collect();
        v.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.order.cmp(&b.order)));
        v
    }

    /// The owner edits the page of `section` modified longest ago: it becomes the newest.
    pub fn touch_oldest_page(&mut self, section: &str, now: DateTime<Utc>) {
        if let Some(p) = self
            .pages
            .iter_mut()
            .filter(|p| p.section_id == section)
            .min_by(|a, b| a.modified.cmp(&b.modified).then(b.order.cmp(&a.order)))
        {
            p.modified = now.max(p.modified + chrono::Duration::milliseconds(1));
        }
    }

    /// Notebooks sorted by name.
    pub fn notebooks_sorted(&self) -> Vec<&Notebook> {
        let mut v: Vec<&Notebook> = self.notebooks.iter().collect();
        v.sort_by(|a, b| a.display_name.cmp(&b.display_name));
        v
    }

    /// Appends another generated set (a second notebook for the same user, say).
    pub fn merge(&mut self, other: UserNotes) {
        self.notebooks.extend(other.notebooks);
        self.section_groups.extend(other.section_groups);
        self.sections.extend(other.sections);
        self.pages.extend(other.pages);
        self.resources.extend(other.resources);
        self.kept_guids.extend(other.kept_guids);
    }

    /// The GUID `onenote:` links use for page `id`: the one it kept through a move, or its id's.
    pub fn client_guid(&self, id: &str) -> String {
        self.kept_guids
            .get(id)
            .cloned()
            .unwrap_or_else(|| crate::graph::routes::guid_of(id))
    }

    /// Gives each page that is now in another section than `before` says a new id, as the real
    /// service numbers pages (`0-<32 hex>!<n>-<section id without its 0->`): the old id is gone,
    /// the page keeps its `onenote:` GUID and created time. Returns `(old id, new id)` pairs.
    pub fn renumber_moved(&mut self, before: &HashMap<String, String>) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for i in 0..self.pages.len() {
            let (old, section) = (self.pages[i].id.clone(), self.pages[i].section_id.clone());
            if before.get(&old).is_none_or(|s| *s == section) {
                continue;
            }
            let guid = self.client_guid(&old);
            // FNV-1a over the old id and the new section: a new hex, the same on every run.
            let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
            for b in old.bytes().chain(section.bytes()) {
                h ^= u128::from(b);
                h = h.wrapping_mul(0x0000_0000_0100_0000_0000_0000_0000_013b);
            }
            let tail = section.split_once('-').map_or(section.as_str(), |(_, t)| t);
            let new = format!("0-{h:032x}!{}-{tail}", 1 + i % 250);
            self.kept_guids.remove(&old);
            self.kept_guids.insert(new.clone(), guid);
            self.pages[i].id = new.clone();
            out.push((old, new));
        }
        out
    }

    /// The latest modification time anywhere, so mutations move time forward deterministically.
    fn next_stamp(&self) -> DateTime<Utc> {
        let latest = self
            .pages
            .iter()
            .map(|p| p.modified)
            .chain(self.sections.iter().map(|s| s.modified))
            .chain(self.section_groups.iter().map(|g| g.modified))
            .chain(self.notebooks.iter().map(|n| n.modified))
            .max()
            .unwrap_or_default();
        latest + chrono::Duration::minutes(1)
    }

    fn not_found(kind: &'static str, id: &str, user: &str) -> ModelError {
        ModelError::NotFound {
            kind,
            id: id.to_owned(),
            user: user.to_owned(),
        }
    }

    /// Renames a page (its HTML `title` follows) and bumps its modification time.
    pub fn rename_page(&mut self, user: &str, id: &str, title: &str) -> Result<(), ModelError> {
        let stamp = self.next_stamp();
        rename_in(&mut self.pages, "page", id, title, stamp, user)
    }

    /// Renames a section.
    pub fn rename_section(&mut self, user: &str, id: &str, name: &str) -> Result<(), ModelError> {
        let stamp = self.next_stamp();
        rename_in(&mut self.sections, "section", id, name, stamp, user)
    }

    /// Deletes a page and the resources only it used.
    pub fn delete_page(&mut self, user: &str, id: &str) -> Result<(), ModelError> {
        let i = self
            .pages
            .iter()
            .position(|p| p.id == id)
            .ok_or_else(|| Self::not_found("page", id, user))?;
        let page = self.pages.remove(i);
        for r in page.resources {
            self.resources.remove(&r);
        }
        Ok(())
    }

    /// Deletes a section with its pages.
    pub fn delete_section(&mut self, user: &str, id: &str) -> Result<(), ModelError> {
        if self.section(id).is_none() {
            return Err(Self::not_found("section", id, user));
        }
        let doomed: Vec<String> = self
            .pages
            .iter()
            .filter(|p| p.section_id == id)
            .map(|p| p.id.clone())
            .collect();
        for p in doomed {
            self.delete_page(user, &p)?;
        }
        self.sections.retain(|s| s.id != id);
        Ok(())
    }

    /// Moves a page to the end of another section (same id; the server's `renumber_moved_pages`
    /// switch gives it a new one, as the real service does).
    pub fn move_page(&mut self, user: &str, id: &str, to_section: &str) -> Result<(), ModelError> {
        if self.section(to_section).is_none() {
            return Err(Self::not_found("section", to_section, user));
        }
        let next_order = self
            .pages
            .iter()
            .filter(|p| p.section_id == to_section)
            .map(|p| p.order + 1)
            .max()
            .unwrap_or(0);
        let stamp = self.next_stamp();
        let p = self
            .pages
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or_else(|| Self::not_found("page", id, user))?;
        p.section_id = to_section.to_owned();
        p.order = next_order;
        p.level = 0;
        p.modified = stamp;
        Ok(())
    }

    /// Moves a section into a notebook's top level (`to_group` None) or into a section group.
    pub fn move_section(
        &mut self,
        user: &str,
        id: &str,
        to_notebook: &str,
        to_group: Option<&str>,
    ) -> Result<(), ModelError> {
        if self.notebook(to_notebook).is_none() {
            return Err(Self::not_found("notebook", to_notebook, user));
        }
        if let Some(g) = to_group {
            let group = self
                .section_group(g)
                .ok_or_else(|| Self::not_found("section group", g, user))?;
            if group.notebook_id != to_notebook {
                return Err(ModelError::Invalid {
                    what: format!(
                        "move section {id} into group {g}: the group is in notebook {}, not {to_notebook}",
                        group.notebook_id
                    ),
                    user: user.to_owned(),
                });
            }
        }
        let stamp = self.next_stamp();
        let s = self
            .sections
            .iter_mut()
            .find(|s| s.id == id)
            .ok_or_else(|| Self::not_found("section", id, user))?;
        s.notebook_id = to_notebook.to_owned();
        s.parent_group = to_group.map(str::to_owned);
        s.modified = stamp;
        Ok(())
    }

    /// The owner edits a page's content: its body is generated from a new seed (same title,
    /// resources and links), and it is the newest change. A page of a notebook served from files
    /// keeps its file's HTML: save the section anew with `GraphServer::replace_section_file`.
    pub fn edit_page_content(&mut self, user: &str, id: &str) -> Result<(), ModelError> {
        let stamp = self.next_stamp();
        let p = self
            .pages
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or_else(|| Self::not_found("page", id, user))?;
        // A fixed odd multiplier and increment: deterministic, and never the same seed again.
        p.content_seed = p
            .content_seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        p.modified = stamp;
        Ok(())
    }

    /// The owner drags a page to position `index` (0: first; past the end: last) among its
    /// section's pages by `order`; the section's pages are numbered 0.. again. OneNote keeps the
    /// order in the section, so the section is the newest change and the pages' own
    /// `lastModifiedDateTime` stays (an assumption: Graph's documentation says nothing of it, and
    /// a client must then find reorders in `order`, not in the pages' times).
    pub fn reorder_page(&mut self, user: &str, id: &str, index: usize) -> Result<(), ModelError> {
        let section = self
            .page(id)
            .ok_or_else(|| Self::not_found("page", id, user))?
            .section_id
            .clone();
        let mut ids: Vec<(u32, String)> = self
            .pages
            .iter()
            .filter(|p| p.section_id == section)
            .map(|p| (p.order, p.id.clone()))
            .collect();
        ids.sort();
        let mut ids: Vec<String> = ids.into_iter().map(|(_, i)| i).collect();
        ids.retain(|i| i != id);
        ids.insert(index.min(ids.len()), id.to_owned());
        for p in self.pages.iter_mut().filter(|p| p.section_id == section) {
            p.order = ids.iter().position(|i| *i == p.id).unwrap_or(0) as u32;
        }
        let stamp = self.next_stamp();
        if let Some(s) = self.sections.iter_mut().find(|s| s.id == section) {
            s.modified = stamp;
        }
        Ok(())
    }

    /// The owner indents or outdents a page: its `level` becomes `level` (0..=2, as OneNote's
    /// subpages go), and it is the newest change.
    pub fn set_page_level(&mut self, user: &str, id: &str, level: u8) -> Result<(), ModelError> {
        if level > 2 {
            return Err(ModelError::Invalid {
                what: format!("set page {id} to level {level}: OneNote has levels 0 to 2"),
                user: user.to_owned(),
            });
        }
        let stamp = self.next_stamp();
        let p = self
            .pages
            .iter_mut()
            .find(|p| p.id == id)
            .ok_or_else(|| Self::not_found("page", id, user))?;
        p.level = level;
        p.modified = stamp;
        Ok(())
    }

    /// Renames a notebook.
    pub fn rename_notebook(&mut self, user: &str, id: &str, name: &str) -> Result<(), ModelError> {
        let stamp = self.next_stamp();
        rename_in(&mut self.notebooks, "notebook", id, name, stamp, user)
    }

    /// Renames a section group.
    pub fn rename_section_group(
        &mut self,
        user: &str,
        id: &str,
        name: &str,
    ) -> Result<(), ModelError> {
        let stamp = self.next_stamp();
        rename_in(
            &mut self.section_groups,
            "section group",
            id,
            name,
            stamp,
            user,
        )
    }

    /// Section group `id` and every group below it, at any depth.
    fn groups_below(&self, id: &str) -> Vec<String> {
        let mut out = vec![id.to_owned()];
        let mut i = 0;
        while i < out.len() {
            let cur = out[i].clone();
            out.extend(
                self.section_groups
                    .iter()
                    .filter(|g| g.parent_group.as_deref() == Some(cur.as_str()))
                    .map(|g| g.id.clone()),
            );
            i += 1;
        }
        out
    }

    /// Deletes every section `doomed` picks, with its pages.
    fn delete_sections_where(
        &mut self,
        user: &str,
        doomed: impl Fn(&Section) -> bool,
    ) -> Result<(), ModelError> {
        let ids: Vec<String> = self
            .sections
            .iter()
            .filter(|s| doomed(s))
            .map(|s| s.id.clone())
            .collect();
        for s in ids {
            self.delete_section(user, &s)?;
        }
        Ok(())
    }

    /// Deletes a section group with everything in it: its groups at every depth, their sections
    /// and those sections' pages.
    pub fn delete_section_group(&mut self, user: &str, id: &str) -> Result<(), ModelError> {
        if self.section_group(id).is_none() {
            return Err(Self::not_found("section group", id, user));
        }
        let groups = self.groups_below(id);
        self.delete_sections_where(user, |s| {
            s.parent_group.as_ref().is_some_and(|g| groups.contains(g))
        })?;
        self.section_groups.retain(|g| !groups.contains(&g.id));
        Ok(())
    }

    /// Deletes a notebook with all its section groups, sections and pages.
    pub fn delete_notebook(&mut self, user: &str, id: &str) -> Result<(), ModelError> {
        if self.notebook(id).is_none() {
            return Err(Self::not_found("notebook", id, user));
        }
        self.delete_sections_where(user, |s| s.notebook_id == id)?;
        self.section_groups.retain(|g| g.notebook_id != id);
        self.notebooks.retain(|n| n.id != id);
        Ok(())
    }

    /// Adds a page (built by the generator) to its section, stamped as the newest change.
    pub fn add_page(
        &mut self,
        user: &str,
        mut page: Page,
        resources: Vec<Resource>,
    ) -> Result<(), ModelError> {
        if self.section(&page.section_id).is_none() {
            return Err(Self::not_found("section", &page.section_id, user));
        }
        let stamp = self.next_stamp();
        page.created = stamp;
        page.modified = stamp;
        for r in resources {
            self.resources.insert(r.id.clone(), r);
        }
        self.pages.push(page);
        Ok(())
    }
}

/// What a rename changes: a notebook's, group's or section's `displayName`, a page's `title`, and
/// the item's `lastModifiedDateTime`.
trait Renamed {
    fn id(&self) -> &str;
    fn rename(&mut self, name: &str, stamp: DateTime<Utc>);
}

macro_rules! renamed {
    ($t:ty, $field:ident) => {
        impl Renamed for $t {
            fn id(&self) -> &str {
                &self.id
            }
            fn rename(&mut self, name: &str, stamp: DateTime<Utc>) {
                self.$field = name.to_owned();
                self.modified = stamp;
            }
        }
    };
}

renamed!(Notebook, display_name);
renamed!(SectionGroup, display_name);
renamed!(Section, display_name);
renamed!(Page, title);

/// Renames item `id` of `items` (a `kind`) at `stamp`.
fn rename_in<T: Renamed>(
    items: &mut [T],
    kind: &'static str,
    id: &str,
    name: &str,
    stamp: DateTime<Utc>,
    user: &str,
) -> Result<(), ModelError> {
    let item = items
        .iter_mut()
        .find(|i| i.id() == id)
        .ok_or_else(|| UserNotes::not_found(kind, id, user))?;
    item.rename(name, stamp);
    Ok(())
}
