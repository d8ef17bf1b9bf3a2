//! Handwriting and drawings (OneNote ink) as standalone, pure functions: split Graph's
//! `includeInkML=true` answer into its HTML and InkML parts, parse the InkML, group the strokes into
//! drawings the way OneNote shows them, and render each drawing as an SVG image placed in the page's
//! CSS-pixel space (the unit of the outlines' `left`/`top`), so the converter can put it in reading order.

pub mod group;
pub mod inkml;
pub mod multipart;
pub mod svg;

pub use multipart::{split_multipart, PageParts};

use std::collections::HashMap;

use bytes::Bytes;

use crate::convert::{Block, Ink, MediaSource, PositionedBlock, RichText};

/// What a page's report counts each drawing under, once, on both routes (`verify`, `report`):
/// `(element, action)`.
pub const DRAWING_REPORTED: (&str, &str) = (
    "ink (handwriting, drawings)",
    "drawn as one image per drawing",
);

/// URL scheme of rendered drawings in the converted page: the writer's fetcher serves them from
/// [`PageDrawings::svgs`] instead of Graph.
pub const DRAWING_SCHEME: &str = "ink:";

/// A page's drawings, ready for the converter (positioned image blocks) and the writer (SVG bytes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageDrawings {
    /// What the converter places ([`ConvertOptions::ink`](crate::convert::ConvertOptions::ink)).
    pub ink: Ink,
    /// The SVG documents by their `ink:drawing-N.svg` URL.
    pub svgs: HashMap<String, Bytes>,
    /// Strokes rendered, over all drawings.
    pub strokes: usize,
}

/// The drawings of a page's InkML (`None`: the answer had no InkML part, so no ink). InkML that
/// cannot be read gives [`Ink::Unreadable`] with the reason, so the page still migrates.
pub fn for_page(inkml: Option<&str>) -> PageDrawings {
    let Some(inkml) = inkml else {
        return PageDrawings {
            ink: Ink::Drawings(Vec::new()),
            ..PageDrawings::default()
        };
    };
    let drawings = match drawings(inkml) {
        Ok(d) => d,
        Err(e) => {
            return PageDrawings {
                ink: Ink::Unreadable(e.to_string()),
                ..PageDrawings::default()
            }
        }
    };
    let mut out = PageDrawings::default();
    let mut placed = Vec::with_capacity(drawings.len());
    for (i, d) in drawings.into_iter().enumerate() {
        let name = format!("drawing-{}.svg", i + 1);
        let url = format!("{DRAWING_SCHEME}{name}");
        out.strokes += d.strokes;
        placed.push(PositionedBlock {
            top: d.top,
            left: d.left,
            block: Block::Image {
                source: MediaSource::Resource {
                    url: url.clone(),
                    file_name: Some(name),
                    mime: Some("image/svg+xml".into()),
                    fallback: None,
                },
                caption: vec![RichText::plain(d.description)],
            },
        });
        out.svgs.insert(url, Bytes::from(d.svg));
    }
    out.ink = Ink::Drawings(placed);
    out
}

/// Why ink could not be read. Each variant names the part, element or trace at fault.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum InkError {
    /// The `multipart/mixed` envelope is malformed.
    #[error("multipart page content: {0}")]
    Multipart(String),
    /// The InkML is not well-formed XML.
    #[error("InkML is not well-formed XML: {0}")]
    Xml(String),
    /// The root element is not InkML's `<ink>`.
    #[error("InkML root element is <{0}>, expected <ink>")]
    NotInk(String),
    /// A trace's point data cannot be decoded.
    #[error("InkML trace {trace}: {reason}")]
    Trace {
        /// `xml:id` of the trace, or its position (`#12`) when it has none.
        trace: String,
        /// What is wrong.
        reason: String,
    },
    /// A reference (`brushRef`, `contextRef`, ...) points at nothing.
    #[error("InkML {element} refers to {reference}, which is not defined")]
    Dangling {
        /// The element holding the reference.
        element: String,
        /// The reference as written.
        reference: String,
    },
    /// A unit or a value in the definitions cannot be used.
    #[error("InkML definitions: {0}")]
    Definition(String),
}

impl crate::failure::Classify for InkError {
    /// Ink that cannot be read costs only the drawings: the page's text is migrated and the
    /// failure is in its report.
    fn class(&self) -> crate::failure::Class {
        use crate::failure::{Class, Next, Scope};
        match self {
            InkError::Multipart(_)
            | InkError::Xml(_)
            | InkError::NotInk(_)
            | InkError::Trace { .. }
            | InkError::Dangling { .. }
            | InkError::Definition(_) => Class::new(Scope::Resource, Next::Degrade),
        }
    }
}

/// One drawing: strokes OneNote shows together, rendered as one image.
#[derive(Clone, Debug, PartialEq)]
pub struct Drawing {
    /// The SVG document (viewBox fitted to the drawing, CSS-pixel units).
    pub svg: String,
    /// Number of strokes in it.
    pub strokes: usize,
    /// Top edge on the page, CSS px (same unit as the outlines' `top`).
    pub top: f64,
    /// Left edge on the page, CSS px (same unit as the outlines' `left`).
    pub left: f64,
    /// Width in CSS px.
    pub width: f64,
    /// Height in CSS px.
    pub height: f64,
    /// Every stroke in it is a highlighter stroke.
    pub highlighter: bool,
    /// Text note for the reader, e.g. "Handwritten drawing, 23 strokes".
    pub description: String,
}

/// Parses an InkML document, groups its strokes into drawings and renders each one; drawings come
/// in reading order (top, then left).
pub fn drawings(inkml: &str) -> Result<Vec<Drawing>, InkError> {
    let ink = inkml::parse(inkml)?;
    Ok(group::group(&ink.strokes)
        .into_iter()
        .map(|g| {
            let strokes: Vec<&inkml::Stroke> = g.iter().map(|&i| &ink.strokes[i]).collect();
            render_drawing(&strokes)
        })
        .collect())
}

/// Renders strokes as one drawing (a group from [`group::group`] or [`group::group_lines`]), with
/// the description both routes caption it with.
pub fn render_drawing(strokes: &[&inkml::Stroke]) -> Drawing {
    let b = group::bounds(strokes.iter().copied());
    let highlighter = strokes.iter().all(|s| s.brush.highlighter);
    let n = strokes.len();
    let kind = if highlighter {
        "Highlighter drawing"
    } else {
        "Handwritten drawing"
    };
    let plural = if n == 1 { "stroke" } else { "strokes" };
    Drawing {
        svg: svg::render(strokes, &b),
        strokes: n,
        top: round2(b.top),
        left: round2(b.left),
        width: round2(b.right - b.left),
        height: round2(b.bottom - b.top),
        highlighter,
        description: format!("{kind}, {n} {plural}"),
    }
}

/// Rounds to 1/100 px: finer than any screen, and keeps snapshots stable across platforms.
pub(crate) fn round2(v: f64) -> f64 {
    let r = (v * 100.0).round() / 100.0;
    if r == 0.0 {
        0.0
    } else {
        r
    }
}
