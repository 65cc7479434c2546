//! Property tests for the renderer: arbitrary text, names and facet
//! offsets never panic, and escaping holds (no injected heading, rule,
//! front matter, list, HTML, link or code span).

use proptest::prelude::*;
use serde_json::{json, Value};
use xmd::x::render::browse::{inline_text, post_line, profile_markdown, user_line};
use xmd::x::render::escape::escape_line;
use xmd::x::render::post::display_text;
use xmd::x::render::{render_posts, RenderOptions};

/// Text with a bias toward Markdown/HTML metacharacters, newlines,
/// multi-byte and zero-width characters.
fn nasty() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("#".to_string()),
            Just("---".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("<script>".to_string()),
            Just("[x](javascript:1)".to_string()),
            Just("`".to_string()),
            Just("*".to_string()),
            Just("> ".to_string()),
            Just("1. ".to_string()),
            Just("    ".to_string()),
            Just("🦊".to_string()),
            Just("\u{200d}".to_string()),
            Just("é".to_string()),
            Just("\\".to_string()),
            Just("https://t.co/AbC".to_string()),
            Just("&amp;".to_string()),
            Just("\u{0}".to_string()),
            "[ -~]{0,8}".prop_map(|s| s),
            any::<char>().prop_map(|c| c.to_string()),
        ],
        0..24,
    )
    .prop_map(|v| v.concat())
}

/// Every `\` escapes the next char; no unescaped `[ ] ` * <` remains.
fn inert(s: &str) -> bool {
    let mut it = s.chars();
    while let Some(c) = it.next() {
        match c {
            '\\' => {
                it.next();
            }
            '[' | ']' | '`' | '*' | '<' | '\n' | '\r' => return false,
            _ => {}
        }
    }
    true
}

fn post(text: &str, name: &str, facets: Value) -> Value {
    json!({"type": "status", "id": "1800000000000000001", "url": "https://x.com/u/status/1800000000000000001",
           "text": text, "raw_text": {"text": text, "facets": facets},
           "author": {"screen_name": "u", "name": name}, "likes": 1, "reposts": 2, "replies": 3})
}

fn facets() -> impl Strategy<Value = Value> {
    prop::collection::vec((any::<i64>(), any::<i64>(), nasty(), nasty(), 0..3usize), 0..4).prop_map(|fs| {
        Value::Array(
            fs.into_iter()
                .map(|(a, b, o, r, t)| json!({"type": (["url", "media", "mention"][t]), "indices": [a, b], "original": format!("https://t.co/{o}"), "replacement": r}))
                .collect(),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn inline_text_is_inert(s in nasty()) {
        let out = inline_text(&s);
        prop_assert!(inert(&out), "{out:?}");
        prop_assert!(!out.chars().any(char::is_control));
    }

    #[test]
    fn body_lines_never_start_a_block(s in nasty()) {
        let out = escape_line(&s);
        prop_assert!(!out.contains('<'));
        if let Some(c) = out.chars().next() {
            prop_assert!(!"#>-+*=_|`~[ \t".contains(c), "{out:?}");
        }
    }

    #[test]
    fn post_and_user_lines_are_one_inert_line(text in nasty(), name in nasty(), fs in facets()) {
        let p = post(&text, &name, fs);
        let _ = display_text(&p);
        for full in [false, true] {
            let line = post_line(&p, full);
            prop_assert!(line.starts_with("- [@u](https://x.com/u): "));
            prop_assert!(line.ends_with(" [Source](https://x.com/u/status/1800000000000000001)"));
            let middle = &line["- [@u](https://x.com/u): ".len()..line.len() - " [Source](https://x.com/u/status/1800000000000000001)".len()];
            prop_assert!(inert(middle), "{middle:?}");
            let u = json!({"screen_name": "u", "name": name, "description": text, "followers": 3});
            let ul = user_line(&u, full, true);
            prop_assert!(!ul.contains('\n') && !ul.contains('\r'));
            prop_assert!(ul.starts_with("- ["));
        }
    }

    #[test]
    fn rendered_posts_have_only_our_structure(text in nasty(), name in nasty(), fs in facets(), full in any::<bool>()) {
        let p = post(&text, &name, fs);
        for format in ["markdown", "obsidian"] {
            let md = render_posts(std::slice::from_ref(&p), &RenderOptions { format, full, userinfo: "all" });
            // Skip the front matter (YAML, never rendered as Markdown).
            // The block ends at the second line that is exactly `---` (a
            // value such as `A---` does not end it).
            let body = if format == "obsidian" {
                let lines: Vec<&str> = md.lines().collect();
                let end = lines.iter().enumerate().skip(1).find(|(_, l)| **l == "---").map_or(lines.len(), |(i, _)| i + 1);
                lines[end..].join("\n")
            } else {
                md.clone()
            };
            for line in body.lines() {
                prop_assert!(line != "---", "{md}");
                if line.starts_with('#') {
                    prop_assert!(line.starts_with("## Post · 1/1 — ") || line == "### Author", "{line:?}");
                }
                let mut prev = ' ';
                for c in line.chars() {
                    prop_assert!(c != '<' || prev == '\\', "{line:?}");
                    prev = c;
                }
            }
            if format == "obsidian" {
                prop_assert_eq!(md.lines().filter(|l| *l == "---").count(), 2, "{}", md);
            }
        }
    }

    #[test]
    fn profiles_have_only_our_headings(name in nasty(), bio in nasty(), text in nasty(), full in any::<bool>()) {
        let user = json!({"screen_name": "u", "name": name, "description": bio, "location": text, "followers": 1,
                          "website": {"url": format!("https://e.com/{text}")}, "joined": text});
        let md = profile_markdown(&user, &[post(&text, &name, json!([]))], full, std::slice::from_ref(&text), None);
        prop_assert!(md.ends_with('\n') && !md.ends_with("\n\n"));
        let heads: Vec<&str> = md.lines().filter(|l| l.starts_with('#')).collect();
        prop_assert_eq!(heads.len(), 2, "{}", md);
        prop_assert!(heads[0].starts_with("# ["));
        prop_assert_eq!(heads[1], "## Latest posts");
        prop_assert!(!md.lines().any(|l| l == "---"));
    }
}
