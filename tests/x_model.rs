//! The typed FxTwitter model (issue 15 item 3): tolerant of ids sent as
//! JSON numbers (exact for any u64), of lone UTF-16 surrogate escapes,
//! of unknown fields and of missing optional fields; and a body of the
//! wrong shape is a distinct error naming what was wrong, never "not
//! found". Properties are judged by independent oracles: `u64`'s own
//! `to_string`, and `char::decode_utf16` with U+FFFD replacement.

mod common;

use common::fake_upstream::{Answer, FakeUpstream};
use common::post::{call, ok, status_body};
use proptest::prelude::*;
use serde_json::json;
use xmd::x::model::parse::{parse, repair_surrogates};
use xmd::x::model::status::{Page, ProfileEnvelope, Status, StatusEnvelope};

const ID: &str = "1800000000000000001";

fn tools_for(fake: &FakeUpstream) -> xmd::x::tools::Tools {
    common::browse::tools_for(fake)
}

/// One piece of a generated JSON string: a character, or a raw UTF-16
/// surrogate written as a `\uXXXX` escape (upper or lower case hex).
#[derive(Debug, Clone)]
enum Unit {
    Char(char),
    Surrogate(u16, bool),
}

fn unit() -> impl Strategy<Value = Unit> {
    prop_oneof![
        4 => any::<char>().prop_map(Unit::Char),
        // Characters that look like the start of an escape.
        2 => prop::sample::select(vec!['\\', 'u', 'd', 'D', '8', 'c', '"']).prop_map(Unit::Char),
        3 => (0xD800u16..=0xDFFF, any::<bool>()).prop_map(|(s, up)| Unit::Surrogate(s, up)),
    ]
}

/// The JSON string literal for `units` (characters escaped by serde_json).
fn literal(units: &[Unit]) -> String {
    let mut out = String::from("\"");
    for u in units {
        match u {
            Unit::Char(c) => {
                let one = serde_json::to_string(&c.to_string()).unwrap();
                out.push_str(&one[1..one.len() - 1]);
            }
            Unit::Surrogate(s, true) => out.push_str(&format!("\\u{s:04X}")),
            Unit::Surrogate(s, false) => out.push_str(&format!("\\u{s:04x}")),
        }
    }
    out.push('"');
    out
}

