//! `--via auto|api|files`: which way a source's pages are read. `files` downloads each section's
//! `.one` file through the drive API and reads it locally (a few drive requests per section);
//! `api` reads page by page through the OneNote API (held to its hour window). `auto` takes the
//! files where the account's token carries the file permission the notebook's drive needs:
//! `Files.Read` (or more) for the account's own OneDrive, `Files.Read.All` or `Sites.Read.All` for
//! a group's or site's library (<https://learn.microsoft.com/en-us/graph/api/driveitem-get-content>,
//! <https://learn.microsoft.com/en-us/graph/permissions-reference>).

use crate::auth::granted_holds;
use crate::graph::sources::{source_of_key, SourceKind};
use crate::store::ways::{ShownWay, Way};

/// How `migrate` reads page content (`--via`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Via {
    /// Files where the token allows it, else the API.
    #[default]
    Auto,
    /// The OneNote API only.
    Api,
    /// Section files, falling back to the API per section.
    Files,
}

impl Via {
    /// Reads `auto`, `api` or `files`.
    pub fn parse(s: &str) -> Result<Via, String> {
        match s {
            "auto" => Ok(Via::Auto),
            "api" => Ok(Via::Api),
            "files" => Ok(Via::Files),
            other => Err(format!(
                "{other:?} is not a way to read pages; one of: auto, api, files"
            )),
        }
    }

    /// As the flag spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Via::Auto => "auto",
            Via::Api => "api",
            Via::Files => "files",
        }
    }
}

/// The way a source's sections take, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// The way.
    pub way: Way,
    /// Why, for the plan, `status`, `report` and `doctor`.
    pub reason: String,
    /// The permission whose absence forced the API (`auto` without it): what adding it would
    /// change.
    pub missing: Option<&'static str>,
}

/// The permissions that read a drive of this kind, the one to ask for first.
pub fn file_permissions(kind: SourceKind) -> &'static [&'static str] {
    match kind {
        // Any file permission of the user's own covers their OneDrive.
        SourceKind::Personal => &[
            "Files.Read",
            "Files.ReadWrite",
            "Files.Read.All",
            "Files.ReadWrite.All",
        ],
        // A group's or site's library is not the user's own: only the `.All` permissions reach
        // it (Files.Read covers the signed-in user's files alone).
        SourceKind::Group | SourceKind::Site => &[
            "Files.Read.All",
            "Sites.Read.All",
            "Files.ReadWrite.All",
            "Sites.ReadWrite.All",
        ],
    }
}

/// The kind of source an inventory key names (an account's own notebooks, a group's or a site's).
pub fn kind_of_key(key: &str) -> SourceKind {
    source_of_key(key).map_or(SourceKind::Personal, |(k, _)| k)
}

/// The way for a source of `kind` under `via`, with the permissions the account's token was
/// granted (`None`: not known yet).
pub fn decide(via: Via, kind: SourceKind, granted: Option<&[String]>) -> Decision {
    let wanted = file_permissions(kind);
    match via {
        Via::Api => Decision {
            way: Way::Api,
            reason: "--via api".to_owned(),
            missing: None,
        },
        Via::Files => Decision {
            way: Way::Files,
            reason: "--via files".to_owned(),
            missing: None,
        },
        Via::Auto => match granted {
            None => Decision {
                way: Way::Api,
                reason: "the token's permissions are not known yet (they are recorded at the \
                         next sign-in or token refresh)"
                    .to_owned(),
                missing: None,
            },
            Some(g) => match wanted.iter().find(|p| granted_holds(g, p)) {
                Some(p) => Decision {
                    way: Way::Files,
                    reason: format!("the token carries {p}"),
                    missing: None,
                },
                None => Decision {
                    way: Way::Api,
                    reason: format!(
                        "the token lacks {} (needed to read {} section files)",
                        wanted[0],
                        match kind {
                            SourceKind::Personal => "the account's own",
                            SourceKind::Group => "a group's",
                            SourceKind::Site => "a site's",
                        }
                    ),
                    missing: Some(wanted[0]),
                },
            },
        },
    }
}

