//! Hostile upstream data (issue #32): the syndication mapper on arbitrary
//! bodies (raw, or a recorded Tweet nested in itself as a quote), run on a
//! thread with a worker's stack; and the facet expander on arbitrary texts
//! and substitution lists.

use std::sync::Arc;

use serde_json::{json, Value};

use super::Input;
use crate::x::model::expand::{expand, Edit, MAX_EXPANSION_GROWTH};
use crate::x::tools::Tools;
use crate::x::upstream::{FetchError, Upstream, UpstreamResponse};

/// The syndication Tweets the tests record (`tests/fixtures/syndication`).
const TWEETS: [&str; 5] = [
    include_str!("../../tests/fixtures/syndication/tweet-plain.json"),
    include_str!("../../tests/fixtures/syndication/tweet-photos.json"),
    include_str!("../../tests/fixtures/syndication/tweet-quote.json"),
    include_str!("../../tests/fixtures/syndication/tweet-gif-card.json"),
    include_str!("../../tests/fixtures/syndication/tweet-poll-reply.json"),
];

/// One answer to every request.
struct Fixed(u16, Arc<[u8]>);

impl Upstream for Fixed {
    fn get(&self, _: &str) -> Result<UpstreamResponse, FetchError> {
        Ok(UpstreamResponse {
            status: self.0,
            retry_after: None,
            content_type: Some("application/json".into()),
            body: self.1.to_vec().into(),
        })
    }
}

/// Every `text` of the result's posts and their quotes.
fn texts(v: &Value, out: &mut Vec<String>) {
    let mut cur = Some(v);
    while let Some(p) = cur {
        if let Some(t) = p.get("text").and_then(Value::as_str) {
            out.push(t.to_string());
        }
        cur = p.get("quote");
    }
}

/// `x_md_get_post` with FxTwitter down (503) and the syndication endpoint
/// answering the body, on a thread with `WORKER_STACK_BYTES`: never a
/// panic nor a stack overflow; an error has no `structuredContent`; a
/// success validates as one post whose id is the one asked for, and every
/// post or quote text is at most the body's length (links expanded once
/// each, from strings the body holds).
///
/// Input: `mode`, then either the raw body (`mode & 1 == 0`), or a fixture
/// choice byte and a nesting byte: the fixture as the `quoted_tweet` of
/// itself `nesting` times (up to 255 levels).
pub fn check_syndication(data: &[u8]) {
    let mut input = Input::new(data);
    let mode = input.byte();
    let format = ["markdown", "json", "obsidian", "markdown"][usize::from((mode >> 1) & 3)];
    let (body, id): (Vec<u8>, String) = if mode & 1 == 0 {
        (input.rest().to_vec(), "1".into())
    } else {
        let t: Value = serde_json::from_str(TWEETS[usize::from(input.byte()) % TWEETS.len()])
            .expect("fixtures are JSON");
        let id = t["id_str"].as_str().unwrap_or("1").to_string();
        let nesting = usize::from(input.byte());
        // Built as text: a `Value` this deep is itself recursive to drop.
        let one = t.to_string();
        let inner = &one[1..one.len() - 1];
        let mut s = String::new();
        for _ in 0..nesting {
            s.push('{');
            s.push_str(inner);
            s.push_str(",\"quoted_tweet\":");
        }
        s.push_str(&one);
        s.push_str(&"}".repeat(nesting));
        (s.into_bytes(), id)
    };
    let body: Arc<[u8]> = Arc::from(body);
    let served = Arc::clone(&body);
    let id2 = id.clone();
    let out = std::thread::Builder::new()
        .stack_size(crate::server::workers::WORKER_STACK_BYTES)
        .spawn(move || {
            let t = Tools::new(Arc::new(Fixed(503, Arc::from(&b""[..]))))
                .with_fallback(Arc::new(Fixed(200, served)));
            let args = json!({"handle": "a", "id": id2, "thread": "off", "format": format});
            let call = Tools::prepare("x_md_get_post", Some(&args)).expect("valid arguments");
            t.run(&call)
        })
        .expect("spawn")
        .join()
        .expect("the call ran to its end on a worker's stack");
    assert!(!out.text.is_empty());
    if out.is_error {
        assert!(out.structured.is_none());
        return;
    }
    let s = out.structured.expect("a success has structuredContent");
    let posts = s["posts"].as_array().expect("posts");
    assert_eq!(posts.len(), 1, "{s}");
    let got = posts[0]["id"].as_str().expect("an id");
    assert_eq!(
        got.trim_start_matches('0'),
        id.trim_start_matches('0'),
        "{s}"
    );
    let mut all = Vec::new();
    texts(&posts[0], &mut all);
    for t in all {
        assert!(
            t.len() <= body.len(),
            "{} bytes of text from a {}-byte body",
            t.len(),
            body.len()
        );
    }
}

