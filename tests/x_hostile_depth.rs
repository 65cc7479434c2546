//! Bounded recursion on upstream data (issue #32, item 1): every input
//! path of `x_md_get_post` that recurses (FxTwitter's `/2/status` body,
//! X's syndication body) is fed generated nesting up to 100,000 levels,
//! on a thread with a worker's stack (`WORKER_STACK_BYTES`, in the
//! unoptimised test build). The oracle is the documented rule: quotes are
//! read to `MAX_QUOTE_NESTING` levels, and a quote nested deeper is a
//! tombstone whose reason (`nested_too_deep`) says so; JSON nested past
//! `MAX_JSON_DEPTH` is an error that says that. Never a crash.
//!
//! Bodies are built as text: a `serde_json::Value` 100,000 levels deep
//! would itself overflow the test thread when built or dropped.

mod common;

use std::sync::Arc;

use common::post::{assert_valid_output, call};
use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::server::workers::WORKER_STACK_BYTES;
use xmd::x::model::parse::{MAX_JSON_DEPTH, MAX_QUOTE_NESTING, PAST_QUOTE_NESTING};
use xmd::x::tools::{ToolOutput, Tools};
use xmd::x::upstream::{FetchError, Upstream, UpstreamResponse};

const ID: &str = "1900000000000000000";

/// An in-process upstream answering `status` and `body` to every request.
struct Fixed(u16, String);

impl Upstream for Fixed {
    fn get(&self, _: &str) -> Result<UpstreamResponse, FetchError> {
        Ok(UpstreamResponse {
            status: self.0,
            retry_after: None,
            content_type: Some("application/json".into()),
            body: self.1.clone().into_bytes().into(),
        })
    }
}

/// Which provider answers, and where the nesting is.
#[derive(Debug, Clone, Copy)]
enum Path {
    /// FxTwitter: `status.quote.quote…`.
    FxQuotes,
    /// FxTwitter: arrays nested inside a kept value (`replying_to`).
    FxKept,
    /// FxTwitter: arrays nested inside a field xmd does not read.
    FxUnknown,
    /// Syndication: `quoted_tweet.quoted_tweet…`.
    SynQuotes,
    /// Syndication: arrays nested inside a `Value` field (`card`).
    SynCard,
    /// Syndication: objects nested inside `parent`.
    SynParent,
}

fn fx_status(id: u64) -> String {
    format!(
        r#""type":"status","id":"{id}","text":"level {id}","author":{{"screen_name":"deep","name":"D"}}"#
    )
}

fn syn_tweet(id: u64) -> String {
    format!(
        r#""__typename":"Tweet","id_str":"{id}","text":"level {id}","user":{{"screen_name":"deep","name":"D"}}"#
    )
}

