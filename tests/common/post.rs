//! `x_md_get_post` helpers shared by the post tests.

use serde_json::{json, Value};
use xmd::x::tools::{ToolOutput, Tools};

/// Asserts `structuredContent` validates against `x_md_get_post`'s outputSchema.
pub fn assert_valid_output(out: &ToolOutput) {
    let schema = Tools::output_schema("x_md_get_post").unwrap();
    let v = jsonschema::draft202012::new(&schema).expect("outputSchema compiles");
    let s = out.structured.as_ref().expect("structuredContent present");
    let errors: Vec<String> = v
        .iter_errors(s)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "structuredContent fails outputSchema: {errors:#?}"
    );
}

/// Validates and runs one `x_md_get_post` call.
pub fn call(tools: &Tools, args: Value) -> ToolOutput {
    let c = Tools::prepare("x_md_get_post", Some(&args)).expect("valid arguments");
    tools.run(&c)
}

/// Runs a call that must succeed with valid `structuredContent`.
pub fn ok(tools: &Tools, args: Value) -> ToolOutput {
    let out = call(tools, args);
    assert!(!out.is_error, "unexpected error: {}", out.text);
    assert_valid_output(&out);
    out
}

/// A `/2/status` answer for post `id`, with `extra` fields merged in.
pub fn status_body(id: &str, extra: Value) -> String {
    let mut s = json!({
        "type": "status", "id": id, "url": format!("https://x.com/example_user/status/{id}"),
        "text": format!("post {id}"), "created_at": "Wed Oct 02 12:00:00 +0000 2024",
        "created_timestamp": 1727870400, "likes": 0, "reposts": 0, "quotes": 0, "replies": 0,
        "author": {"type": "profile", "id": "100", "name": "Example", "screen_name": "example_user"}
    });
    for (k, v) in extra.as_object().unwrap() {
        s[k] = v.clone();
    }
    json!({"code": 200, "status": s, "thread": null, "author": null}).to_string()
}
