//! What the converter makes of Graph's XHTML habits and of colours that carry nothing: a
//! self-closed `<object ... />` (how Graph writes an attachment) keeps the outlines after it in the
//! page's reading order, and white backgrounds and black text are not reported as approximations.

use notebridge::convert::{convert_page, Block, ConvertedPage};

fn texts(page: &ConvertedPage) -> Vec<String> {
    page.blocks
        .iter()
        .map(|b| match b {
            Block::File { name, .. } => format!("file {}", name.clone().unwrap_or_default()),
            b => b
                .rich_texts()
                .iter()
                .flat_map(|r| r.iter().map(|t| t.visible_text()))
                .collect(),
        })
        .collect()
}

fn reported(page: &ConvertedPage, element: &str) -> usize {
    page.report
        .items
        .iter()
        .filter(|a| a.element == element)
        .map(|a| a.count)
        .sum()
}

#[test]
fn a_self_closed_object_keeps_the_outlines_after_it_in_reading_order() {
    // The first outline in the markup is the lowest on the page; the object is self-closed as
    // Graph writes it. Left open, it would take the later outlines inside it, after the file.
    let html = r#"<html><body data-absolute-enabled="true">
        <div style="position:absolute;left:48px;top:400px;width:600px">
          <object data-attachment="minutes.docx" type="application/msword" data="https://graph.microsoft.com/v1.0/me/onenote/resources/0-a!1/$value" />
          <p>Under the file.</p>
        </div>
        <div style="position:absolute;left:48px;top:120px;width:600px"><p>Top of the page.</p></div>
        <div style="position:absolute;left:48px;top:250px;width:600px"><p>Middle of the page.</p></div>
        </body></html>"#;
    let page = convert_page(html);
    assert_eq!(
        texts(&page),
        [
            "Top of the page.",
            "Middle of the page.",
            "file minutes.docx",
            "Under the file."
        ]
    );
}

#[test]
fn a_self_closed_object_in_a_paragraph_leaves_the_text_after_it_outside() {
    let html = r#"<html><body><div><p>Before <object data-attachment="a.pdf" type="application/pdf" data="https://graph.microsoft.com/v1.0/me/onenote/resources/0-b!1/$value"/></p>
        <p>After.</p></div><div><p>Next outline.</p></div></body></html>"#;
    let page = convert_page(html);
    // The PDF's caption is its name.
    assert_eq!(texts(&page), ["Before", "a.pdf", "After.", "Next outline."]);
}

#[test]
fn white_backgrounds_and_black_text_are_not_reported_as_approximations() {
    let html = r#"<html><body><p><span style="background-color:white">white</span>
        <span style="background-color:#FFFFFF">hex white</span> <span style="color:black">black</span>
        <span style="color:#000000">hex black</span></p>
        <p><span style="background-color:yellow">yellow</span> <span style="color:red">red</span></p></body></html>"#;
    let page = convert_page(html);
    assert_eq!(reported(&page, "CSS background-color"), 1);
    assert_eq!(reported(&page, "CSS color"), 1);
}