/// Originals the expander is given besides slices of the text.
const ORIGINALS: [&str; 4] = ["https://t.co/a", "a", "😀", "&amp;"];

/// The facet expander on an input-chosen text and list: never a panic;
/// the output is the text less the applied originals plus their
/// replacements (so at most the text plus the sum of the replacements),
/// growth within [`MAX_EXPANSION_GROWTH`], and the work counter linear;
/// with no edit applied the output is the text.
///
/// Input: `text length` (a byte, times 4), the text (lossy UTF-8), then
/// per edit: `kind`, `start`, `len`, `copies`: `kind & 3` picks the
/// indices (none, in UTF-16 units, in code points, wild), `kind >> 2` the
/// original (a slice of the text at the offsets, or one of a few
/// strings), and the replacement is the original `copies` times (a
/// self-containing one).
pub fn check_expand(data: &[u8]) {
    let mut input = Input::new(data);
    let n = usize::from(input.byte()) * 4;
    let text = String::from_utf8_lossy(input.take(n)).into_owned();
    let chars: Vec<char> = text.chars().collect();
    // (indices, original, replacement) of each edit.
    type Owned = (Option<(u64, u64)>, String, String);
    let mut owned: Vec<Owned> = Vec::new();
    while !input.is_empty() {
        let (kind, start, len, copies) = (input.byte(), input.byte(), input.byte(), input.byte());
        let (a, b) = (u64::from(start), u64::from(start) + u64::from(len % 24));
        let indices = match kind & 3 {
            0 => None,
            1 | 2 => Some((a, b)),
            _ => Some((u64::from(len) << 40, a)),
        };
        let original = if kind >> 2 == 0 {
            let s = usize::from(start).min(chars.len());
            let e = (s + usize::from(len % 24)).min(chars.len());
            chars[s..e].iter().collect()
        } else {
            ORIGINALS[usize::from(kind >> 2) % ORIGINALS.len()].to_string()
        };
        let replacement = original.repeat(usize::from(copies % 5));
        owned.push((indices, original, replacement));
    }
    let edits: Vec<Edit> = owned
        .iter()
        .map(|(i, o, r)| Edit {
            indices: *i,
            original: o,
            replacement: r,
        })
        .collect();
    let x = expand(&text, 0, &edits);
    assert_eq!(x.applied.len(), edits.len());
    let (mut less, mut more, mut sum) = (0usize, 0usize, 0usize);
    for (e, applied) in edits.iter().zip(&x.applied) {
        sum += e.replacement.len();
        if *applied {
            assert!(!e.original.is_empty());
            less += e.original.len();
            more += e.replacement.len();
        }
    }
    assert_eq!(x.text.len() + less, text.len() + more);
    assert!(more.saturating_sub(less) <= MAX_EXPANSION_GROWTH);
    assert!(
        x.work <= 8 * (text.len() + edits.len() + sum) + 64,
        "work {}",
        x.work
    );
    if more == 0 && less == 0 {
        assert_eq!(x.text, text);
    }
}
