//! Issue #30 item 3: results every client keeps inline. Claude Code moves a
//! tool result over 50,000 characters (JavaScript string length, UTF-16
//! code units) or 25,000 tokens to a file. At the default budget, any
//! result, of any script, stays under both: generated threads and lists of
//! ASCII, CJK, emoji and mixed text, measured by UTF-16 length and by the
//! documented conservative token estimate (an ASCII character a third of a
//! token, any other character one token per UTF-8 byte after its first),
//! computed here independently of `x::budget::Measure`. And every tool
//! declares `_meta["anthropic/maxResultSizeChars"]` at the configured
//! budget in `tools/list`.

mod common;
mod util;

use common::browse::tools_for;
use common::fake_upstream::{Answer, FakeUpstream};
use proptest::prelude::*;
use serde_json::{json, Value};
use util::*;
use xmd::x::tools::Tools;

/// Claude Code's ceilings.
const CLAUDE_CHARS: usize = 50_000;
const CLAUDE_TOKENS: usize = 25_000;

/// The oracle's token estimate (the documented rule, char by char).
fn estimated_tokens(s: &str) -> usize {
    let thirds: usize = s
        .chars()
        .map(|c| {
            if c.is_ascii() {
                1
            } else {
                3 * (c.len_utf8() - 1)
            }
        })
        .sum();
    thirds.div_ceil(3)
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

const FIRST_ID: u64 = 1_900_000_000_000_000_000;

fn status(i: u64, text: &str, parent: Option<u64>) -> Value {
    json!({
        "type": "status",
        "id": (FIRST_ID + i).to_string(),
        "url": format!("https://x.com/demo_author/status/{}", FIRST_ID + i),
        "text": text,
        "created_at": "Tue Aug 11 16:05:42 +0000 2026",
        "created_timestamp": 1786464342 + i,
        "likes": 1, "reposts": 0, "replies": 0,
        "author": {"id": "1625427172309102593", "screen_name": "demo_author", "name": "Demo Author"},
        "replying_to": parent.map(|p| json!({"screen_name": "demo_author", "status": (FIRST_ID + p).to_string()})),
    })
}

/// Text of one script: plain ASCII words, CJK ideographs, emoji (beyond
/// the BMP: two UTF-16 units, four UTF-8 bytes), or a mix with Cyrillic,
/// accented Latin and kana.
fn script() -> impl Strategy<Value = Vec<char>> {
    let ascii: Vec<char> = "abcdefghij klmnop qrstuv wxyz 0123456789 .,;!?\n"
        .chars()
        .collect();
    let cjk: Vec<char> = (0x4e00u32..0x4e00 + 400)
        .filter_map(char::from_u32)
        .collect();
    let emoji: Vec<char> = (0x1f300u32..0x1f300 + 200)
        .filter_map(char::from_u32)
        .collect();
    let mut mixed = ascii.clone();
    mixed.extend(cjk.iter().take(50));
    mixed.extend(emoji.iter().take(50));
    mixed.extend("жизньéàüñあいうえお".chars());
    prop::sample::select(vec![ascii, cjk, emoji, mixed])
}

fn text_of(alphabet: &[char], seed: u64, chars: usize) -> String {
    let mut x = seed | 1;
    (0..chars)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            alphabet[(x % alphabet.len() as u64) as usize]
        })
        .collect()
}