/// The oracle: the UTF-16 code units decoded with every unpaired
/// surrogate replaced by U+FFFD.
fn oracle(units: &[Unit]) -> String {
    let mut code = Vec::new();
    for u in units {
        match u {
            Unit::Char(c) => {
                let mut b = [0u16; 2];
                code.extend_from_slice(c.encode_utf16(&mut b));
            }
            Unit::Surrogate(s, _) => code.push(*s),
        }
    }
    char::decode_utf16(code)
        .map(|r| r.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// Any u64 id, as a JSON number or a string, in a status, its author
    /// and a list row, reads as the same exact decimal string.
    #[test]
    fn any_u64_id_is_exact(n in any::<u64>(), as_number in any::<bool>()) {
        let id = if as_number { n.to_string() } else { format!("\"{n}\"") };
        let body = format!(
            r#"{{"code":200,"status":{{"type":"status","id":{id},"text":"t","author":{{"id":{id},"screen_name":"a"}}}}}}"#
        );
        let env: StatusEnvelope = parse(body.as_bytes(), "a status answer").unwrap();
        let want = n.to_string();
        let s = env.status.unwrap();
        prop_assert_eq!(s.id(), Some(want.as_str()));
        let author_id = s.author.unwrap().id.unwrap();
        prop_assert_eq!(author_id.as_str(), want.as_str());
        let page = format!(r#"{{"results":[{{"type":"status","id":{id}}}],"cursor":{{"bottom":"b"}}}}"#);
        let p: Page<Status> = parse(page.as_bytes(), "a list page").unwrap();
        let rows = p.results.unwrap();
        prop_assert_eq!(rows[0].id(), Some(want.as_str()));
        // Serialized back as a string.
        let out = serde_json::to_value(&rows[0]).unwrap();
        prop_assert_eq!(&out["id"], &json!(n.to_string()));
    }

    /// Any string with lone surrogate escapes inserted parses (the
    /// document is not rejected), with U+FFFD exactly where the oracle
    /// puts it; valid pairs stay the characters they encode.
    #[test]
    fn lone_surrogates_become_replacement_characters(units in prop::collection::vec(unit(), 0..24)) {
        let lit = literal(&units);
        let body = format!(r#"{{"status":{{"type":"status","id":"1","text":{lit}}}}}"#);
        let env: StatusEnvelope = parse(body.as_bytes(), "a status answer").unwrap();
        prop_assert_eq!(env.status.unwrap().text, oracle(&units));
        // The same repair serves the `Value` path.
        let v: serde_json::Value = serde_json::from_str(&repair_surrogates(&body)).unwrap();
        prop_assert_eq!(v["status"]["text"].as_str().unwrap(), oracle(&units));
    }

    /// A lone surrogate in a value the model keeps as sent (`replying_to`,
    /// a facet's `indices`), which serde_json does not decode and so never
    /// rejects, is repaired too, also when it is the only one in the body:
    /// the status serializes to JSON any reader accepts, with U+FFFD
    /// exactly where the oracle puts it.
    #[test]
    fn lone_surrogates_in_values_kept_as_sent_are_repaired(
        units in prop::collection::vec(unit(), 0..24),
        in_text in any::<bool>(),
    ) {
        let lit = literal(&units);
        let text = if in_text { lit.clone() } else { "\"t\"".to_string() };
        let body = format!(
            r#"{{"status":{{"type":"status","id":"1","text":{text},"replying_to":{{"screen_name":{lit}}},"raw_text":{{"text":"t","facets":[{{"type":"url","indices":[{lit},1]}}]}}}}}}"#
        );
        let env: StatusEnvelope = parse(body.as_bytes(), "a status answer").unwrap();
        let out = serde_json::to_string(&env.status.unwrap()).unwrap();
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        prop_assert_eq!(v["replying_to"]["screen_name"].as_str().unwrap(), oracle(&units));
        prop_assert_eq!(v["raw_text"]["facets"][0]["indices"][0].as_str().unwrap(), oracle(&units));
    }

    /// Any finite float the upstream sends where the model keeps a JSON
    /// number (`created_timestamp`), in any spelling (shortest, exponent,
    /// 17 significant digits, 25 digits that need correct rounding), is
    /// the same number once the post is serialized. The oracle is Rust's
    /// own float parser, which rounds correctly (IEEE 754 nearest-even).
    /// It holds because serde_json is built with `float_roundtrip`; the
    /// shipped binary has the same features as this test
    /// (.ci/features-check.sh), and .ci/run's `cli float` check reads one
    /// such float through the release binary.
    #[test]
    fn any_float_number_is_kept_exactly(bits in any::<u64>(), spelling in 0..4u8) {
        let f = f64::from_bits(bits);
        prop_assume!(f.is_finite());
        let text = match spelling {
            0 => format!("{f:?}"),
            1 => format!("{f:e}"),
            2 => format!("{f:.16e}"),
            _ => format!("{f:.24e}"),
        };
        let want: f64 = text.parse().unwrap();
        let body = format!(r#"{{"status":{{"type":"status","id":"1","created_timestamp":{text}}}}}"#);
        let env: StatusEnvelope = parse(body.as_bytes(), "a status answer").unwrap();
        let out = serde_json::to_string(&env.status.unwrap()).unwrap();
        // The number as written, not as serde_json would read it back.
        let fields: std::collections::HashMap<String, Box<serde_json::value::RawValue>> =
            serde_json::from_str(&out).unwrap();
        let kept = fields["created_timestamp"].get();
        let got: f64 = kept.parse().unwrap();
        prop_assert_eq!(got.to_bits(), want.to_bits(), "{} came back as {}", text, kept);
    }
}

#[test]
fn repair_is_free_without_surrogates() {
    let body = r#"{"text":"caf\u00e9 \\ud800 \ud83d\ude00"}"#;
    assert!(matches!(
        repair_surrogates(body),
        std::borrow::Cow::Borrowed(_)
    ));
    assert_eq!(
        repair_surrogates(r#"["\ud800x","\uDC00","\ud83d\ude00","\\\ud800"]"#),
        r#"["\ufffdx","\ufffd","\ud83d\ude00","\\\ufffd"]"#
    );
}

#[test]
fn unknown_fields_are_ignored_and_missing_ones_default() {
    let body = r#"{"code":200,"status":{"type":"status","id":"5","brand_new":{"deep":[1,{"x":null}]},
        "author":{"screen_name":"a","future_field":[true]},"media":{"all":[{"type":"photo","url":"u","altText":"alt","shiny":1}],"newkind":[]}}}"#;
    let env: StatusEnvelope = parse(body.as_bytes(), "a status answer").unwrap();
    let mut s = env.status.unwrap();
    s.normalize(0);
    assert_eq!(s.text, "");
    assert_eq!(s.likes, None);
    assert!(s.quote.is_none());
    assert_eq!(
        serde_json::to_value(&s).unwrap(),
        json!({"type":"status","id":"5","text":"","author":{"screen_name":"a"},
            "media":{"all":[{"type":"photo","url":"u","alt":"alt","altText":"alt"}]}})
    );
    let empty: Status = parse(b"{}", "a status").unwrap();
    assert_eq!(serde_json::to_value(&empty).unwrap(), json!({"text": ""}));
    assert!(!empty.is_status());
    // Rows that are not objects are skipped; `results: null` is empty.
    let p: Page<Status> = parse(
        br#"{"results":[1,"x",null,[],{"id":2}],"cursor":null}"#,
        "a list page",
    )
    .unwrap();
    assert_eq!(p.bottom(), None);
    assert_eq!(p.results.map(|r| r.len()), Some(1));
    let p: Page<Status> = parse(br#"{"results":null}"#, "a list page").unwrap();
    assert_eq!(p.results.map(|r| r.len()), Some(0));
    // No `results` at all is told apart from an empty list (a list tool
    // answers it as a shape error), and an array is not a page.
    let p: Page<Status> = parse(br#"{"code":200}"#, "a list page").unwrap();
    assert!(p.results.is_none());
    let e = parse::<Page<Status>>(b" []", "a list page").unwrap_err();
    assert_eq!(
        e.to_string(),
        "FxTwitter upstream returned an unexpected response (not the JSON it should send). (HTTP 502, code upstream_invalid_response)"
    );
}

#[test]
fn video_formats_become_variants() {
    let body = br#"{"type":"status","id":"1","media":{"videos":[{"type":"video","duration":15.24,
        "formats":[{"url":"u1","container":"m3u8"},{"url":"u2","container":"mp4","bitrate":256000},{"container":"mp4"}]}]}}"#;
    let mut s: Status = parse(body, "a status").unwrap();
    s.normalize(0);
    let v = serde_json::to_value(&s.media.unwrap().videos.unwrap()[0]).unwrap();
    assert_eq!(v["duration_ms"], json!(15240));
    assert_eq!(
        v["variants"],
        json!([{"url":"u1","content_type":"application/vnd.apple.mpegurl"},{"url":"u2","content_type":"video/mp4","bitrate":256000}])
    );
}

#[test]
fn a_wrong_shape_names_the_field() {
    let cases: [(&[u8], &str); 5] = [
        (
            br#"{"code":200,"status":{"type":"status","id":"1","author":5}}"#,
            "FxTwitter answered a status answer that is not the expected shape: `status.author`: invalid type: integer `5`, expected a user object. (HTTP 502, code upstream_invalid_response)",
        ),
        (
            br#"{"code":200,"status":{"id":{"n":1}}}"#,
            "FxTwitter answered a status answer that is not the expected shape: `status.id`: invalid type: map, expected an id (a decimal string or a non-negative integer). (HTTP 502, code upstream_invalid_response)",
        ),
        (
            br#"{"code":200,"status":{"id":"1","quote":{"id":"2","author":{"website":"w"}}}}"#,
            "FxTwitter answered a status answer that is not the expected shape: `status.quote.author.website`: invalid type: string \"w\", expected a website object. (HTTP 502, code upstream_invalid_response)",
        ),
        (
            br#"{"code":200,"status":{"id":"1","media":{"all":[{"formats":7}]}}}"#,
            "FxTwitter answered a status answer that is not the expected shape: `status.media.items.formats`: invalid type: integer `7`, expected a sequence. (HTTP 502, code upstream_invalid_response)",
        ),
        (
            br#"{"code":200,"status":[1]}"#,
            "FxTwitter answered a status answer that is not the expected shape: `status`: invalid type: sequence, expected a status object. (HTTP 502, code upstream_invalid_response)",
        ),
    ];
    for (body, want) in cases {
        let e = parse::<StatusEnvelope>(body, "a status answer").unwrap_err();
        assert_eq!(e.to_string(), want);
    }
    let e = parse::<Page<Status>>(
        br#"{"results":[{"id":"1"},{"id":"2","author":[]}]}"#,
        "a list page",
    )
    .unwrap_err();
    assert_eq!(e.message, "FxTwitter answered a list page that is not the expected shape: `results[1].author`: invalid type: sequence, expected a user object.");
    let e = parse::<ProfileEnvelope>(br#"{"code":200,"user":"demo"}"#, "a profile").unwrap_err();
    assert_eq!(e.message, "FxTwitter answered a profile that is not the expected shape: `user`: invalid type: string \"demo\", expected a user object.");
    // Not JSON, or not an object: the older, general error.
    for body in [&b"<html>"[..], b"[1]", b"{\"a\":"] {
        let e = parse::<StatusEnvelope>(body, "a status answer").unwrap_err();
        assert_eq!(
            e.message,
            "FxTwitter upstream returned an unexpected response (not the JSON it should send)."
        );
    }
}

#[test]
fn a_status_whose_id_is_a_number_is_served_exactly() {
    // 2^53 + 1: a double would read 9007199254740992.
    let big = 9_007_199_254_740_993u64;
    let fake = FakeUpstream::start();
    let body =
        status_body(ID, json!({})).replace(&format!("\"id\":\"{ID}\""), &format!("\"id\":{big}"));
    assert!(body.contains(&format!("\"id\":{big}")));
    fake.on(&format!("/2/status/{ID}"), Answer::json(200, &body));
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": ID, "thread": "off"}),
    );
    let s = out.structured.unwrap();
    assert_eq!(s["posts"][0]["id"], json!(big.to_string()));
    assert!(out.text.contains(&format!("post {ID}")), "{}", out.text);
}

#[test]
fn a_lone_surrogate_does_not_fail_the_post() {
    let fake = FakeUpstream::start();
    let body = status_body(ID, json!({"text": "PLACEHOLDER"})).replace("PLACEHOLDER", "a\\ud800b");
    fake.on(&format!("/2/status/{ID}"), Answer::json(200, &body));
    let out = ok(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": ID, "thread": "off"}),
    );
    assert_eq!(
        out.structured.unwrap()["posts"][0]["text"],
        json!("a\u{fffd}b")
    );
    assert!(out.text.contains("a\u{fffd}b"), "{}", out.text);
}

/// A value kept as sent that no JSON reader's number or nesting limits
/// admit (`1e400`, a 400-digit number), pretty-printed by the upstream:
/// the post is still served whole, and its reply is valid JSON (it was
/// cut JSON, and the post read "Unknown … no text").
#[test]
fn a_kept_value_past_a_readers_limits_does_not_break_the_post() {
    let nines = "9".repeat(400);
    for kept in ["[1e400,\n 2]", "{ \"n\" : -1E+999 }", nines.as_str()] {
        let fake = FakeUpstream::start();
        let body = status_body(ID, json!({"text": "hi there", "replying_to": "KEPT"}))
            .replace("\"KEPT\"", kept);
        fake.on(&format!("/2/status/{ID}"), Answer::json(200, &body));
        let out = ok(
            &tools_for(&fake),
            json!({"handle": "example_user", "id": ID, "thread": "off"}),
        );
        assert!(out.text.contains("hi there"), "{kept}: {}", out.text);
        let s = out.structured.unwrap();
        assert_eq!(s["posts"][0]["text"], "hi there", "{kept}");
        assert_eq!(s["posts"][0].get("replying_to"), None, "{kept}");
    }
}

#[test]
fn a_status_of_the_wrong_shape_is_not_not_found() {
    let fake = FakeUpstream::start();
    let body = status_body(ID, json!({"author": "example_user"}));
    fake.on(&format!("/2/status/{ID}"), Answer::json(200, &body));
    let out = call(
        &tools_for(&fake),
        json!({"handle": "example_user", "id": ID, "thread": "off"}),
    );
    assert!(out.is_error);
    assert_eq!(
        out.text,
        "FxTwitter answered a status answer that is not the expected shape: `status.author`: invalid type: string \"example_user\", expected a user object. (HTTP 502, code upstream_invalid_response)"
    );
}

#[test]
fn a_profile_of_the_wrong_shape_names_the_field() {
    let fake = FakeUpstream::start();
    fake.on(
        "/2/profile/demo",
        Answer::json(
            200,
            r#"{"code":200,"user":{"screen_name":"demo","verification":true}}"#,
        ),
    );
    fake.on(
        "/2/profile/demo/statuses?count=20&with_replies=false",
        Answer::json(
            200,
            r#"{"code":200,"results":[],"cursor":{"top":null,"bottom":null}}"#,
        ),
    );
    let text = common::browse::err(
        &tools_for(&fake),
        "x_md_get_profile",
        json!({"handle": "demo"}),
    );
    assert_eq!(
        text,
        "FxTwitter answered a profile that is not the expected shape: `user.verification`: invalid type: boolean `true`, expected a verification object. (HTTP 502, code upstream_invalid_response)"
    );
}

#[test]
fn poll_card_article_and_note_are_typed_and_tolerant() {
    let body = br#"{"type":"status","id":"1",
        "poll":{"choices":[{"label":"Yes","count":3,"percentage":75.5,"extra":1},{"label":null,"count":"x"}],
            "total_votes":4.0,"ends_at":"2026-08-13T08:14:20Z","time_left_en":"Final results","voters":[]},
        "card":{"title":"T","description":null,"url":"https://e.example/","domain":"e.example","image":5,"binding":{}},
        "article":{"id":12,"title":"A","preview_text":"P","cover_media":{"media_info":{"original_img_url":"https://i.example/c.jpg","w":1}},
            "content":{"blocks":[{"key":"k","type":"header-one","text":"H","data":{}},{"text":"p"}],"entityMap":{}}},
        "community_note":{"text":"N https://t.co/a","facets":[{"type":"url","original":"https://t.co/a","replacement":"https://n.example/"}],
            "entities":[{"fromIndex":0,"ref":{"type":"TimelineUrl","url":"https://b.example/"}},{"ref":null}]}}"#;
    let s: Status = parse(body, "a status").unwrap();
    let poll = s.poll.as_ref().unwrap();
    assert_eq!(poll.total_votes, Some(4));
    assert_eq!(poll.choices().len(), 2);
    assert_eq!(poll.choices()[0].label.as_deref(), Some("Yes"));
    assert_eq!(poll.choices()[0].count, Some(3));
    assert_eq!(poll.choices()[1].label, None);
    assert_eq!(poll.choices()[1].count, None);
    let art = s.article.as_ref().unwrap();
    assert_eq!(art.cover_url(), Some("https://i.example/c.jpg"));
    assert_eq!(art.blocks().len(), 2);
    assert_eq!(art.blocks()[1].kind, None);
    let note = s.community_note.as_ref().unwrap();
    assert_eq!(
        note.entities.as_ref().unwrap()[0]
            .reference
            .as_ref()
            .unwrap()
            .url
            .as_deref(),
        Some("https://b.example/")
    );
    // Unknown members are not passed on; what is kept is as sent.
    let v = serde_json::to_value(&s).unwrap();
    assert_eq!(
        v["poll"],
        json!({"choices":[{"label":"Yes","count":3,"percentage":75.5},{}],"total_votes":4,
            "ends_at":"2026-08-13T08:14:20Z","time_left_en":"Final results"})
    );
    assert_eq!(
        v["card"],
        json!({"title":"T","url":"https://e.example/","domain":"e.example"})
    );
    assert_eq!(
        v["article"],
        json!({"id":"12","title":"A","preview_text":"P","cover_media":{"media_info":{"original_img_url":"https://i.example/c.jpg"}},
            "content":{"blocks":[{"key":"k","data":{},"type":"header-one","text":"H"},{"text":"p"}]}})
    );
    assert_eq!(
        v["community_note"],
        json!({"text":"N https://t.co/a","facets":[{"type":"url","original":"https://t.co/a","replacement":"https://n.example/"}],
            "entities":[{"ref":{"url":"https://b.example/"}},{}]})
    );
    // `null` is absent.
    let s: Status = parse(
        br#"{"id":"1","poll":null,"card":null,"article":null,"community_note":null}"#,
        "a status",
    )
    .unwrap();
    assert!(
        s.poll.is_none() && s.card.is_none() && s.article.is_none() && s.community_note.is_none()
    );
}

