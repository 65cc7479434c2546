//! Output linear in input (issue #32, item 2): every upstream substitution
//! list (FxTwitter `raw_text.facets` on both post paths, Community Note
//! facets, bio facets, syndication `entities.urls` / `entities.media`) is
//! applied in one pass by offsets.
//!
//! The class: substitution lists a hostile upstream controls (replacements
//! that contain their original, overlapping, reversed and out-of-range
//! offsets, up to 100,000 entries). The oracle is arithmetic: each site's
//! text is at most the input plus the sum of the replacements' lengths
//! (before escaping), and the expander's work counter is linear in text,
//! entries and replacements. The old code applied each entry with
//! `str::replace` over the whole text: 24 self-containing facets made
//! 713 MiB. With the old loop put back in the `raw_text` site, both
//! `site_outputs_stay_within_input_plus_replacements` (minimal case:
//! 1,565,065 bytes from a 1,121-byte text and 1,167 bytes of replacements)
//! and the 24-facet test fail, each after over a minute.

use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::model::expand::{expand, Edit, MAX_EXPANSION_GROWTH};
use xmd::x::model::status::Status;
use xmd::x::model::user::User;
use xmd::x::render::attached::note_text_and_links;
use xmd::x::render::browse::bio_text;
use xmd::x::render::post::{display_text, status_text};
use xmd::x::syndication::map::{to_status, Tweet};

const LINK: &str = "https://t.co/abc";

/// One generated entry: original, replacement, indices as sent.
#[derive(Debug, Clone)]
struct Entry {
    original: String,
    replacement: String,
    indices: Value,
}

/// The text: links, emoji (2 UTF-16 units), ASCII and `&amp;`.
fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop::sample::select(vec![LINK, " ", "😀", "ab", "é", "&amp;", "https://t.co/x"]),
        0..200,
    )
    .prop_map(|v| v.concat())
}

fn entry(text_units: u64) -> impl Strategy<Value = Entry> {
    let original = prop::sample::select(vec![LINK, "https://t.co/x", "https://t.co/zz"]);
    let copies = 1usize..4;
    let indices = prop_oneof![
        // In range (maybe right, maybe stale, maybe overlapping).
        (0..=text_units, 0..=16u64).prop_map(|(a, n)| json!([a, a + n])),
        // Past the end, reversed, huge, or not numbers.
        (0..=u64::MAX / 2).prop_map(|a| json!([a, a + 16])),
        (1..=text_units + 1).prop_map(|a| json!([a, a - 1])),
        Just(json!(null)),
        Just(json!(["x", 1])),
    ];
    (original, copies, indices).prop_map(|(o, k, indices)| Entry {
        original: o.to_string(),
        // Self-containing: the replacement holds its original k times.
        replacement: format!("{}/", o).repeat(k),
        indices,
    })
}

/// A text and up to `max` entries.
fn case(max: usize) -> impl Strategy<Value = (String, Vec<Entry>)> {
    text().prop_flat_map(move |t| {
        let units = t.encode_utf16().count() as u64;
        (Just(t), prop::collection::vec(entry(units), 0..max))
    })
}

/// What the five sites make of `t` and `entries` (before escaping).
fn sites(t: &str, entries: &[Entry]) -> Vec<(&'static str, String)> {
    let facets = |kind: Option<&str>| -> Vec<Value> {
        entries
            .iter()
            .map(|e| {
                let mut f = json!({"indices": e.indices, "original": e.original, "replacement": e.replacement});
                if let Some(k) = kind {
                    f["type"] = json!(k);
                }
                f
            })
            .collect()
    };
    let post = json!({"type": "status", "id": "1", "text": "", "raw_text": {"text": t, "facets": facets(Some("url"))}});
    let typed: Status = serde_json::from_value(post.clone()).unwrap();
    let note = json!({"text": t, "facets": facets(Some("url"))});
    let user: User = serde_json::from_value(json!({
        "screen_name": "a", "description": t,
        "raw_description": {"text": t, "facets": facets(None)}
    }))
    .unwrap();
    let urls: Vec<Value> = entries
        .iter()
        .map(|e| json!({"url": e.original, "expanded_url": e.replacement, "indices": e.indices}))
        .collect();
    let tweet: Tweet = serde_json::from_value(json!({
        "id_str": "1", "text": t, "entities": {"urls": urls}
    }))
    .unwrap();
    vec![
        ("raw_text (Value)", display_text(&post)),
        ("raw_text (typed)", status_text(&typed)),
        ("community note", note_text_and_links(&note).0),
        ("bio", bio_text(&user)),
        (
            "syndication",
            to_status(&tweet).unwrap()["text"]
                .as_str()
                .unwrap()
                .to_string(),
        ),
    ]
}

