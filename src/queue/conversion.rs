//! A converted page made ready to write: a conversion step that cannot take the run down with
//! it, and the files the page refers to, named as Notion will show them.

use std::collections::HashMap;

use crate::convert::MediaSource;
use crate::notion::writer::Resource;

use super::JobError;

/// Runs one page's conversion step so that a panic fails that page alone, for good and with the
/// reason, instead of ending the run (and being taken again by every `--resume`).
pub(super) fn isolated<T>(item: &str, what: &str, f: impl FnOnce() -> T) -> Result<T, JobError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|panic| {
        let why = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        tracing::error!(item, "failed while {what}: {why}");
        JobError::permanent(format!("{item}: failed while {what}: {why}"))
    })
}

/// The URL under which [`resources_of`] keeps a media source, if it has one.
pub(super) fn resource_url(m: &MediaSource) -> Option<&str> {
    match m {
        MediaSource::Resource { url, .. } => Some(url),
        MediaSource::Embedded(f) => Some(&f.key),
        _ => None,
    }
}

/// The resources a converted page refers to, by URL, with the names Notion will show: what the
/// queue hands the writer.
pub fn resources_of(media: &[&MediaSource]) -> HashMap<String, Resource> {
    let mut out = HashMap::new();
    for (i, m) in media.iter().enumerate() {
        if let MediaSource::Embedded(f) = m {
            out.insert(
                f.key.clone(),
                Resource {
                    url: f.key.clone(),
                    file_name: f.name.clone(),
                    mime: Some(f.mime.clone()),
                    fallback: None,
                },
            );
        }
        if let MediaSource::Resource {
            url,
            file_name,
            mime,
            fallback,
        } = m
        {
            let name = file_name.clone().unwrap_or_else(|| {
                // An image of a type Notion does not take (or none) is named as a PNG, as the
                // page shows it.
                let ext = mime
                    .as_deref()
                    .and_then(crate::mime::upload_extension)
                    .unwrap_or("png");
                format!("image-{}.{ext}", i + 1)
            });
            let mime = mime
                .clone()
                .or_else(|| Some(crate::mime::for_name(&name).to_owned()));
            out.insert(
                url.clone(),
                Resource {
                    url: url.clone(),
                    file_name: name,
                    mime,
                    fallback: fallback.clone(),
                },
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_in_conversion_fails_that_page_for_good_with_its_reason() {
        let r: Result<(), JobError> = isolated("page \"p\" (1)", "converting it", || {
            panic!("index out of bounds")
        });
        match r {
            Err(JobError::Permanent(why)) => {
                assert!(why.contains("page \"p\" (1)"), "{why}");
                assert!(why.contains("converting it"), "{why}");
                assert!(why.contains("index out of bounds"), "{why}");
            }
            _ => panic!("a panic must fail the page permanently"),
        }
        let ok = isolated("page", "converting it", || 7);
        assert!(matches!(ok, Ok(7)));
    }
}
