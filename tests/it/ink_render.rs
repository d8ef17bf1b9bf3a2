//! Ink from fixtures: multipart shapes, InkML in OneNote's and Office's dialects, grouping by position
//! and time, placement in CSS px, and the rendered SVG (insta snapshots).

use std::path::PathBuf;

use notebridge::ink::{drawings, split_multipart, Drawing, InkError};

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ink")
        .join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn text(name: &str) -> String {
    String::from_utf8(fixture(name)).unwrap()
}

fn summary(ds: &[Drawing]) -> String {
    ds.iter()
        .map(|d| {
            format!(
                "{} | left {} top {} width {} height {} | highlighter {}\n{}",
                d.description, d.left, d.top, d.width, d.height, d.highlighter, d.svg
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn multipart_lf_ink_first_with_preamble() {
    let body = fixture("multipart-lf-ink-first.txt");
    let p = split_multipart("multipart/mixed; boundary=\"Part_ab12\"", &body).unwrap();
    assert!(p.html.starts_with("<html><head><title>Ink page</title>"));
    assert!(
        p.html.ends_with("</html>"),
        "{:?}",
        &p.html[p.html.len() - 20..]
    );
    assert!(p.html.contains("--not-a-boundary"));
    assert_eq!(
        p.inkml.as_deref(),
        Some(text("office-cm-timed.inkml").as_str())
    );
}

#[test]
fn multipart_crlf_base64_ink_part() {
    let body = fixture("multipart-crlf-base64.txt");
    let ct = "multipart/mixed; boundary=8f853c8c-31c2-4e1a-9b55-0d3d2c7a1f00";
    let p = split_multipart(ct, &body).unwrap();
    assert!(p.html.ends_with("</html>") && !p.html.contains('\r'));
    assert_eq!(p.inkml.unwrap(), text("onenote-two-drawings.inkml"));
    // A client that lost the header still finds the envelope from its first line.
    let q = split_multipart("application/octet-stream", &body).unwrap();
    assert!(q.inkml.is_some());
}

#[test]
fn multipart_without_ink_part_and_plain_html() {
    let body = fixture("multipart-crlf-html-only.txt");
    let ct = "Multipart/Mixed; Boundary=8f853c8c-31c2-4e1a-9b55-0d3d2c7a1f00";
    let p = split_multipart(ct, &body).unwrap();
    assert!(p.inkml.is_none() && p.html.contains("Ink page"));
    let plain = split_multipart("text/html; charset=utf-8", b"<html><body/></html>").unwrap();
    assert_eq!(
        (plain.html.as_str(), plain.inkml),
        ("<html><body/></html>", None)
    );
    let e = split_multipart("multipart/mixed; boundary=zzz", &body).unwrap_err();
    assert!(
        matches!(e, InkError::Multipart(ref m) if m.contains("zzz")),
        "{e}"
    );
}

#[test]
fn onenote_inkml_two_drawings_placed_and_rendered() {
    let ds = drawings(&text("onenote-two-drawings.inkml")).unwrap();
    // st0-st2 cross each other (pen and fitted blue pen); the highlighter st3 and the dot st4 on it
    // are far to the right.
    assert_eq!(ds.iter().map(|d| d.strokes).collect::<Vec<_>>(), vec![2, 3]);
    // Reading order is by top: the highlighter group starts higher (y 3000 himetric).
    let hl = &ds[0];
    assert_eq!(hl.description, "Handwritten drawing, 2 strokes");
    assert!(!hl.highlighter, "a pen dot sits on the highlighter stroke");
    // 20000 himetric = 755.91 px; the highlighter is 300 himetric (11.34 px) wide, half of it outside.
    assert_eq!(hl.left, 750.24);
    let pen = &ds[1];
    assert_eq!(pen.description, "Handwritten drawing, 3 strokes");
    // 3969 himetric = 150.01 px minus half a 100-himetric pen (1.89 px).
    assert_eq!((pen.left, pen.top), (148.12, 148.12));
    insta::assert_snapshot!("ink_onenote_two_drawings", summary(&ds));
}

#[test]
fn office_inkml_in_cm_groups_by_time() {
    let ds = drawings(&text("office-cm-timed.inkml")).unwrap();
    // The first two strokes are 1.6 cm apart but written 0.6 s apart: one drawing. The third comes
    // 90 s later at the same distance: its own drawing.
    assert_eq!(ds.iter().map(|d| d.strokes).collect::<Vec<_>>(), vec![2, 1]);
    // 1 cm = 37.8 px; pen 0.05 cm.
    assert_eq!((ds[0].left, ds[0].top), (36.85, 36.85));
    assert!(
        ds[0].svg.contains("stroke-opacity=\"0.75\""),
        "{}",
        ds[0].svg
    );
    insta::assert_snapshot!("ink_office_cm_timed", summary(&ds));
}

#[test]
fn broken_inkml_is_an_error_naming_the_fault() {
    let bad = text("onenote-two-drawings.inkml").replace("'0'265'-500", "'0'2x5'-500");
    let e = drawings(&bad).unwrap_err();
    assert!(e.to_string().contains("trace st1"), "{e}");
    let e = drawings(&text("onenote-two-drawings.inkml").replace("#br2\"", "#br9\"")).unwrap_err();
    assert!(e.to_string().contains("#br9"), "{e}");
}