fn check_sites(t: &str, entries: &[Entry]) -> Result<(), TestCaseError> {
    let sum: usize = entries.iter().map(|e| e.replacement.len()).sum();
    for (site, out) in sites(t, entries) {
        prop_assert!(
            out.len() <= t.len() + sum,
            "{site}: {} bytes from a {}-byte text and {sum} bytes of replacements",
            out.len(),
            t.len()
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn site_outputs_stay_within_input_plus_replacements((t, entries) in case(64)) {
        check_sites(&t, &entries)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3))]

    /// 100,000 entries on every site.
    #[test]
    fn a_hundred_thousand_entries_stay_bounded(
        (t, mut entries) in case(2),
        filler in entry(400),
    ) {
        entries.resize(100_000, filler);
        check_sites(&t, &entries)?;
    }
}

/// The reported case: 24 facets whose replacement holds the original.
#[test]
fn twenty_four_self_containing_facets_add_their_length_once() {
    let entries: Vec<Entry> = (0..24)
        .map(|_| Entry {
            original: LINK.into(),
            replacement: format!("{LINK} {LINK}"),
            indices: json!([0, 16]),
        })
        .collect();
    for (site, out) in sites(LINK, &entries) {
        assert_eq!(out, format!("{LINK} {LINK}"), "{site}");
    }
}

/// The edits as the expander reads them.
fn edits(entries: &[Entry]) -> Vec<Edit<'_>> {
    entries
        .iter()
        .map(|e| Edit {
            indices: xmd::x::model::expand::indices(Some(&e.indices)),
            original: &e.original,
            replacement: &e.replacement,
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// The expander itself: output bound and a work counter linear in the
    /// text, the entries and the replacements (the fallback search reads
    /// at most twice the text, every other step is one per byte or entry).
    #[test]
    fn the_expanders_work_is_linear(
        (t, entries) in case(2),
        filler in entry(400),
        n in prop_oneof![0..100usize, 100_000..=100_000usize],
        big in prop::bool::ANY,
    ) {
        let mut entries = entries;
        entries.resize(n, filler);
        // A large text the entries mostly miss (the reported 25,000
        // facets on 2 MB were 3.2 s of CPU).
        let t = if big { t.repeat(2_000_000 / t.len().max(1)) } else { t };
        let es = edits(&entries);
        let x = expand(&t, 0, &es);
        let sum: usize = entries.iter().map(|e| e.replacement.len()).sum();
        prop_assert!(x.text.len() <= t.len() + sum.min(MAX_EXPANSION_GROWTH));
        prop_assert_eq!(x.applied.len(), entries.len());
        // Each applied edit's replacement is in the output once: the output
        // is the text less the applied originals plus their replacements.
        let applied: Vec<&Entry> = entries.iter().zip(&x.applied).filter(|(_, a)| **a).map(|(e, _)| e).collect();
        let want_len = t.len() + applied.iter().map(|e| e.replacement.len()).sum::<usize>()
            - applied.iter().map(|e| e.original.len()).sum::<usize>();
        prop_assert_eq!(x.text.len(), want_len);
        let bound = 8 * (t.len() + entries.len() + sum) + 64;
        prop_assert!(x.work <= bound, "work {} > {}", x.work, bound);
    }

    /// Well-formed lists (sorted, non-overlapping spans, offsets in UTF-16
    /// or in code points, or none at all) give exactly the text the
    /// generator built (the oracle: the spans replaced one by one).
    #[test]
    fn well_formed_lists_expand_exactly(
        parts in prop::collection::vec((prop::sample::select(vec!["a ", "😀", "é&amp;", ""]), prop::option::of(prop::sample::select(vec![LINK, "https://t.co/x"])), "[a-z/:.]{0,12}"), 0..30),
        unit in 0..3u8,
    ) {
        let mut t = String::new();
        let mut want = String::new();
        let mut entries = Vec::new();
        for (plain, link, repl) in &parts {
            t.push_str(plain);
            want.push_str(plain);
            if let Some(l) = link {
                let at = |s: &str| if unit == 1 { s.chars().count() } else { s.encode_utf16().count() } as u64;
                let a = at(&t);
                t.push_str(l);
                want.push_str(repl);
                entries.push(Entry {
                    original: l.to_string(),
                    replacement: repl.clone(),
                    indices: if unit == 2 { json!(null) } else { json!([a, at(&t)]) },
                });
            }
        }
        let x = expand(&t, 0, &edits(&entries));
        prop_assert_eq!(&x.text, &want);
        prop_assert!(x.applied.iter().all(|a| *a));
    }
}
