//! Helpers for tool-level tests: run a tool through `Tools` over a real
//! `HttpUpstream`, check `structuredContent` against the tool's advertised
//! `outputSchema` (JSON Schema 2020-12, strict), compare goldens.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use std::collections::HashMap;

use serde_json::{json, Value};
use xmd::x::tools::{ToolOutput, Tools};
use xmd::x::upstream::{FetchError, HttpUpstream, Upstream, UpstreamResponse};

use super::fake_upstream::{Answer, FakeUpstream};

/// Bottom cursor of `profile-statuses-page1.json` (asks for page 2).
pub const P2: &str = "DAAHCgABHPg3Rk_A_-8LAAIAAAATMjA4NjM1ODIwNjk3MTM5MjAwMAgAAwAAAAIAAA";
/// Bottom cursor of `profile-statuses-page2.json` (asks for the empty page 3).
pub const P3: &str = "DAAHCgABHPg3Rk_B_-8LAAIAAAATMjA4NTYzNzA2NjE5MTgxMDU2MAgAAwAAAAIAAA";
/// Bottom cursor of `profile-statuses-page3-empty.json` (past the end).
pub const P4: &str = "DAAHCgABHPg3Rk_C_-8LAAIAAAATMjA4NDk2MjYyMDUxMDU3NjY0MAgAAwAAAAIAAA";
/// Bottom cursor of `followers-page1.json`, URL-encoded as the tools send it.
pub const FOLLOW_NEXT: &str = "2087026217579466752%7C2087478950753226753";
/// An upstream list page with no results and no cursors (the end of a list).
pub const EMPTY_LIST: &str = r#"{"code":200,"results":[],"cursor":{"top":null,"bottom":null}}"#;

/// Serves @demo_author's profile and its three timeline pages, as the
/// profile tool requests them.
pub fn serve_demo_timeline(fake: &FakeUpstream) {
    fake.on(
        "/2/profile/demo_author",
        Answer::fixture(200, "profile.json"),
    );
    fake.on(
        "/2/profile/demo_author/statuses?count=20&with_replies=false",
        Answer::fixture(200, "profile-statuses-page1.json"),
    );
    fake.on(
        &format!("/2/profile/demo_author/statuses?cursor={P2}&count=20&with_replies=false"),
        Answer::fixture(200, "profile-statuses-page2.json"),
    );
    fake.on(
        &format!("/2/profile/demo_author/statuses?cursor={P3}&count=20&with_replies=false"),
        Answer::fixture(200, "profile-statuses-page3-empty.json"),
    );
    // Past the end X answers the empty page again (its bottom cursor is
    // the one just read: the walk ends there).
    fake.on(
        &format!("/2/profile/demo_author/statuses?cursor={P4}&count=20&with_replies=false"),
        Answer::fixture(200, "profile-statuses-page3-empty.json"),
    );
}

/// The cursor secret of [`tools_for`]: fixed, so the cursors in goldens
/// are the same on every run.
pub const TEST_CURSOR_SECRET: &[u8] = b"xmd tests: a fixed cursor secret, 32+ bytes";

/// A runner over the fake with the default cache and settings, its
/// cursors signed with [`TEST_CURSOR_SECRET`].
pub fn tools_for(fake: &FakeUpstream) -> Tools {
    Tools::new(Arc::new(HttpUpstream::new(
        &fake.base_url(),
        Duration::from_secs(5),
    )))
    .with_settings(xmd::x::budget::Settings {
        cursor_key: xmd::x::cursor::CursorKey::from_secret(TEST_CURSOR_SECRET),
        ..Default::default()
    })
}

/// Validates `structured` against the output schema of `tool`; panics
/// with every violation.
pub fn assert_valid(tool: &str, structured: &Value) {
    let schema = Tools::output_schema(tool).unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("outputSchema compiles");
    let errors: Vec<String> = v
        .iter_errors(structured)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{tool}: structuredContent fails outputSchema: {errors:#?}"
    );
}

