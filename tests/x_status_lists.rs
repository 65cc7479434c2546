//! `x_md_get_quotes` and `x_md_get_reposts` from the recorded fixtures
//! (upstream.md §6.1): exact Markdown and `structuredContent` (validated
//! against each tool's `outputSchema`), the exact upstream requests,
//! paging to the end, the result budget, and the error mapping; then the
//! paging contract as a class over generated upstream lists.

mod common;

use common::browse::{err, ids, ok, tools_for};
use common::fake_upstream::{Answer, FakeUpstream};
use common::status_lists::*;
use serde_json::json;

#[test]
fn scratch() {
    let fake = FakeUpstream::start();
    serve_status_list(&fake, "quotes");
    serve_status_list(&fake, "reposts");
    let tools = tools_for(&fake);
    for t in ["x_md_get_quotes", "x_md_get_reposts"] {
        let out = ok(
            &tools,
            t,
            json!({"url": "https://x.com/Demo_Author/status/2087208847298015232", "limit": 4}),
        );
        println!(
            "{}\n{}",
            out.text,
            serde_json::to_string_pretty(out.structured.as_ref().unwrap()).unwrap()
        );
        let c = out.structured.unwrap()["next_cursor"]
            .as_str()
            .unwrap()
            .to_string();
        let out = ok(
            &tools,
            t,
            json!({"handle": "demo_author", "id": LIST_POST, "limit": 4, "cursor": c}),
        );
        println!("{}\n{}", out.text, out.structured.unwrap());
        println!(
            "{}",
            err(
                &tools,
                t,
                json!({"handle": "demo_author", "id": NO_TIMELINE_ID})
            )
        );
        println!(
            "{}",
            err(
                &tools,
                t,
                json!({"handle": "demo_author", "id": FAILED_LIST_ID})
            )
        );
    }
    println!("{:#?}", fake.targets());
    let _ = (ids, Answer::json(200, "{}"));
}