/// The sections' ways for a person: one line per way and reason ("3 sections from their files
/// (the token carries Files.Read)"), sections that fell back to the API grouped by their reason
/// (named, the first few), then each section some of whose pages were not in its file.
pub fn lines(ways: &[ShownWay]) -> Vec<String> {
    // (fell back, way, reason) -> the sections' names, in order of first appearance.
    type Group<'a> = ((bool, Way, &'a str), Vec<&'a str>);
    let mut groups: Vec<Group<'_>> = Vec::new();
    for w in ways {
        let key = match &w.way.fell_back {
            Some(why) => (true, Way::Api, why.as_str()),
            None => (false, w.way.way, w.way.reason.as_str()),
        };
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, names)) => names.push(&w.section),
            None => groups.push((key, vec![&w.section])),
        }
    }
    let mut out: Vec<String> = groups
        .into_iter()
        .map(|((fell, way, reason), names)| {
            let n = names.len();
            if fell {
                let mut shown: Vec<String> =
                    names.iter().take(3).map(|s| format!("{s:?}")).collect();
                if n > 3 {
                    shown.push(format!("{} more", n - 3));
                }
                return format!(
                    "{n} section{} through the OneNote API instead of {} file{}: {reason} ({})",
                    plural(n),
                    if n == 1 { "its" } else { "their" },
                    plural(n),
                    shown.join(", ")
                );
            }
            let what = match way {
                Way::Files => "from their files",
                Way::Api => "through the OneNote API",
            };
            format!("{n} section{} {what} ({reason})", plural(n))
        })
        .collect();
    for w in ways {
        if w.way.fell_back.is_none() && w.way.way == Way::Files && w.way.pages_by_api > 0 {
            out.push(format!(
                "section {:?} ({}): {} page{} not in its file read through the OneNote API",
                w.section,
                w.notebook,
                w.way.pages_by_api,
                plural(w.way.pages_by_api as usize)
            ));
        }
    }
    out
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn the_flag_reads_its_three_words_and_nothing_else() {
        for w in ["auto", "api", "files"] {
            assert_eq!(Via::parse(w).unwrap().as_str(), w);
        }
        assert!(Via::parse("drive")
            .unwrap_err()
            .contains("auto, api, files"));
        assert_eq!(Via::default(), Via::Auto);
    }

    #[test]
    fn api_and_files_are_taken_as_asked_whatever_the_token() {
        let none = g("");
        for kind in [SourceKind::Personal, SourceKind::Group, SourceKind::Site] {
            assert_eq!(decide(Via::Api, kind, Some(&g("Files.Read"))).way, Way::Api);
            assert_eq!(decide(Via::Files, kind, Some(&none)).way, Way::Files);
            assert_eq!(decide(Via::Files, kind, None).way, Way::Files);
        }
    }

    #[test]
    fn auto_reads_the_own_onedrive_with_any_file_permission() {
        let d = decide(
            Via::Auto,
            SourceKind::Personal,
            Some(&g("User.Read Notes.Read Files.Read")),
        );
        assert_eq!(d.way, Way::Files);
        assert_eq!(d.reason, "the token carries Files.Read");
        // Entra may name the resource, in its own case.
        let d = decide(
            Via::Auto,
            SourceKind::Personal,
            Some(&g("https://graph.microsoft.com/files.read.all")),
        );
        assert_eq!(d.way, Way::Files);
        let d = decide(Via::Auto, SourceKind::Personal, Some(&g("Notes.Read")));
        assert_eq!(d.way, Way::Api);
        assert_eq!(d.missing, Some("Files.Read"));
        assert!(d.reason.contains("lacks Files.Read"), "{}", d.reason);
    }

    #[test]
    fn auto_reads_a_teams_library_only_with_an_all_permission() {
        for kind in [SourceKind::Group, SourceKind::Site] {
            let d = decide(Via::Auto, kind, Some(&g("Notes.Read.All Files.Read")));
            assert_eq!(d.way, Way::Api, "Files.Read is the user's own files only");
            assert_eq!(d.missing, Some("Files.Read.All"));
            for p in ["Files.Read.All", "Sites.Read.All"] {
                let d = decide(Via::Auto, kind, Some(&g(&format!("Notes.Read.All {p}"))));
                assert_eq!(d.way, Way::Files, "{p}");
            }
        }
    }

    #[test]
    fn auto_without_known_permissions_takes_the_api_and_says_why() {
        let d = decide(Via::Auto, SourceKind::Personal, None);
        assert_eq!(d.way, Way::Api);
        assert!(d.reason.contains("not known yet"), "{}", d.reason);
        assert_eq!(d.missing, None);
    }

    #[test]
    fn the_lines_group_sections_by_way_and_reason_and_name_each_fall_back() {
        use crate::store::ways::SectionWay;
        let way = |section: &str, way, reason: &str, fell_back: Option<&str>| ShownWay {
            way: SectionWay {
                key: "alice".into(),
                section_id: section.into(),
                way,
                reason: reason.into(),
                file: None,
                fell_back: fell_back.map(str::to_owned),
                pages_by_api: 0,
            },
            section: section.into(),
            notebook: "Work".into(),
        };
        let l = lines(&[
            way("A", Way::Files, "the token carries Files.Read", None),
            way("B", Way::Files, "the token carries Files.Read", None),
            way(
                "C",
                Way::Files,
                "the token carries Files.Read",
                Some("no file"),
            ),
            way("D", Way::Api, "--via api", None),
        ]);
        assert_eq!(
            l,
            [
                "2 sections from their files (the token carries Files.Read)",
                "1 section through the OneNote API instead of its file: no file (\"C\")",
                "1 section through the OneNote API (--via api)",
            ]
        );
    }

    #[test]
    fn sections_that_fell_back_for_one_reason_are_one_line_naming_the_first_few() {
        use crate::store::ways::SectionWay;
        let ways: Vec<ShownWay> = ["A", "B", "C", "D", "E"]
            .iter()
            .map(|s| ShownWay {
                way: SectionWay {
                    key: "alice".into(),
                    section_id: (*s).into(),
                    way: Way::Files,
                    reason: "--via files".into(),
                    file: None,
                    fell_back: Some("the notebook's folder could not be read".into()),
                    pages_by_api: 0,
                },
                section: (*s).into(),
                notebook: "Work".into(),
            })
            .collect();
        assert_eq!(
            lines(&ways),
            [
                "5 sections through the OneNote API instead of their files: the notebook's folder \
              could not be read (\"A\", \"B\", \"C\", 2 more)"
            ]
        );
    }

    #[test]
    fn a_key_names_its_kind_of_source() {
        assert_eq!(kind_of_key("alice"), SourceKind::Personal);
        assert_eq!(kind_of_key("alice/group:g1"), SourceKind::Group);
        assert_eq!(kind_of_key("alice/site:s1"), SourceKind::Site);
    }
}