/// Validates and runs a call.
pub fn run(tools: &Tools, tool: &str, args: Value) -> ToolOutput {
    let call = Tools::prepare(tool, Some(&args))
        .unwrap_or_else(|e| panic!("{tool} {args}: refused: {e:?}"));
    tools.run(&call)
}

/// Runs a call that must succeed; validates its `structuredContent` and
/// checks that the text equals `structuredContent.markdown`.
pub fn ok(tools: &Tools, tool: &str, args: Value) -> ToolOutput {
    let out = run(tools, tool, args);
    assert!(!out.is_error, "{tool}: unexpected error: {}", out.text);
    let s = out.structured.as_ref().expect("structuredContent");
    assert_valid(tool, s);
    // The Markdown travels once, in the text content (issue 14).
    assert_eq!(s.get("markdown"), None);
    out
}

/// Runs a call that must fail; returns the error text.
pub fn err(tools: &Tools, tool: &str, args: Value) -> String {
    let out = run(tools, tool, args);
    assert!(out.is_error, "{tool}: expected an error, got {}", out.text);
    assert_eq!(out.structured, None, "errors carry no structuredContent");
    out.text
}

fn render_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/render")
}

/// Compares `actual` with the golden file `name` (set `XMD_UPDATE_GOLDEN=1`
/// to write it instead, then review the diff).
pub fn golden(name: &str, actual: &str) {
    let p = render_dir().join(name);
    if std::env::var_os("XMD_UPDATE_GOLDEN").is_some() {
        std::fs::write(&p, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("golden {name}: {e}"));
    assert_eq!(actual, want, "golden {name}");
}

/// Like [`golden`] for JSON (compared as values, stored pretty).
pub fn golden_json(name: &str, actual: &Value) {
    let p = render_dir().join(name);
    if std::env::var_os("XMD_UPDATE_GOLDEN").is_some() {
        std::fs::write(&p, serde_json::to_string_pretty(actual).unwrap() + "\n").unwrap();
        return;
    }
    let want: Value = serde_json::from_str(
        &std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("golden {name}: {e}")),
    )
    .unwrap();
    assert_eq!(actual, &want, "golden {name}");
}

/// The ids of `structuredContent.posts` (or `users`).
pub fn ids(s: &Value, key: &str) -> Vec<String> {
    s[key]
        .as_array()
        .unwrap_or_else(|| panic!("no {key}"))
        .iter()
        .map(|v| v["id"].as_str().unwrap().to_string())
        .collect()
}

/// Walks `tool` from `args` by `next_cursor` to the end; returns every
/// result's ids (`key`: `posts` or `users`). Each result but the last links
/// its continuation; the last links none.
pub fn walk(tools: &Tools, tool: &str, args: Value, key: &str) -> Vec<Vec<String>> {
    let mut args = args;
    let mut blocks = Vec::new();
    loop {
        let out = ok(tools, tool, args.clone());
        let s = out.structured.unwrap();
        blocks.push(ids(&s, key));
        match s.get("next_cursor").and_then(Value::as_str) {
            Some(c) => {
                assert!(out.text.contains("[Continue →]("), "{}", out.text);
                args["cursor"] = json!(c);
            }
            None => {
                assert!(!out.text.contains("Continue →"), "{}", out.text);
                break;
            }
        }
        assert!(blocks.len() < 20, "runaway walk");
    }
    blocks
}

/// An in-memory upstream: exact path and query to a JSON body.
pub struct Pages(pub HashMap<String, String>);

impl Upstream for Pages {
    fn get(&self, path: &str) -> Result<UpstreamResponse, FetchError> {
        let (status, body) = match self.0.get(path) {
            Some(b) => (200, b.clone()),
            None => (404, r#"{"code":404,"message":"Not found"}"#.to_string()),
        };
        Ok(UpstreamResponse {
            status,
            retry_after: None,
            content_type: Some("application/json".into()),
            body: body.into_bytes().into(),
        })
    }
}