#[test]
fn an_attached_block_of_the_wrong_shape_names_the_field() {
    let cases: [(&[u8], &str); 5] = [
        (
            br#"{"id":"1","poll":[1]}"#,
            "`poll`: invalid type: sequence, expected a poll object",
        ),
        (
            br#"{"id":"1","poll":{"choices":{"a":1}}}"#,
            "`poll.choices`: invalid type: map, expected a sequence",
        ),
        (
            br#"{"id":"1","article":{"content":{"blocks":[7]}}}"#,
            "`article.content.blocks`: invalid type: integer `7`, expected an article block object",
        ),
        (
            br#"{"id":"1","community_note":{"entities":[{"ref":"u"}]}}"#,
            "`community_note.entities.ref`: invalid type: string \"u\", expected a note entity ref object",
        ),
        (
            br#"{"id":"1","card":"https://e.example/"}"#,
            "`card`: invalid type: string \"https://e.example/\", expected a card object",
        ),
    ];
    for (body, want) in cases {
        let e = parse::<Status>(body, "a status").unwrap_err();
        assert_eq!(
            e.message,
            format!("FxTwitter answered a status that is not the expected shape: {want}.")
        );
    }
}

#[test]
fn quotes_nested_past_the_cap_are_skipped() {
    use xmd::x::model::parse::MAX_QUOTE_NESTING;
    let mut body = r#"{"type":"status","id":"100"}"#.to_string();
    for i in (0..20).rev() {
        body = format!(r#"{{"type":"status","id":"{i}","quote":{body}}}"#);
    }
    let s: Status = parse(body.as_bytes(), "a status").unwrap();
    let mut levels = 0;
    let mut cur = s.quote.as_deref();
    while let Some(q) = cur.filter(|q| q.is_status()) {
        levels += 1;
        assert_eq!(q.id(), Some(levels.to_string().as_str()));
        cur = q.quote.as_deref();
    }
    assert_eq!(levels, MAX_QUOTE_NESTING);
    // The next level stands as a tombstone that names the cut.
    let past = cur.expect("a stand-in past the cap");
    assert_eq!(
        past.tombstone(),
        Some((
            Some("nested_too_deep"),
            Some("Quotes nested deeper than 16 levels are not read.")
        ))
    );
    assert!(past.quote.is_none());
    // The count starts over for the next document on the same thread.
    let again: Status = parse(body.as_bytes(), "a status").unwrap();
    assert_eq!(
        serde_json::to_value(&again).unwrap(),
        serde_json::to_value(&s).unwrap()
    );
    // A shape error inside a skipped level is not seen; inside a read one it is.
    let bad = |at: usize| {
        let mut b = r#"{"id":"x","author":5}"#.to_string();
        for i in (0..at).rev() {
            b = format!(r#"{{"id":"{i}","quote":{b}}}"#);
        }
        parse::<Status>(b.as_bytes(), "a status").is_ok()
    };
    assert!(!bad(MAX_QUOTE_NESTING));
    assert!(bad(MAX_QUOTE_NESTING + 1));
}
