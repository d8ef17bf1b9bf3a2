//! The layering of `lib.rs`, checked: no module imports from a layer below it in `lib.rs`'s list
//! (a lower layer that reaches into a higher one makes the circles that stop a module from being
//! understood, tested or changed alone).

use std::collections::BTreeSet;
use std::path::Path;

/// The layers of `lib.rs`, lowest first (its `pub mod` lines, grouped by its comments).
const LAYERS: &[&[&str]] = &[
    &[
        "clock",
        "crash",
        "failure",
        "mime",
        "net",
        "platform",
        "trace",
        "transport",
    ],
    &["settings"],
    &["store"],
    &["auth", "limiter"],
    &["convert", "drive", "graph", "ink", "mathml", "onefile"],
    &["notion"],
    &["imports", "queue", "report", "sync", "verify"],
    &["engine"],
    &["cli"],
];

/// Imports from a higher layer that are known and still to be undone: (file under `src/`, the
/// module it imports). Each one here must still exist, so the list only shrinks.
const KNOWN: &[(&str, &str)] = &[];

fn layer(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The code of a file: comments and its test module left out (tests may use anything).
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `text` names as `crate::<module>`.
fn imports(text: &str) -> BTreeSet<String> {
    text.match_indices("crate::")
        .map(|(i, m)| {
            let name: String = text[i + m.len()..]
                .chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect();
            // A grouped `use crate::{a, b}` would hide its modules from this check.
            assert!(
                !name.is_empty(),
                "name each module: `use crate::<module>::...`"
            );
            name
        })
        .collect()
}

#[test]
fn lib_declares_the_modules_in_their_layers_order() {
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs")).unwrap();
    let declared: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("pub mod "))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    let layered: Vec<&str> = LAYERS.iter().flat_map(|l| l.iter().copied()).collect();
    assert_eq!(declared, layered, "lib.rs's modules, in the layers' order");
}

#[test]
fn no_module_imports_from_a_layer_above_its_own() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found = BTreeSet::new();
    for m in modules(&src) {
        let top = m.path.split("::").next().unwrap_or_default();
        let Some(own) = layer(top) else { continue };
        for i in imports(&m.code) {
            if layer(&i).is_some_and(|l| l > own) {
                found.insert((m.file.clone(), i));
            }
        }
    }
    let known: BTreeSet<(String, String)> = KNOWN
        .iter()
        .map(|(f, m)| ((*f).to_owned(), (*m).to_owned()))
        .collect();
    let new: Vec<_> = found.difference(&known).collect();
    assert!(new.is_empty(), "imports from a higher layer: {new:?}");
    let gone: Vec<_> = known.difference(&found).collect();
    assert!(gone.is_empty(), "undone, take them out of KNOWN: {gone:?}");
}

/// Circles between sibling modules that are known and still to be undone (each must still be one).
const KNOWN_CIRCLES: &[&[&str]] = &[];

/// A source file of the crate.
struct Module {
    /// Its path under `src/` (`graph/batch.rs`).
    file: String,
    /// Its module path (`graph::batch`, `graph` for `graph/mod.rs`).
    path: String,
    /// Its code (see [`code`]).
    code: String,
}

/// Every source file of the crate but `lib.rs` and `main.rs`.
fn modules(src: &Path) -> Vec<Module> {
    let mut out = Vec::new();
    let mut dirs = vec![src.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let path = e.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let file = path.strip_prefix(src).unwrap();
            let mut parts: Vec<String> = file
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if parts.last().is_some_and(|p| p == "mod") {
                parts.pop();
            }
            if parts == ["lib"] || parts == ["main"] {
                continue;
            }
            out.push(Module {
                file: file.to_string_lossy().into_owned(),
                path: parts.join("::"),
                code: code(&std::fs::read_to_string(&path).unwrap()),
            });
        }
    }
    out
}

