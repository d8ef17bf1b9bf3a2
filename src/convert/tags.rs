//! OneNote note tags (`data-tag`): which become to-dos, and the emoji that keeps the others
//! visible.

use super::blocks::{Color, Hue};

/// One tag of a `data-tag` attribute.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    /// The tag name without `:completed` (e.g. `to-do`, `idea`).
    pub name: String,
    /// `:completed` was set (check-box tags).
    pub completed: bool,
}

/// Parses `data-tag="to-do,important, question:completed"`.
pub fn parse(attr: &str) -> Vec<Tag> {
    attr.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|t| {
            let t = t.to_ascii_lowercase();
            match t.strip_suffix(":completed") {
                Some(name) => Tag {
                    name: name.to_string(),
                    completed: true,
                },
                None => Tag {
                    name: t,
                    completed: false,
                },
            }
        })
        .collect()
}

impl Tag {
    /// Tags OneNote draws as a check box.
    pub fn is_checkbox(&self) -> bool {
        self.completed
            || matches!(
                self.name.as_str(),
                "to-do"
                    | "to-do-priority-1"
                    | "to-do-priority-2"
                    | "discuss-with-person-a"
                    | "discuss-with-person-b"
                    | "discuss-with-manager"
                    | "schedule-meeting"
                    | "call-back"
                    | "client-request"
            )
    }

    /// The emoji standing for the tag.
    pub fn emoji(&self) -> &'static str {
        match self.name.as_str() {
            "to-do" => {
                if self.completed {
                    "☑"
                } else {
                    "☐"
                }
            }
            "important" => "⭐",
            "question" => "❓",
            "critical" => "❗",
            "idea" => "💡",
            "definition" => "📖",
            "highlight" => "🖍️",
            "contact" => "👤",
            "address" => "🏠",
            "phone-number" | "call-back" => "📞",
            "web-site-to-visit" => "🌐",
            "password" => "🔑",
            "remember-for-later" | "remember-for-blog" => "📌",
            "project-a" => "🅰️",
            "project-b" => "🅱️",
            "movie-to-see" => "🎬",
            "book-to-read" => "📚",
            "music-to-listen-to" => "🎵",
            "source-for-article" => "📰",
            "discuss-with-person-a" | "discuss-with-person-b" | "discuss-with-manager" => "💬",
            "send-in-email" => "📧",
            "schedule-meeting" => "📅",
            "client-request" => "📋",
            "to-do-priority-1" => "1️⃣",
            "to-do-priority-2" => "2️⃣",
            _ => "🏷️",
        }
    }

    /// The background of a callout made from the tag.
    pub fn callout_color(&self) -> Color {
        match self.name.as_str() {
            "important" | "idea" | "highlight" => Color::Background(Hue::Yellow),
            "critical" => Color::Background(Hue::Red),
            "question" => Color::Background(Hue::Blue),
            "definition" | "source-for-article" => Color::Background(Hue::Purple),
            _ => Color::Background(Hue::Gray),
        }
    }
}

/// What a block's tags turn it into.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Effect {
    /// It becomes a to_do, checked or not.
    pub todo: Option<bool>,
    /// It becomes a callout with this icon and colour (paragraph-like blocks only).
    pub callout: Option<(&'static str, Color)>,
    /// Emoji put in front of the text for the tags not shown otherwise.
    pub prefix: String,
}

/// Decides how tags show on a block; `can_callout` is false where the block must stay what it
/// is (list items).
pub fn effect(tags: &[Tag], can_callout: bool) -> Effect {
    let mut e = Effect::default();
    let mut shown = vec![false; tags.len()];
    if let Some((i, t)) = tags.iter().enumerate().find(|(_, t)| t.is_checkbox()) {
        e.todo = Some(t.completed);
        // A plain to-do is fully shown by the check box; the others keep their emoji too.
        shown[i] = t.name == "to-do";
    } else if can_callout {
        if let Some(t) = tags.first() {
            e.callout = Some((t.emoji(), t.callout_color()));
            shown[0] = true;
        }
    }
    for (t, shown) in tags.iter().zip(shown) {
        if !shown {
            e.prefix.push_str(t.emoji());
            e.prefix.push(' ');
        }
    }
    e
}

/// OneNote's name of a tag from Graph's `data-tag` name (`to-do` is `To Do`); a name OneNote
/// does not have built in reads with spaces for its dashes and a capital first letter.
pub fn display_name(data_tag: &str) -> String {
    const BUILT_IN: &[(&str, &str)] = &[
        ("to-do", "To Do"),
        ("important", "Important"),
        ("question", "Question"),
        ("remember-for-later", "Remember for later"),
        ("definition", "Definition"),
        ("highlight", "Highlight"),
        ("contact", "Contact"),
        ("address", "Address"),
        ("phone-number", "Phone number"),
        ("web-site-to-visit", "Website to visit"),
        ("idea", "Idea"),
        ("password", "Password"),
        ("critical", "Critical"),
        ("project-a", "Project A"),
        ("project-b", "Project B"),
        ("movie-to-see", "Movie to see"),
        ("book-to-read", "Book to read"),
        ("music-to-listen-to", "Music to listen to"),
        ("source-for-article", "Source for article"),
        ("remember-for-blog", "Remember for blog"),
        ("discuss-with-person-a", "Discuss with Person A"),
        ("discuss-with-person-b", "Discuss with Person B"),
        ("discuss-with-manager", "Discuss with manager"),
        ("send-in-email", "Send in email"),
        ("schedule-meeting", "Schedule meeting"),
        ("call-back", "Call back"),
        ("to-do-priority-1", "To Do priority 1"),
        ("to-do-priority-2", "To Do priority 2"),
        ("client-request", "Client request"),
    ];
    if let Some((_, name)) = BUILT_IN.iter().find(|(k, _)| *k == data_tag) {
        return (*name).to_owned();
    }
    let spaced = data_tag.replace('-', " ");
    let mut chars = spaced.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => spaced,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_read_as_onenote_names_them() {
        assert_eq!(display_name("to-do"), "To Do");
        assert_eq!(display_name("remember-for-later"), "Remember for later");
        assert_eq!(display_name("my-own-tag"), "My own tag");
        assert_eq!(display_name(""), "");
    }

    #[test]
    fn parses_comma_lists_and_completion() {
        let t = parse("to-do,important, question:completed");
        assert_eq!(t.len(), 3);
        assert!(t[2].completed && t[2].name == "question");
    }

    #[test]
    fn checkbox_wins_and_others_become_prefixes() {
        let e = effect(&parse("to-do,important,question"), true);
        assert_eq!(e.todo, Some(false));
        assert_eq!(e.callout, None);
        assert_eq!(e.prefix, "⭐ ❓ ");
        let e = effect(&parse("idea"), true);
        assert_eq!(e.callout.map(|c| c.0), Some("💡"));
        assert!(e.prefix.is_empty());
        let e = effect(&parse("idea"), false);
        assert_eq!(e.prefix, "💡 ");
        let e = effect(&parse("schedule-meeting:completed"), true);
        assert_eq!((e.todo, e.prefix.as_str()), (Some(true), "📅 "));
    }
}
