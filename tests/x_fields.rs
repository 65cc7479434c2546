//! Every field accounted for (issue 27 item 7): each leaf of a fixture that
//! sets every field of FxTwitter's v2 schemas (FxEmbed's
//! `packages/atmosphere/src/types/api-schemas.ts`: `APITwitterStatus` with
//! its user, media (photos, videos, mosaic, external, broadcast), poll,
//! card, article, Community Note, translation, community, reposted_by;
//! and a quoted `APIStatusTombstone`) is either shown — in the Markdown of
//! `x_md_get_post` (`full`, `userinfo=author`) and in `structuredContent`
//! at the same path with the same value — or named in the table of what
//! is deliberately not shown, read from docs/llms-full.txt (between
//! `<!-- not-shown -->` and `<!-- /not-shown -->`). A field added to the
//! fixture, or a row taken out of the table, fails this test until the
//! field is shown or documented; a table row no fixture field uses fails
//! it too.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use common::fake_upstream::{Answer, FakeUpstream};
use common::post::ok;
use serde_json::{json, Value};
use xmd::x::render::date::iso;
use xmd::x::render::num::grouped;
use xmd::x::tools::Tools;
use xmd::x::upstream::HttpUpstream;

/// The not-shown table's paths (`status.embed_card`, `user.birthday`, …):
/// a path covers itself and everything under it.
fn not_shown_table() -> Vec<String> {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/llms-full.txt"),
    )
    .unwrap();
    let start = doc.find("<!-- not-shown -->").expect("table start");
    let end = doc.find("<!-- /not-shown -->").expect("table end");
    doc[start..end]
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .map(|l| l[..l.find('`').unwrap()].to_string())
        .collect()
}

/// A leaf of the fixture: its path by schema type (`status.…` for the post
/// and its quote, `user.…` for an author, `tombstone.…`; `[]` for a list
/// item), its concrete path from the post, and its value.
struct Leaf {
    typed: String,
    concrete: Vec<Value>,
    value: Value,
}

fn leaves(v: &Value, typed: &str, concrete: &mut Vec<Value>, out: &mut Vec<Leaf>) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, x) in m {
                let t = match (typed, k.as_str()) {
                    ("status" | "tombstone", "author") => "user".to_string(),
                    ("status", "quote") if x["type"] == "tombstone" => "tombstone".to_string(),
                    ("status", "quote") => "status".to_string(),
                    _ => format!("{typed}.{k}"),
                };
                concrete.push(json!(k));
                leaves(x, &t, concrete, out);
                concrete.pop();
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for (i, x) in a.iter().enumerate() {
                concrete.push(json!(i));
                leaves(x, &format!("{typed}[]"), concrete, out);
                concrete.pop();
            }
        }
        _ => out.push(Leaf {
            typed: typed.to_string(),
            concrete: concrete.clone(),
            value: v.clone(),
        }),
    }
}

fn at<'a>(v: &'a Value, path: &[Value]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| match k {
        Value::String(k) => v.get(k.as_str()),
        Value::Number(i) => v.get(i.as_u64()? as usize),
        _ => None,
    })
}