/// The body, and the JSON depth it reaches.
fn body(path: Path, depth: usize) -> (String, usize) {
    let id: u64 = ID.parse().unwrap();
    let mut b = String::new();
    match path {
        Path::FxQuotes | Path::SynQuotes => {
            let (one, key) = match path {
                Path::FxQuotes => (fx_status as fn(u64) -> String, "quote"),
                _ => (syn_tweet as fn(u64) -> String, "quoted_tweet"),
            };
            for level in 0..=depth as u64 {
                b.push('{');
                b.push_str(&one(id + level));
                if level < depth as u64 {
                    b.push_str(&format!(r#","{key}":"#));
                }
            }
            b.push_str(&"}".repeat(depth + 1));
            match path {
                // Envelope, the post and its quotes, the last one's author.
                Path::FxQuotes => (format!(r#"{{"code":200,"status":{b}}}"#), depth + 3),
                _ => (b, depth + 2),
            }
        }
        Path::FxKept | Path::FxUnknown => {
            let key = if matches!(path, Path::FxKept) {
                "replying_to"
            } else {
                "extra"
            };
            let nest = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
            (
                format!(
                    r#"{{"code":200,"status":{{{},"{key}":{nest}}}}}"#,
                    fx_status(id)
                ),
                depth + 2,
            )
        }
        Path::SynCard => {
            let nest = format!("{}1{}", "[".repeat(depth), "]".repeat(depth));
            (format!(r#"{{{},"card":{nest}}}"#, syn_tweet(id)), depth + 1)
        }
        Path::SynParent => {
            let nest = format!("{}1{}", r#"{"parent":"#.repeat(depth), "}".repeat(depth));
            (
                format!(r#"{{{},"parent":{nest}}}"#, syn_tweet(id)),
                depth + 1,
            )
        }
    }
}

/// Runs one `x_md_get_post` on a thread with a worker's stack.
fn run_on_worker_stack(path: Path, body: String, format: &'static str) -> ToolOutput {
    std::thread::Builder::new()
        .stack_size(WORKER_STACK_BYTES)
        .spawn(move || {
            let t = match path {
                Path::FxQuotes | Path::FxKept | Path::FxUnknown => {
                    Tools::new(Arc::new(Fixed(200, body)))
                }
                _ => Tools::new(Arc::new(Fixed(503, String::new())))
                    .with_fallback(Arc::new(Fixed(200, body))),
            };
            call(
                &t,
                json!({"handle": "deep", "id": ID, "thread": "off", "format": format}),
            )
        })
        .unwrap()
        .join()
        .expect("the call ran to its end on a worker's stack")
}

/// The quote levels of the result's post, and the last one.
fn quote_chain(post: &Value) -> (usize, Value) {
    let mut levels = 0;
    let mut cur = post.clone();
    while let Some(q) = cur.get("quote").cloned() {
        levels += 1;
        cur = q;
    }
    (levels, cur)
}

fn check(path: Path, depth: usize, format: &'static str) -> Result<(), TestCaseError> {
    let (b, json_depth) = body(path, depth);
    let out = run_on_worker_stack(path, b, format);
    if json_depth > MAX_JSON_DEPTH {
        prop_assert!(out.is_error, "{path:?} {depth}: {}", out.text);
        let want = format!("nested deeper than {MAX_JSON_DEPTH} levels");
        prop_assert!(out.text.contains(&want), "{path:?} {depth}: {}", out.text);
        return Ok(());
    }
    prop_assert!(!out.is_error, "{path:?} {depth}: {}", out.text);
    assert_valid_output(&out);
    let post = &out.structured.as_ref().unwrap()["posts"][0];
    prop_assert_eq!(&post["id"], ID);
    if matches!(path, Path::FxQuotes | Path::SynQuotes) {
        let (levels, last) = quote_chain(post);
        if depth <= MAX_QUOTE_NESTING {
            prop_assert_eq!(levels, depth);
            prop_assert_eq!(&last["type"], "status");
        } else {
            // Every level read, then one tombstone that names the cut.
            prop_assert_eq!(levels, MAX_QUOTE_NESTING + 1);
            prop_assert_eq!(&last["type"], "tombstone");
            prop_assert_eq!(&last["reason"], PAST_QUOTE_NESTING);
            let msg = format!("Quotes nested deeper than {MAX_QUOTE_NESTING} levels are not read.");
            prop_assert_eq!(&last["message"], &json!(msg));
        }
    }
    Ok(())
}

fn depth() -> impl Strategy<Value = usize> {
    prop_oneof![
        1..=130usize,
        prop::sample::select(vec![
            MAX_QUOTE_NESTING - 1,
            MAX_QUOTE_NESTING,
            MAX_QUOTE_NESTING + 1,
            76,
            MAX_JSON_DEPTH - 3,
            MAX_JSON_DEPTH - 2,
            MAX_JSON_DEPTH - 1,
            MAX_JSON_DEPTH,
            MAX_JSON_DEPTH + 1,
            128,
            100_000
        ]),
        131..=100_000usize,
    ]
}

fn path() -> impl Strategy<Value = Path> {
    prop::sample::select(vec![
        Path::FxQuotes,
        Path::FxKept,
        Path::FxUnknown,
        Path::SynQuotes,
        Path::SynCard,
        Path::SynParent,
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn any_nesting_of_either_provider_is_read_or_refused_on_a_worker_stack(
        path in path(),
        depth in depth(),
        format in prop::sample::select(vec!["markdown", "json"]),
    ) {
        check(path, depth, format)?;
    }
}

/// The reported case: a syndication answer with `quoted_tweet` nested 76
/// deep aborted the process with a stack overflow. Now its JSON depth (78)
/// is refused by name; 40 quotes are read to the cap and named there.
#[test]
fn the_reported_76_deep_syndication_quote_is_refused_by_name() {
    for format in ["markdown", "json"] {
        check(Path::SynQuotes, 76, format).unwrap();
        check(Path::FxQuotes, 76, format).unwrap();
        check(Path::SynQuotes, 40, format).unwrap();
        check(Path::FxQuotes, 40, format).unwrap();
    }
}