fn assert_fits_claude_code(t: &str) -> Result<(), TestCaseError> {
    let (chars, tokens) = (utf16_len(t), estimated_tokens(t));
    prop_assert!(chars <= CLAUDE_CHARS, "{} UTF-16 units", chars);
    prop_assert!(tokens <= CLAUDE_TOKENS, "{} estimated tokens", tokens);
    // And within the budget itself: 40,000 characters, 20,000 tokens.
    prop_assert!(chars <= 40_000, "{} UTF-16 units", chars);
    prop_assert!(tokens <= 20_000, "{} estimated tokens", tokens);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A thread of generated posts read at the default budget (each
    /// continuation too): every result fits Claude Code inline, and the
    /// walk reads every post. The old default (60,000 characters) failed
    /// for ASCII at once, and counted neither emoji as two characters
    /// nor CJK as more than one token each.
    #[test]
    fn default_thread_results_fit_claude_code(
        alphabet in script(),
        n in 2u64..16,
        len in 2_000usize..30_000,
        seed in any::<u64>(),
    ) {
        let up = FakeUpstream::start();
        let rows: Vec<Value> = (0..n)
            .map(|i| status(i, &text_of(&alphabet, seed ^ i, len), i.checked_sub(1)))
            .collect();
        up.on(
            &format!("/2/thread/{FIRST_ID}"),
            Answer::json(200, &json!({"code": 200, "status": rows[0], "thread": rows}).to_string()),
        );
        let tools = tools_for(&up);
        let mut args = json!({"handle": "demo_author", "id": FIRST_ID.to_string(), "replies": "off"});
        let mut seen = 0;
        for _ in 0..=n {
            let call = Tools::prepare("x_md_get_post", Some(&args)).unwrap();
            let out = tools.run(&call);
            prop_assert!(!out.is_error, "{}", out.text);
            assert_fits_claude_code(&out.text)?;
            let sc = out.structured.unwrap();
            seen += sc["posts"].as_array().unwrap().len();
            match sc.get("next_cursor").and_then(Value::as_str) {
                Some(c) => args["cursor"] = json!(c),
                None => break,
            }
        }
        prop_assert_eq!(seen as u64, n);
    }

    /// A search page of generated rows at the default budget: the result
    /// fits Claude Code inline.
    #[test]
    fn default_list_results_fit_claude_code(
        alphabet in script(),
        n in 1u64..20,
        len in 500usize..8_000,
        seed in any::<u64>(),
    ) {
        let up = FakeUpstream::start();
        let rows: Vec<Value> = (0..n).map(|i| status(i, &text_of(&alphabet, seed ^ i, len), None)).collect();
        up.on(
            "/2/search?q=generated&feed=latest&count=20",
            Answer::json(200, &json!({"code": 200, "results": rows, "cursor": {"bottom": null}}).to_string()),
        );
        let tools = tools_for(&up);
        let call = Tools::prepare("x_md_search_posts", Some(&json!({"q": "generated"}))).unwrap();
        let out = tools.run(&call);
        prop_assert!(!out.is_error, "{}", out.text);
        assert_fits_claude_code(&out.text)?;
    }
}

/// The budget's own measure agrees with the oracle on every script.
#[test]
fn the_measure_is_utf16_length_and_the_documented_estimate() {
    for s in [
        "plain ascii text",
        "漢字かなカナ",
        "🦀🎉👍🏽",
        "жизнь é ü ñ",
        "mixed 漢 🦀 é\n",
    ] {
        let m = xmd::x::budget::Measure::of(s);
        assert_eq!(m.chars, utf16_len(s), "{s}");
        assert_eq!(m.tokens(), estimated_tokens(s), "{s}");
    }
    // The default budget: Claude Code's ceilings less a fifth.
    assert_eq!(xmd::config::DEFAULT_MAX_RESULT_CHARS, 40_000);
    assert_eq!(xmd::x::budget::token_budget(40_000), 20_000);
}

fn tools_list(x: &Xmd, version: &str) -> Value {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let v = format!("MCP-Protocol-Version: {version}");
    let h = [
        "Content-Type: application/json",
        "Accept: application/json, text/event-stream",
        v.as_str(),
    ];
    let r = roundtrip(x, &post(&x.host(), &h, body));
    assert_eq!(r.status, 200, "{}", r.text());
    r.json()["result"]["tools"].clone()
}

#[test]
fn every_tool_declares_the_configured_budget_to_claude_code() {
    for (args, want) in [
        (&[][..], 40_000),
        (&["--max-result-chars", "120000"][..], 120_000),
    ] {
        let x = Xmd::start(args);
        for version in ["2025-11-25", "2025-06-18"] {
            let tools = tools_list(&x, version);
            assert_eq!(tools.as_array().unwrap().len(), 8);
            for t in tools.as_array().unwrap() {
                assert_eq!(
                    t["_meta"],
                    json!({"anthropic/maxResultSizeChars": want}),
                    "{version} {}",
                    t["name"]
                );
            }
        }
        // 2025-03-26 defines no `_meta` on a tool.
        for t in tools_list(&x, "2025-03-26").as_array().unwrap() {
            assert_eq!(t.get("_meta"), None);
        }
    }
}
