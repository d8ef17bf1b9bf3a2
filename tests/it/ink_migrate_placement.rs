//! Drawings placed by the converter among the positioned outlines by (top, left), not at the end;
//! the `InkNode` comments dropped when drawings are carried; unreadable ink reported once.

use notebridge::convert::{
    convert_page_with, Block, ConvertOptions, Ink, MediaSource, PositionedBlock, RichText,
};

const PAGE: &str = "<html><body>\
<!-- InkNode is not supported --><!-- InkNode is not supported -->\
<div style=\"position:absolute;left:48px;top:300px\"><p>third</p></div>\
<div style=\"position:absolute;left:48px;top:100px\"><p>first</p></div>\
<div style=\"position:absolute;left:400px;top:100px\"><p>second</p></div>\
</body></html>";

fn drawing(top: f64, left: f64, n: usize) -> PositionedBlock {
    PositionedBlock {
        top,
        left,
        block: Block::Image {
            source: MediaSource::Resource {
                url: format!("ink:drawing-{n}.svg"),
                file_name: Some(format!("drawing-{n}.svg")),
                mime: Some("image/svg+xml".into()),
                fallback: None,
            },
            caption: vec![RichText::plain(format!("Handwritten drawing, {n} strokes"))],
        },
    }
}

/// Each top-level block as a short label: the paragraph's text or the drawing's caption.
fn labels(blocks: &[Block]) -> Vec<String> {
    blocks
        .iter()
        .map(|b| match b {
            Block::Image { caption, .. } => caption[0].visible_text(),
            other => other.text().unwrap().rich_text[0].visible_text(),
        })
        .collect()
}

#[test]
fn drawings_interleave_with_outlines_by_position() {
    let opts = ConvertOptions {
        last_modified: None,
        // Given out of order: below everything, between first and second (same top, further
        // left than second), and between the top row and third.
        ink: Ink::Drawings(vec![
            drawing(500.0, 10.0, 3),
            drawing(100.0, 200.0, 1),
            drawing(180.0, 48.0, 2),
        ]),
    };
    let page = convert_page_with(PAGE, &opts);
    assert_eq!(
        labels(&page.blocks),
        vec![
            "first",
            "Handwritten drawing, 1 strokes",
            "second",
            "Handwritten drawing, 2 strokes",
            "third",
            "Handwritten drawing, 3 strokes",
        ]
    );
    assert!(
        !page.report.items.iter().any(|a| a.element.contains("ink")),
        "{:?}",
        page.report
    );
    let urls: Vec<&str> = page
        .resources()
        .into_iter()
        .filter_map(|m| match m {
            MediaSource::Resource { url, .. } => Some(url.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(
        urls,
        vec![
            "ink:drawing-1.svg",
            "ink:drawing-2.svg",
            "ink:drawing-3.svg"
        ]
    );
}

#[test]
fn ink_comments_are_reported_unless_drawings_are_carried() {
    let count = |ink: Ink| -> Vec<(String, usize, String)> {
        convert_page_with(
            PAGE,
            &ConvertOptions {
                last_modified: None,
                ink,
            },
        )
        .report
        .items
        .into_iter()
        .filter(|a| a.element.contains("ink"))
        .map(|a| (a.element, a.count, a.action))
        .collect()
    };
    assert_eq!(
        count(Ink::NotFetched),
        vec![(
            "ink (handwriting, drawings)".into(),
            2,
            "not migrated: Graph does not return ink".into()
        )]
    );
    assert_eq!(
        count(Ink::Unreadable("InkML is not well-formed XML: x".into())),
        vec![(
            "ink (InkML could not be read: InkML is not well-formed XML: x)".into(),
            1,
            "not migrated".into()
        )]
    );
    assert_eq!(
        count(Ink::Drawings(Vec::new())),
        vec![(
            "ink (handwriting, drawings)".into(),
            2,
            "not migrated: the answer carried no InkML".into()
        )]
    );
}

#[test]
fn rendered_fixture_drawings_become_captioned_svg_images() {
    let inkml = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/ink/onenote-two-drawings.inkml"),
    )
    .unwrap();
    let d = notebridge::ink::for_page(Some(&inkml));
    let Ink::Drawings(placed) = &d.ink else {
        panic!("{:?}", d.ink)
    };
    let rendered = notebridge::ink::drawings(&inkml).unwrap();
    assert_eq!(placed.len(), rendered.len());
    assert_eq!(d.strokes, rendered.iter().map(|r| r.strokes).sum::<usize>());
    for (i, (p, r)) in placed.iter().zip(&rendered).enumerate() {
        assert_eq!((p.top, p.left), (r.top, r.left));
        let url = format!("ink:drawing-{}.svg", i + 1);
        assert_eq!(d.svgs[&url], r.svg.as_bytes());
        let json = p.block.to_json();
        assert_eq!(
            json["image"]["caption"][0]["text"]["content"],
            r.description
        );
    }
    let broken = notebridge::ink::for_page(Some("<ink><trace>1 2, x</trace>"));
    assert!(matches!(broken.ink, Ink::Unreadable(_)), "{:?}", broken.ink);
    assert!(broken.svgs.is_empty());
}