/// How the Markdown writes a value: the value itself (a number also
/// grouped), or for the fields it words, those words.
fn written(leaf: &Leaf) -> Vec<String> {
    let v = &leaf.value;
    let t = leaf.typed.as_str();
    match (t, v) {
        ("status.created_at" | "user.joined", Value::String(s)) => vec![iso(s).unwrap()],
        ("status.possibly_sensitive", Value::Bool(true)) => {
            vec!["Marked by X as possibly sensitive".into()]
        }
        ("user.protected", Value::Bool(b)) => {
            vec![format!("**Protected:** {}", if *b { "yes" } else { "no" })]
        }
        ("user.verification.verified", Value::Bool(b)) => {
            vec![format!("**Verified:** {}", if *b { "yes" } else { "no" })]
        }
        (_, Value::Number(n)) if t.ends_with(".duration") => {
            vec![format!(
                "duration: {} ms",
                grouped((n.as_f64().unwrap() * 1000.0) as u64)
            )]
        }
        // Styled article text: compared without its emphasis delimiters.
        ("status.article.content.blocks[].text", Value::String(s)) => {
            vec![format!("plain:{s}")]
        }
        // The note's t.co links replaced by their targets (its facets).
        // (A URL in running text is an autolink: issue 27 item 5.)
        ("status.community_note.text", Value::String(s)) => {
            vec![s.replace("https://t.co/note", "<https://example.org/source>")]
        }
        ("status.text", Value::String(s)) => {
            vec![s.replace("https://t.co/abc", "<https://t.co/abc>")]
        }
        (_, Value::String(s)) => vec![s.clone()],
        (_, Value::Number(n)) => {
            let mut w = vec![n.to_string()];
            w.extend(n.as_u64().map(grouped));
            w
        }
        _ => Vec::new(),
    }
}

/// True when `md` holds the number `n` not inside a longer run of digits
/// (`3` is not found in `2023`).
fn contains_number(md: &str, n: &str) -> bool {
    md.match_indices(n).any(|(i, _)| {
        let before = md[..i].chars().next_back();
        let after = md[i + n.len()..].chars().next();
        !before.is_some_and(|c| c.is_ascii_digit() || c == '.' || c == ',')
            && !after.is_some_and(|c| c.is_ascii_digit())
    })
}

fn post(fixture: &str, id: &str) -> (Value, String, Value) {
    let body: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/fxtwitter")
                .join(fixture),
        )
        .unwrap(),
    )
    .unwrap();
    let fake = FakeUpstream::start();
    fake.on(&format!("/2/status/{id}"), Answer::fixture(200, fixture));
    let tools = Tools::new(Arc::new(HttpUpstream::new(
        &format!("{}/", fake.base_url()),
        Duration::from_secs(5),
    )));
    let out = ok(
        &tools,
        json!({"handle": "demowriter", "id": id, "thread": "off", "full": true, "userinfo": "author"}),
    );
    let s = out.structured.unwrap();
    (body["status"].clone(), out.text, s["posts"][0].clone())
}

#[test]
fn every_field_is_shown_or_in_the_not_shown_table() {
    let table = not_shown_table();
    let mut used = BTreeSet::new();
    let mut missing = Vec::new();
    for (fixture, id) in [
        ("status-every-field.json", "2088505050505050501"),
        ("status-tombstone-quote.json", "2088505050505050502"),
    ] {
        let (status, md, data) = post(fixture, id);
        let mut all = Vec::new();
        leaves(&status, "status", &mut Vec::new(), &mut all);
        for leaf in all {
            let covering = table.iter().find(|row| {
                leaf.typed == **row
                    || leaf.typed.starts_with(&format!("{row}."))
                    || leaf.typed.starts_with(&format!("{row}["))
            });
            if let Some(row) = covering {
                used.insert(row.clone());
                continue;
            }
            let in_data = at(&data, &leaf.concrete) == Some(&leaf.value);
            let plain = md.replace("**", "").replace("~~", "");
            let in_md = written(&leaf)
                .iter()
                .any(|w| match w.strip_prefix("plain:") {
                    Some(w) => plain.contains(w),
                    None if leaf.value.is_number() => contains_number(&md, w),
                    None => md.contains(w.as_str()),
                });
            if !(in_data && in_md) {
                missing.push(format!(
                    "{} = {} (structuredContent: {in_data}, Markdown: {in_md})",
                    leaf.typed, leaf.value
                ));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "fields neither shown nor in the not-shown table:\n{}",
        missing.join("\n")
    );
    let stale: Vec<&String> = table.iter().filter(|r| !used.contains(*r)).collect();
    assert!(
        stale.is_empty(),
        "table rows no fixture field uses: {stale:?}"
    );
}
