//! Upstream text on the error path (issue #32, item 7): an `isError` text
//! that echoes upstream words (FxTwitter's `message`, a string serde
//! quotes in a shape error) escapes them for Markdown as the result's
//! warnings are. The oracle is a CommonMark parser (pulldown-cmark, tables
//! and strikethrough on): the text parses as one plain paragraph (xmd's
//! own code spans only) whose visible text is the message as sent.

mod common;

use std::sync::Arc;

use common::cmark::{norm, plain};
use common::post::call;
use proptest::prelude::*;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::json;
use xmd::x::tools::Tools;
use xmd::x::upstream::{FetchError, Upstream, UpstreamResponse};

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

/// The events of `md` other than its paragraph and text, its code spans,
/// and its visible text.
fn parse(md: &str) -> (Vec<String>, Vec<String>, String) {
    let (mut other, mut code, mut text) = (Vec::new(), Vec::new(), String::new());
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph) => {}
            Event::Text(t) => text.push_str(&t),
            Event::Code(c) => code.push(c.to_string()),
            e => other.push(format!("{e:?}")),
        }
    }
    (other, code, text)
}

fn message() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![
            "[a](https://evil.example/)",
            "![i](https://evil.example/i.png)",
            "<b>",
            "<img src=x>",
            "**",
            "*",
            "_",
            "__x__",
            "`",
            "~~",
            "#",
            "> ",
            "- ",
            "1. ",
            "|",
            "\\",
            "&amp;",
            "&#42;",
            "<https://evil.example>",
            "https://t.co/x",
            "\n",
            "\u{202E}",
            "word",
            " ",
            "é",
        ]),
        1..12,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn an_upstream_message_is_plain_text_in_the_error(m in message()) {
        let body = json!({"code": 400, "message": m}).to_string();
        let t = Tools::new(Arc::new(Fixed(400, body)));
        let out = call(&t, json!({"handle": "a", "id": "20", "thread": "off"}));
        prop_assert!(out.is_error);
        let (other, code, text) = parse(&out.text);
        prop_assert!(other.is_empty() && code.is_empty(), "{:?} {:?} from {:?}", other, code, out.text);
        // Whitespace runs collapse to one space and the ends are trimmed,
        // as in any inline position.
        let want = format!("FxTwitter API error: {}. (HTTP 502, code fxtwitter_error)", norm(&m));
        prop_assert_eq!(norm(&plain(&text)), norm(&plain(&want)));
    }

    #[test]
    fn an_upstream_string_quoted_in_a_shape_error_is_plain_text(m in message()) {
        let body = json!({"code": 200, "status": {"type": "status", "id": "20", "author": m}}).to_string();
        let t = Tools::new(Arc::new(Fixed(200, body)));
        let out = call(&t, json!({"handle": "a", "id": "20", "thread": "off"}));
        prop_assert!(out.is_error);
        let (other, code, text) = parse(&out.text);
        prop_assert!(other.is_empty(), "{:?} from {:?}", other, out.text);
        prop_assert_eq!(code, vec!["status.author".to_string()], "{}", out.text);
        prop_assert!(text.contains("invalid type: string \""), "{}", text);
    }
}

#[test]
fn a_link_in_an_upstream_message_is_not_a_link() {
    let body = json!({"code": 400, "message": "see [docs](https://evil.example/) *now*"});
    let t = Tools::new(Arc::new(Fixed(400, body.to_string())));
    let out = call(&t, json!({"handle": "a", "id": "20", "thread": "off"}));
    assert_eq!(
        out.text,
        "FxTwitter API error: see \\[docs\\](https://evil.example/) \\*now\\*. (HTTP 502, code fxtwitter_error)"
    );
}
