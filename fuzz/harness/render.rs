//! The `x_md_get_post` renderer on arbitrary upstream JSON: raw bytes, or
//! the recorded fixtures mutated structurally by the input.

use std::sync::{Arc, OnceLock};

use serde_json::{json, Value};

use super::upstream::{Routes, POST_FIXTURES};
use super::Input;
use crate::x::tools::Tools;

/// Focal ids of the fixtures (status-plain, status-media-quote,
/// thread-self, conversation-reply).
const FOCAL_IDS: [&str; 4] = [
    "2087208847298015232",
    "2086794960023072769",
    "2086014813833539585",
    "2085826244871471104",
];

/// Strings planted by mutations: HTML, Markdown structure, controls.
const HOSTILE: [&str; 12] = [
    "<script>alert(1)</script>",
    "<SCRIPT src=//evil>",
    "a\n<script>x</script>\n# h",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "&amp;lt;script>",
    "```\n</details><script>",
    "---\nkey: <script>",
    "[x](javascript:alert(1))",
    "\u{0}\u{7}\r\n\t\u{85}\u{2028}",
    "",
    "   ",
    "https://x.com/a/status/1<script>",
];

/// A JSON pointer chosen by walking down from the root: each input byte
/// either stops (0) or picks a child; a leaf stops the walk.
fn walk(v: &Value, input: &mut Input<'_>) -> String {
    let mut at = String::new();
    let mut node = v;
    for _ in 0..64 {
        let len = match node {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        let b = usize::from(input.byte());
        if len == 0 || b == 0 {
            break;
        }
        let i = (b - 1) % len;
        node = match node {
            Value::Object(m) => {
                let (k, c) = m.iter().nth(i).expect("index within length");
                at.push('/');
                at.push_str(&k.replace('~', "~0").replace('/', "~1"));
                c
            }
            Value::Array(a) => {
                at.push_str(&format!("/{i}"));
                &a[i]
            }
            _ => unreachable!("leaves stop the walk"),
        };
    }
    at
}

fn remove(root: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    match root.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.remove(&last.replace("~1", "/").replace("~0", "~"));
        }
        Some(Value::Array(a)) => {
            if let Ok(i) = last.parse::<usize>() {
                if i < a.len() {
                    a.remove(i);
                }
            }
        }
        _ => {}
    }
}

/// Applies mutations read from `input` to `v`: each is an op byte, an
/// argument byte and a walk to the node (see [`walk`]).
fn mutate(v: &mut Value, input: &mut Input<'_>, count: usize) {
    for _ in 0..count {
        let op = input.byte();
        let arg = input.byte();
        let at = walk(v, input);
        if op % 10 == 4 {
            remove(v, &at);
            continue;
        }
        let Some(node) = v.pointer(&at) else {
            continue;
        };
        let new = match op % 10 {
            0 => json!(HOSTILE[usize::from(arg) % HOSTILE.len()]),
            1 => Value::Null,
            2 => match arg % 6 {
                0 => json!(-1),
                1 => json!(u64::MAX),
                2 => json!(1.5e300),
                3 => json!(0),
                4 => json!(i64::MIN),
                _ => json!(f64::from(arg) / 3.0),
            },
            3 => match arg % 3 {
                0 => json!({}),
                1 => json!([]),
                _ => json!(true),
            },
            5 => json!(String::from_utf8_lossy(input.take(usize::from(arg % 64)))),
            6 => json!([node.clone(), node.clone()]),
            7 => {
                let other = walk(v, input);
                v.pointer(&other).cloned().unwrap_or(Value::Null)
            }
            8 => json!(format!(
                "{}{}",
                HOSTILE[usize::from(arg) % HOSTILE.len()],
                node.as_str().unwrap_or("")
            )),
            _ => {
                let mut deep = node.clone();
                for _ in 0..arg % 40 {
                    deep = json!({"quote": deep, "text": "q", "type": "status", "id": "1"});
                }
                deep
            }
        };
        if let Some(node) = v.pointer_mut(&at) {
            *node = new;
        }
    }
}

