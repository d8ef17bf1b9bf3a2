//! Every mapping row, on hand-written OneNote output fixtures, checked against reviewed snapshots.

use crate::convert_validate as validate;

use notebridge::convert::convert_page;

fn check(name: &str) {
    let path = format!("{}/fixtures/{name}.html", env!("CARGO_MANIFEST_DIR"));
    let html = std::fs::read_to_string(&path).expect("fixture readable");
    let page = convert_page(&html);
    let json = page.to_json();
    validate::blocks(&page.blocks).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut shown = String::new();
    validate::shown_text(&json["blocks"], &mut shown);
    validate::text_survives(&html, &shown).unwrap_or_else(|e| panic!("{name}: {e}"));
    insta::assert_json_snapshot!(name, json);
}

macro_rules! fixtures {
    ($($f:ident => $name:literal),* $(,)?) => {
        $(#[test] fn $f() { check($name); })*
    };
}

fixtures! {
    title_and_dates => "01-title-dates",
    paragraphs_and_outline_text => "02-paragraphs-and-outline-text",
    positioned_outlines => "03-positioned-outlines",
    inline_styles => "04-inline-styles",
    colors => "05-colors",
    code => "06-code",
    headings => "07-headings",
    nested_lists => "08-lists-nested",
    todo_tags => "09-todo-tags",
    other_tags => "10-other-tags",
    tables => "11-tables",
    images => "12-images",
    attachments => "13-attachments",
    iframes => "14-iframes",
    links => "15-links",
    line_breaks => "16-line-breaks",
    unknown_sup_sub_cite => "17-unknown-sup-sub-cite",
}