/// The modules `text` (the code of `module`) refers to through `crate::` and `super::` paths,
/// each as the longest module among `known` that the path names.
fn references(module: &str, text: &str, known: &BTreeSet<String>) -> BTreeSet<String> {
    let parent = module.rsplit_once("::").map_or("", |(p, _)| p);
    let mut out = BTreeSet::new();
    let mut resolve = |base: &str, rest: &str| {
        let segments: Vec<&str> = rest
            .split("::")
            .map(|s| s.trim_matches(|c: char| !(c.is_ascii_alphanumeric() || c == '_')))
            .take_while(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
            .collect();
        let mut best = base.to_owned();
        let mut path = base.to_owned();
        for s in segments {
            path = if path.is_empty() {
                s.to_owned()
            } else {
                format!("{path}::{s}")
            };
            if known.contains(&path) {
                best = path.clone();
            }
        }
        if !best.is_empty() {
            out.insert(best);
        }
    };
    for (prefix, base) in [("crate::", ""), ("super::", parent)] {
        for (i, m) in text.match_indices(prefix) {
            let rest = &text[i + m.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or_default();
                for item in group.split(',') {
                    resolve(base, item.trim());
                }
            } else {
                let end = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
                    .unwrap_or(rest.len());
                resolve(base, &rest[..end]);
            }
        }
    }
    out
}

#[test]
fn no_two_sibling_modules_import_each_other_round_a_circle() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mods = modules(&src);
    let known: BTreeSet<String> = mods.iter().map(|m| m.path.clone()).collect();
    // A module and its ancestors or descendants are one unit: their mutual use is no circle.
    let related = |a: &str, b: &str| {
        a == b || a.starts_with(&format!("{b}::")) || b.starts_with(&format!("{a}::"))
    };
    let edges: Vec<(String, BTreeSet<String>)> = mods
        .iter()
        .map(|m| {
            let to = references(&m.path, &m.code, &known)
                .into_iter()
                .filter(|t| !related(&m.path, t))
                .collect();
            (m.path.clone(), to)
        })
        .collect();
    let next = |m: &str| -> Vec<String> {
        edges
            .iter()
            .filter(|(from, _)| from == m)
            .flat_map(|(_, to)| to.iter().cloned())
            .collect()
    };
    // Every module that can reach itself again, with the circle it is on (a breadth-first path).
    let mut circles: BTreeSet<Vec<String>> = BTreeSet::new();
    for start in &known {
        let mut seen = BTreeSet::new();
        let mut queue = std::collections::VecDeque::from([(start.clone(), vec![start.clone()])]);
        while let Some((at, path)) = queue.pop_front() {
            for n in next(&at) {
                if &n == start {
                    let mut circle = path.clone();
                    circle.sort();
                    circles.insert(circle);
                } else if seen.insert(n.clone()) {
                    let mut p = path.clone();
                    p.push(n.clone());
                    queue.push_back((n, p));
                }
            }
        }
    }
    let allowed: BTreeSet<Vec<String>> = KNOWN_CIRCLES
        .iter()
        .map(|c| c.iter().map(|s| (*s).to_owned()).collect())
        .collect();
    let new: Vec<_> = circles.difference(&allowed).collect();
    assert!(
        new.is_empty(),
        "modules importing each other round a circle: {new:?}"
    );
    let gone: Vec<_> = allowed.difference(&circles).collect();
    assert!(
        gone.is_empty(),
        "undone, take them out of KNOWN_CIRCLES: {gone:?}"
    );
}

/// Whether `code` asks which operating system it is built for.
fn names_an_os(code: &str) -> bool {
    ["cfg!(", "#[cfg(", "#![cfg("].iter().any(|open| {
        code.match_indices(open).any(|(i, _)| {
            let rest = &code[i..];
            let cond = &rest[..rest.find(')').map_or(rest.len(), |e| e + 1)];
            // `cfg(any(windows, ...))`: the first `)` may close an inner group; what it names
            // before that is enough to tell.
            [
                "windows",
                "unix",
                "target_os",
                "target_family",
                "target_vendor",
            ]
            .iter()
            .any(|os| cond.contains(os))
        })
    })
}

#[test]
fn only_platform_asks_which_operating_system_it_runs_on() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found: Vec<String> = modules(&src)
        .into_iter()
        .filter(|m| m.path != "platform" && !m.path.starts_with("platform::"))
        .filter(|m| names_an_os(&m.code))
        .map(|m| m.file)
        .collect();
    assert!(
        found.is_empty(),
        "an operating system named outside src/platform (give platform a function): {found:?}"
    );
    assert!(names_an_os("if !cfg!(windows) {"));
    assert!(names_an_os("#[cfg(any(target_os = \"macos\", unix))]"));
    assert!(!names_an_os("#[cfg(feature = \"crash-points\")]"));
}