/// Whether `text` holds a `<script` whose `<` is not backslash-escaped
/// (an odd number of backslashes before it makes it literal in CommonMark).
/// The post fixtures parsed once, in [`POST_FIXTURES`] order.
fn fixtures() -> &'static [Value] {
    static PARSED: OnceLock<Vec<Value>> = OnceLock::new();
    PARSED.get_or_init(|| {
        POST_FIXTURES
            .iter()
            .map(|s| serde_json::from_str(s).expect("fixtures are JSON"))
            .collect()
    })
}

fn contains_raw_script(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let bytes = lower.as_bytes();
    lower.match_indices("<script").any(|(i, _)| {
        let slashes = bytes[..i].iter().rev().take_while(|b| **b == b'\\').count();
        slashes % 2 == 0
    })
}

/// JSON (raw input bytes, or a fixture mutated by the input) served by a
/// fake upstream to `x_md_get_post` with input-chosen arguments: never a
/// panic; the text is non-empty; an error carries no structured content; a
/// success carries `structuredContent` with consistent `post_count` and
/// Markdown, the text equals that Markdown unless `format=json`, and no
/// `<script` survives unescaped in any Markdown.
///
/// Input: `args, mode, fixture choice / mutations…` or `args, mode, body`.
pub fn check_render(data: &[u8]) {
    let mut input = Input::new(data);
    let a = input.byte();
    let m = input.byte();
    let format = ["markdown", "obsidian", "json", "markdown"][usize::from(a & 3)];
    let userinfo = ["off", "author", "all", "off"][usize::from((a >> 3) & 3)];
    let replies = ["top", "recent", "off", "top"][usize::from(a >> 6)];
    let max_posts = [100, 2, 3, 10][usize::from((m >> 2) & 3)];
    let mut args = json!({
        "format": format,
        "full": a & 4 != 0,
        "userinfo": userinfo,
        "thread": if a & 0x20 != 0 { "off" } else { "full" },
        "replies": replies,
        "context": if m & 1 != 0 { "thread" } else { "full" },
        "max_posts": max_posts,
    });
    let http_status = [200, 200, 200, 200, 200, 404, 401, 500][usize::from(m >> 5)];
    let (routes, focal) = if m & 2 == 0 {
        let body = input.rest();
        (
            Routes::same(http_status, body),
            FOCAL_IDS[usize::from(a) % 4],
        )
    } else {
        let pick = input.byte();
        let count = usize::from(input.byte() % 16);
        let status_src = usize::from(pick & 1);
        let thread_src = 2 + usize::from((pick >> 1) & 1);
        let parsed = fixtures();
        let mut bodies: Vec<Value> = vec![
            parsed[status_src].clone(),
            parsed[thread_src].clone(),
            parsed[4].clone(),
        ];
        let which = usize::from(pick >> 2) % 3;
        mutate(&mut bodies[which], &mut input, count);
        let bytes: Vec<Vec<u8>> = bodies.iter().map(|b| b.to_string().into_bytes()).collect();
        let focal = FOCAL_IDS[usize::from(pick >> 4) % 4];
        (
            Routes::same(http_status, &bytes[0])
                .with_thread(&bytes[1])
                .with_conversation(&bytes[2]),
            focal,
        )
    };
    args["url"] = json!(format!("https://x.com/demo_author/status/{focal}"));
    let call = Tools::prepare("x_md_get_post", Some(&args)).expect("valid arguments");
    let tools = Tools::new(Arc::new(routes));
    let out = tools.run(&call);
    assert!(!out.text.trim().is_empty(), "empty text");
    if out.is_error {
        assert!(out.structured.is_none(), "error with structured content");
        return;
    }
    let sc = out
        .structured
        .as_ref()
        .expect("success without structuredContent");
    let posts = sc["posts"].as_array().expect("posts array");
    assert_eq!(sc["post_count"], json!(posts.len()));
    assert!(!posts.is_empty(), "success without posts");
    if format != "json" {
        let markdown = &out.text;
        assert!(
            !contains_raw_script(markdown),
            "unescaped <script in:\n{markdown}"
        );
    } else {
        assert!(out.text.starts_with("```"), "json text not fenced");
    }
}
