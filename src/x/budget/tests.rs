//! The unit tests of the budget: the measure, the cap, fitting items, and
//! cursors read back from continuation links.

use super::*;
use crate::x::structured::Structured;
use proptest::prelude::*;

proptest! {
    /// The oracle, from the definition: characters are JavaScript's
    /// (UTF-16 code units, `encode_utf16`), an ASCII character is a
    /// third of a token and any other one token per UTF-8 byte after
    /// its first.
    #[test]
    fn the_measure_counts_utf16_units_and_token_thirds(s in "\\PC{0,300}|[a-z é中😀]{0,300}") {
        let thirds: usize = s
            .chars()
            .map(|c| if c.is_ascii() { 1 } else { 3 * (c.len_utf8() - 1) })
            .sum();
        prop_assert_eq!(
            Measure::of(&s),
            Measure { chars: s.encode_utf16().count(), token_thirds: thirds }
        );
    }
}

#[test]
fn the_cap_keeps_worst_case_text_inside_a_message() {
    const _: () = assert!(
        MAX_RESULT_CHARS_LIMIT * MAX_ESCAPED_BYTES_PER_CHAR + ENVELOPE_RESERVE_BYTES
            <= MAX_MESSAGE_BYTES
    );
    const _: () = assert!(MAX_ECHOED_ID_BYTES * 2 <= ENVELOPE_RESERVE_BYTES);
    assert_eq!(MAX_PAYLOAD_BYTES, 983_040);
}

fn build_items(items: &[String], cut: Cut) -> (String, Structured, ()) {
    let mut shown: Vec<String> = items[..cut.items].to_vec();
    if let Some(c) = cut.inside {
        shown[0] = format!("{} [cut]", cut_text(&shown[0], c));
    }
    let mut text = shown.join("\n\n");
    if cut.items < items.len() || cut.inside.is_some() {
        text.push_str("\n\n> Note: continues.");
    }
    let mut sc = Structured::default();
    sc.insert_written("items", &shown);
    (text, sc, ())
}

#[test]
fn fit_keeps_whole_items_then_cuts_inside_the_first() {
    let items: Vec<String> = (0..10).map(|i| format!("{i}").repeat(100)).collect();
    let (cut, text, _, ()) = fit(10, &|| 100, 450, &mut |c| build_items(&items, c));
    assert_eq!(
        cut,
        Cut {
            items: 4,
            inside: None
        }
    );
    assert!(text.chars().count() <= 450);
    let (cut, text, _, ()) = fit(10, &|| 100, 80, &mut |c| build_items(&items, c));
    assert_eq!(
        cut,
        Cut {
            items: 1,
            inside: Some(54)
        }
    );
    assert_eq!(text.chars().count(), 80);
    let (cut, _, _, ()) = fit(10, &|| 100, 10_000, &mut |c| build_items(&items, c));
    assert_eq!(
        cut,
        Cut {
            items: 10,
            inside: None
        }
    );
}

#[test]
fn cursors_from_links_decode() {
    assert_eq!(
        unescape_cursor("thread%3A1%3A2%402%3Aab"),
        "thread:1:2@2:ab"
    );
    assert_eq!(unescape_cursor("a:b"), "a:b");
    assert_eq!(unescape_cursor("100%"), "100%");
    assert_eq!(unescape_cursor("%ff"), "%ff");
    assert_eq!(
        unescape_cursor("[Continue →](https://h.example/x/a?limit=2&cursor=profile%3Aa%3A%402%3Aab) · [Next page (2) →](https://h.example/x/a?limit=2&page=2)"),
        "profile:a:@2:ab"
    );
    assert_eq!(unescape_cursor("/a?q=b&cursor=x%3Ay&feed=top"), "x:y");
}

proptest! {
    /// Hostile text (quotes, backslashes, controls, line separators,
    /// four-byte characters) at any budget up to the cap: the message
    /// built around the fitted payload, SSE-framed, stays under 1 MiB.
    #[test]
    fn any_text_at_any_budget_fits_one_message(
        unit in prop::sample::select(vec!["\u{2028}", "\u{0}", "\"", "\\", "🦀", "é", "a\n"]),
        repeat in 1usize..40_000,
        n in 1usize..12,
        max_chars in MIN_RESULT_CHARS..=MAX_RESULT_CHARS_LIMIT,
    ) {
        let items: Vec<String> = (0..n).map(|_| unit.repeat(repeat)).collect();
        let first = items[0].chars().count();
        let (_, text, sc, ()) = fit(n, &|| first, max_chars, &mut |c| build_items(&items, c));
        prop_assert!(text.chars().count() <= max_chars);
        let id = "x".repeat(MAX_ECHOED_ID_BYTES - 2);
        let mut msg = format!(r#"{{"jsonrpc":"2.0","id":"{id}","result":{{"content":[{{"type":"text","text":"#).into_bytes();
        msg.extend(crate::json::to_vec(&text));
        msg.extend_from_slice(br#"}],"structuredContent":{"result":"#);
        msg.extend(sc.to_vec());
        msg.extend_from_slice(br#"},"isError":false,"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"xmd","version":"0.0.0"}}}}"#);
        let sse = [b"event: message\ndata: ".as_slice(), &msg, b"\n\n"].concat();
        prop_assert!(sse.len() <= MAX_MESSAGE_BYTES, "{}", sse.len());
        prop_assert!(serde_json::from_slice::<Value>(&msg).is_ok());
    }
}
