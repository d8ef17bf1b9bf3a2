//! Shared helpers of the Notion writer tests: a server and a writer that talk over loopback, block
//! builders, and the dump a body must leave on the server.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use futures::FutureExt;
use notebridge::clock::Jitter;
use notebridge::convert::{Block, MediaSource, RichKind, RichText, TextBlock};
use notebridge::notion::client::NotionClient;
use notebridge::notion::rate::NotionRate;
use notebridge::notion::split;
use notebridge::notion::writer::{upload_name, Fetch, Resource, Writer};
use notebridge::settings::Window;
use notebridge_testkit::notion::{DumpNode, NotionServer, NotionServerConfig, RateConfig};
use serde_json::Value;

/// A server far faster than the client, so pacing never shows in the counts.
pub async fn fast_server(seed: u64) -> NotionServer {
    NotionServer::start(NotionServerConfig {
        rate: RateConfig {
            per_second: 10_000.0,
            burst: 10_000,
        },
        seed,
        ..Default::default()
    })
    .await
}

/// A client paced at `per_second` with a burst of `burst`, short retry backoff.
pub fn client(s: &NotionServer, per_second: u32, burst: u32) -> NotionClient {
    let rate = NotionRate::new(
        Window {
            count: per_second,
            length: Duration::from_secs(1),
        },
        burst,
    );
    NotionClient::new(s.base_url(), s.token(), Arc::new(rate), Jitter::seeded(7))
        .with_backoff_base(Duration::from_millis(5))
}

/// Bytes for a resource: its URL repeated, `sizes[url]` long when given (else 1000 bytes); URLs
/// containing `fail` cannot be downloaded. Counts the fetches.
pub fn fetch(sizes: HashMap<String, usize>, calls: Arc<AtomicUsize>) -> Fetch {
    Arc::new(move |r: Resource| {
        calls.fetch_add(1, Ordering::SeqCst);
        let n = sizes.get(&r.url).copied().unwrap_or(1000);
        async move {
            if r.url.contains("fail") {
                return Err(notebridge::graph::GraphError::Item {
                    account: "test".into(),
                    item: format!("file {:?}", r.file_name),
                    status: 404,
                    code: notebridge::graph::ServiceCode::Other,
                    message: "ErrorItemNotFound".into(),
                });
            }
            Ok(content(&r.url, n))
        }
        .boxed()
    })
}

/// The deterministic content of a resource of `n` bytes.
///
/// Made once per (url, size) for the whole binary: the upload tests fetch and check the same 21 MB
/// and 25 MB files dozens of times, and generating them byte by byte in the unoptimised test build
/// cost seconds of CPU each time. `Bytes` clones share the one buffer.
pub fn content(url: &str, n: usize) -> Bytes {
    static MADE: OnceLock<Mutex<HashMap<(String, usize), Bytes>>> = OnceLock::new();
    let made = MADE.get_or_init(Default::default);
    let key = (url.to_owned(), n);
    if let Some(b) = made.lock().unwrap().get(&key) {
        return b.clone();
    }
    let seed = url.as_bytes();
    let b = Bytes::from(
        (0..n)
            .map(|i| seed[i % seed.len()].wrapping_add((i / 7) as u8))
            .collect::<Vec<u8>>(),
    );
    made.lock().unwrap().entry(key).or_insert(b).clone()
}

/// A writer for `s` at a fast pace.
pub fn writer(s: &NotionServer) -> Writer {
    Writer::new(
        client(s, 2000, 200),
        fetch(HashMap::new(), Arc::new(AtomicUsize::new(0))),
        5 * 1024 * 1024 * 1024,
    )
}

/// A paragraph.
pub fn para(t: &str) -> Block {
    Block::Paragraph(TextBlock::new(vec![RichText::plain(t)]))
}

/// A paragraph of `runs`.
pub fn para_of(runs: Vec<RichText>) -> Block {
    Block::Paragraph(TextBlock::new(runs))
}

/// A run of text linked to `url`.
pub fn linked_run(text: &str, url: &str) -> RichText {
    RichText {
        kind: RichKind::Text {
            content: text.into(),
            link: Some(url.into()),
        },
        annotations: Default::default(),
    }
}

/// A bulleted item with children.
pub fn item(t: &str, kids: Vec<Block>) -> Block {
    Block::Bulleted(TextBlock {
        children: kids,
        ..TextBlock::new(vec![RichText::plain(t)])
    })
}

/// A table of `rows` rows and 2 columns.
pub fn table(rows: usize) -> Block {
    Block::Table {
        width: 2,
        has_column_header: true,
        rows: (0..rows)
            .map(|i| {
                vec![
                    vec![RichText::plain(format!("r{i}"))],
                    vec![RichText::plain("x")],
                ]
            })
            .collect(),
    }
}

/// A media block of a OneNote resource at `url`, the way the converter writes resources.
pub fn media(ty: &str, url: &str) -> Block {
    let source = MediaSource::Resource {
        url: url.into(),
        file_name: None,
        mime: None,
        fallback: None,
    };
    with_source(ty, source)
}

/// A media block Notion fetches itself from `url`.
pub fn external(ty: &str, url: &str) -> Block {
    if ty == "video" {
        return Block::Video { url: url.into() };
    }
    with_source(ty, MediaSource::External(url.into()))
}

fn with_source(ty: &str, source: MediaSource) -> Block {
    let caption = Vec::new();
    match ty {
        "image" => Block::Image { source, caption },
        "pdf" => Block::Pdf { source, caption },
        "file" => Block::File {
            source,
            name: None,
            caption,
        },
        other => panic!("no media block of type {other}"),
    }
}

/// The request JSON of blocks.
pub fn json_of(blocks: &[Block]) -> Vec<Value> {
    blocks.iter().map(Block::to_json).collect()
}

/// A mixed body: text, a nested list 5 deep, a table of 130 rows, 120 flat paragraphs.
pub fn mixed_body(tag: &str) -> Vec<Block> {
    let mut body = vec![para(&format!("{tag} start"))];
    let mut deep = para(&format!("{tag} leaf"));
    for d in (1..5).rev() {
        deep = item(
            &format!("{tag} level {d}"),
            vec![deep, para(&format!("{tag} side {d}"))],
        );
    }
    body.push(deep);
    body.push(table(130));
    body.push(item(
        &format!("{tag} wide"),
        (0..150).map(|i| para(&format!("{tag} w{i}"))).collect(),
    ));
    body.extend((0..120).map(|i| para(&format!("{tag} p{i}"))));
    body
}

fn plain(v: Option<&Value>) -> String {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|i| {
                    if let Some(c) = i["text"]["content"].as_str() {
                        c.to_owned()
                    } else if let Some(e) = i["equation"]["expression"].as_str() {
                        e.to_owned()
                    } else if let Some(d) = i["mention"]["date"]["start"].as_str() {
                        d.to_owned()
                    } else {
                        "Untitled".to_owned()
                    }
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What the server's dump shows for a request block (uploads as `file_upload`, ids left out), with
/// resource media replaced as the writer must: an upload when Notion takes the file, else the
/// placeholder that names it.
pub fn expected(block: &Value, resources: &HashMap<String, Resource>) -> DumpNode {
    let ty = split::block_type(block).unwrap_or("?").to_owned();
    let p = &block[&ty];
    let mut file = p["external"]["url"]
        .as_str()
        .map(|u| format!("external:{u}"));
    if let Some(res) = p["external"]["url"].as_str().and_then(|u| resources.get(u)) {
        if upload_name(res).is_some() && !res.url.contains("fail") {
            file = Some("file_upload".into());
        } else {
            return DumpNode {
                kind: "paragraph".into(),
                title: None,
                text: placeholder_text(&res.file_name),
                file: None,
                children: Vec::new(),
            };
        }
    }
    let text = match ty.as_str() {
        "table_row" => p["cells"]
            .as_array()
            .map(|c| {
                c.iter()
                    .map(|x| plain(Some(x)))
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .unwrap_or_default(),
        "equation" => p["expression"].as_str().unwrap_or("").to_owned(),
        "embed" | "bookmark" => p["url"].as_str().unwrap_or("").to_owned(),
        _ => {
            let s = plain(p.get("rich_text"));
            if s.is_empty() {
                plain(p.get("caption"))
            } else {
                s
            }
        }
    };
    DumpNode {
        kind: ty.clone(),
        title: None,
        text,
        file,
        children: split::children(block)
            .iter()
            .map(|c| expected(c, resources))
            .collect(),
    }
}

/// The start of the placeholder's text (its reason follows).
pub fn placeholder_text(name: &str) -> String {
    format!("⚠ {name} could not be carried over from OneNote: ")
}

/// Dump with upload ids replaced by `file_upload` and placeholder reasons cut, for comparison.
pub fn normalised(mut d: DumpNode) -> DumpNode {
    if d.file
        .as_deref()
        .is_some_and(|f| f.starts_with("file_upload:"))
    {
        d.file = Some("file_upload".into());
    }
    if let Some(i) = d.text.find(" could not be carried over from OneNote: ") {
        d.text
            .truncate(i + " could not be carried over from OneNote: ".len());
    }
    d.children = d.children.into_iter().map(normalised).collect();
    d
}

/// Asserts that page `id` holds exactly `blocks` (each once, in order) and has `title`.
pub fn assert_page(
    s: &NotionServer,
    id: &str,
    title: &str,
    blocks: &[Block],
    resources: &HashMap<String, Resource>,
) {
    let got = normalised(s.dump(id).expect("page exists"));
    assert_eq!(got.title.as_deref(), Some(title));
    let want: Vec<DumpNode> = blocks
        .iter()
        .map(|b| expected(&b.to_json(), resources))
        .collect();
    assert_eq!(
        got.children.len(),
        want.len(),
        "top-level block count of {title}"
    );
    for (i, (g, w)) in got.children.iter().zip(&want).enumerate() {
        assert_eq!(g, w, "{title}: top-level block {i} differs");
    }
}

/// Number of requests the server has handled.
pub fn requests(s: &NotionServer) -> usize {
    s.request_log().len()
}
